"""COBRA-style learned surrogate: text features, a ridge head on the run's oracle results, LinUCB bonus.

No LLM is involved: it ranks drafts when the rubric judge is weak or absent. Every oracle
evaluation of a harness adds one row (its text's features, its reward). The head is ridge
regression with an intercept (dual form, cheap with few rows and many features); predictions are
clipped to [0, 1] and equal the prior (mean reward, 0.5 without data) far from any observation.
The exploration bonus is LinUCB's ν·sqrt(xᵀ(λI + Σ_h x_h x_hᵀ)⁻¹x), computed through the
Woodbury identity; ν = 0.1 and λ = 0.03 by default. `rank(texts)` returns prediction + bonus.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evolve.selection.features import Featurizer, HashingFeaturizer


class LearnedSurrogate:
    """Ridge head + LinUCB bonus over text features (see module docstring)."""

    def __init__(self, featurizer: Featurizer | None = None, *, ridge: float = 1.0, nu: float = 0.1,
                 lam: float = 0.03) -> None:
        if ridge <= 0 or lam <= 0 or nu < 0:
            raise ValueError("ridge and lam must be > 0, nu >= 0")
        self.featurizer = featurizer or HashingFeaturizer()
        self.ridge, self.nu, self.lam = ridge, nu, lam
        self._x = np.zeros((0, self.featurizer.dim))
        self._y = np.zeros(0)
        self._alpha: np.ndarray | None = None
        self._ucb_inv: np.ndarray | None = None

    @property
    def n_observations(self) -> int:
        return len(self._y)

    def observe(self, texts: Sequence[str], rewards: Sequence[float]) -> None:
        """Add oracle results (one row per evaluation) and refit."""
        if len(texts) != len(rewards):
            raise ValueError("texts and rewards must have the same length")
        if not texts:
            return
        self._x = np.vstack([self._x, self.featurizer.transform(texts)])
        self._y = np.concatenate([self._y, np.asarray(rewards, dtype=float)])
        self._fit()

    def _fit(self) -> None:
        x, n = self._x, len(self._y)
        gram = x @ x.T
        self._alpha = np.linalg.solve(gram + self.ridge * np.eye(n), self._y - self._y.mean())
        self._ucb_inv = np.linalg.inv(gram + self.lam * np.eye(n))

    def prior(self) -> float:
        return float(self._y.mean()) if len(self._y) else 0.5

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """Predicted oracle reward in [0, 1]."""
        feats = self.featurizer.transform(texts)
        if self._alpha is None:
            return np.full(len(texts), self.prior())
        return np.clip(self.prior() + feats @ (self._x.T @ self._alpha), 0.0, 1.0)

    def bonus(self, texts: Sequence[str]) -> np.ndarray:
        """LinUCB bonus ν·sqrt(xᵀ(λI + XᵀX)⁻¹x)."""
        feats = self.featurizer.transform(texts)
        quad = np.einsum("ij,ij->i", feats, feats)
        if self._ucb_inv is not None:
            k = feats @ self._x.T
            quad = quad - np.einsum("ij,jk,ik->i", k, self._ucb_inv, k)
        return self.nu * np.sqrt(np.clip(quad, 0.0, None) / self.lam)

    def rank(self, texts: Sequence[str]) -> list[float]:
        """Priority of each text: predicted reward + exploration bonus (higher first)."""
        if not texts:
            return []
        return [float(v) for v in self.predict(texts) + self.bonus(texts)]
