"""A stand-in `vllm` executable for the replica tests: `vllm serve MODEL --host H --port P ...` serves the
fake OpenAI server on P for a few seconds and logs the GPUs it was given."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

SCRIPT = """#!{python}
import os, sys
sys.path.insert(0, {here!r})
import fake_openai
args = sys.argv[1:]
port = args[args.index("--port") + 1]
print("CUDA_VISIBLE_DEVICES=" + os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>"), flush=True)
fake_openai.main([port, args[1], {seconds!r}])
"""


def write_standin(folder: Path, seconds: float = 8.0) -> Path:
    """Write the stand-in as `folder/vllm` (executable); it exits by itself after `seconds`."""
    path = folder / "vllm"
    path.write_text(SCRIPT.format(python=sys.executable, here=str(HERE), seconds=str(seconds)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def free_ports(n: int) -> int:
    """A port P with P..P+n-1 all free on 127.0.0.1."""
    import socket

    for _ in range(50):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            base = sock.getsockname()[1]
        if base + n > 65535:
            continue
        try:
            socks = []
            for p in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free port range")

