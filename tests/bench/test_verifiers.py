"""Every verifier, including the sandbox limits of python_tests and the LLM judge with a mock backend."""

from __future__ import annotations

import asyncio

import pytest

from evolve.backends.mock import MockBackend
from evolve.bench.task import Task
from evolve.bench.verifiers import VERIFIERS, make_verifier
from evolve.errors import BenchmarkError


def task(target: str, labels: tuple[str, ...] | None = None, **meta) -> Task:
    return Task(id="t1", input="question", target=target, labels=labels, meta=meta)


def test_exact_normalizes_case_space_and_edge_punctuation():
    v = make_verifier("exact")
    assert v.score(task("Lisbon"), "  lisbon. ").reward == 1.0
    wrong = v.score(task("Lisbon"), "The city is Lisbon.")
    assert (wrong.reward, wrong.parsed) == (0.0, True)
    empty = v.score(task("Lisbon"), "  ")
    assert (empty.reward, empty.parsed) == (0.0, False)
    assert make_verifier({"name": "exact", "case_sensitive": True}).score(task("Lisbon"), "lisbon").reward == 0.0


@pytest.mark.parametrize(("prediction", "target", "labels", "expected"), [
    ("The answer is (B).", "(B)", None, "(B)"),
    ("B) because it is larger", "(B)", None, "(B)"),
    ("C", "(B)", None, "(C)"),
    ("yes, it is", "Yes", None, "Yes"),
    ("False.", "True", None, "False"),
    ("This review is negative, not positive.", "negative", ("positive", "negative"), "negative"),
    ("I think it is about SPORTS", "sports", ("sports", "business"), "sports"),
])
def test_label_extraction(prediction, target, labels, expected):
    result = make_verifier("label").score(task(target, labels), prediction)
    assert result.normalized == expected
    assert result.parsed
    assert result.reward == float(expected == target)


def test_label_unparseable_and_whole_word_only():
    v = make_verifier("label")
    result = v.score(task("positive", ("positive", "negative")), "I cannot tell from this text.")
    assert (result.reward, result.parsed, result.normalized) == (0.0, False, None)
    assert not v.score(task("Yes", None), "Yesterday it rained").parsed
    explicit = make_verifier({"name": "label", "labels": ["cat", "dog"]})
    assert explicit.score(task("dog"), "a dog!").reward == 1.0


def test_numeric_last_number_with_tolerance():
    v = make_verifier("numeric")
    assert v.score(task("1200"), "First 3 apples, so the total is 1,200.").reward == 1.0
    assert v.score(task("3"), "First 3 apples, so the total is 1,200.").reward == 0.0
    assert make_verifier({"name": "numeric", "pick": "first"}).score(task("3"), "3 then 4").reward == 1.0
    loose = make_verifier({"name": "numeric", "rel_tol": 0.01})
    assert loose.score(task("100"), "about 100.5").reward == 1.0
    assert loose.score(task("100"), "about 102").reward == 0.0
    none = v.score(task("5"), "no idea")
    assert (none.parsed, none.reward) == (False, 0.0)


def test_regex_extracts_group():
    v = make_verifier({"name": "regex", "pattern": r"answer:\s*(\w+)"})
    assert v.score(task("Oslo"), "Thinking... Answer: oslo").reward == 1.0
    assert not v.score(task("Oslo"), "Oslo").parsed
    with pytest.raises(BenchmarkError, match="invalid pattern"):
        make_verifier({"name": "regex", "pattern": "("})


def test_unknown_verifier_lists_valid_ones_and_bad_options_name_the_field():
    with pytest.raises(BenchmarkError) as info:
        make_verifier("fuzzy")
    for name in VERIFIERS:
        assert name in str(info.value)
    with pytest.raises(BenchmarkError, match="abs_tolerance"):
        make_verifier({"name": "numeric", "abs_tolerance": 1})


TESTS = "def check(candidate):\n    assert candidate(2, 3) == 5\n"


def code_task(**meta) -> Task:
    return task(TESTS, entry_point="add", prompt="def add(a, b):\n", **meta)


def test_python_tests_pass_and_fail():
    v = make_verifier("python_tests")
    good = v.score(code_task(), "```python\ndef add(a, b):\n    return a + b\n```")
    assert (good.reward, good.parsed) == (1.0, True)
    bad = v.score(code_task(), "def add(a, b):\n    return a - b\n")
    assert bad.reward == 0.0 and "AssertionError" in bad.detail
    continuation = v.score(code_task(), "    return a + b\n")
    assert continuation.reward == 1.0
    assert not v.score(code_task(), "").parsed


def test_python_tests_hanging_code_times_out():
    v = make_verifier({"name": "python_tests", "timeout_s": 1.0})
    result = v.score(code_task(), "def add(a, b):\n    while True:\n        pass\n")
    assert result.reward == 0.0
    assert "timeout" in result.detail or "signal" in result.detail


def test_python_tests_writes_outside_the_sandbox_are_contained(tmp_path):
    outside = tmp_path / "escaped.txt"
    code = (f"open({str(outside)!r}, 'w').write('x')\n"
            "def add(a, b):\n    return a + b\n")
    result = make_verifier("python_tests").score(code_task(), code)
    assert result.reward == 0.0
    assert "sandbox" in result.detail
    assert not outside.exists()


def test_python_tests_inside_writes_allowed_processes_blocked_secrets_not_inherited(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    v = make_verifier("python_tests")
    inside = "open('scratch.txt', 'w').write('ok')\ndef add(a, b):\n    return a + b\n"
    assert v.score(code_task(), inside).reward == 1.0
    spawn = "import os\nos.system('true')\ndef add(a, b):\n    return a + b\n"
    assert v.score(code_task(), spawn).reward == 0.0
    leak = "import os\nassert 'OPENAI_API_KEY' not in os.environ\ndef add(a, b):\n    return a + b\n"
    assert v.score(code_task(), leak).reward == 1.0


def test_python_tests_file_size_limit():
    v = make_verifier({"name": "python_tests", "file_mb": 1})
    big = "open('big.bin', 'wb').write(b'x' * 3_000_000)\ndef add(a, b):\n    return a + b\n"
    assert v.score(code_task(), big).reward == 0.0


def test_judge_scores_with_backend_and_handles_bad_replies():
    backend = MockBackend(['{"score": 8, "reason": "good"}', "no idea", '{"score": 30}'])
    judge = make_verifier({"name": "judge", "max_score": 10}, backend=backend)
    t = task("Water boils at 100 C at sea level.")
    assert judge.score(t, "It boils at 100 degrees.").reward == pytest.approx(0.8)
    unparsed = judge.score(t, "It boils at 100 degrees.")
    assert unparsed.reward == 0.0 and "unparseable" in unparsed.detail
    assert judge.score(t, "x").reward == 1.0  # clipped to the scale
    assert backend.history[0].role == "judge"
    assert "Water boils" in backend.history[0].messages[-1]["content"]
    assert not judge.score(t, "").parsed


def test_judge_inside_a_running_loop_and_without_backend():
    judge = make_verifier("judge", backend=MockBackend(['{"score": 5}']))

    async def inside() -> float:
        return judge.score(task("ref"), "answer").reward

    assert asyncio.run(inside()) == pytest.approx(0.5)
    with pytest.raises(BenchmarkError, match="needs a backend"):
        make_verifier("judge").score(task("ref"), "answer")
