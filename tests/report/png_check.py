"""Minimal PNG decoder (8-bit RGB/RGBA, non-interlaced) to check that a screenshot is not blank."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def decode(path: Path) -> tuple[int, int, int, list[bytearray]]:
    """(width, height, channels, rows of raw pixel bytes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, f"unsupported PNG {header}"
    channels = 3 if color == 2 else 4
    raw, stride, rows = zlib.decompress(idat), width * channels, []
    prev = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = prev[i], prev[i - channels] if i >= channels else 0
            pred = (0, left, up, (left + up) // 2, _paeth(left, up, corner))[kind]
            line[i] = (line[i] + pred) & 0xFF
        rows.append(line)
        prev = line
    return width, height, channels, rows


def ink_stats(path: Path, step: int = 4) -> tuple[float, int]:
    """(share of sampled pixels that are not near-white, number of distinct sampled colors)."""
    width, height, channels, rows = decode(path)
    colors, dark, total = set(), 0, 0
    for y in range(0, height, step):
        row = rows[y]
        for x in range(0, width, step):
            px = tuple(row[x * channels:x * channels + 3])
            colors.add(px)
            total += 1
            dark += min(px) < 235
    return dark / total, len(colors)
