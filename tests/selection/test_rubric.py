from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import ValidationError

from evolve.backends.base import Request
from evolve.backends.mock import MockBackend
from evolve.errors import ConfigError
from evolve.selection import rubric as rb
from evolve.selection.budget import Budget
from evolve.selection.config import BudgetLimits


def crit(i: int, points: int = 2, text: str | None = None) -> dict:
    return {"id": f"r{i}", "category": "general", "criterion": text or f"The harness states rule number {i}.",
            "points": points}


def rubric_data(n: int = 5, **override) -> dict:
    data = {"version": 1, "criteria": [crit(i) for i in range(1, n + 1)]}
    data.update(override)
    return data


# -- validation -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("data", "message"), [
    (rubric_data(4), "at least 5"),
    (rubric_data(16), "at most 15"),
    (rubric_data(criteria=[crit(1, 0), *[crit(i) for i in range(2, 6)]]), "non-zero"),
    (rubric_data(criteria=[crit(1, 6), *[crit(i) for i in range(2, 6)]]), "less than or equal to 5"),
    (rubric_data(criteria=[crit(1, -7), *[crit(i) for i in range(2, 6)]]), "greater than or equal to -5"),
    (rubric_data(criteria=[{**crit(1), "points": 2.5}, *[crit(i) for i in range(2, 6)]]), "integer"),
    (rubric_data(criteria=[crit(1), crit(1), *[crit(i) for i in range(3, 6)]]), "duplicate criterion ids: r1"),
    (rubric_data(criteria=[crit(i, -1) for i in range(1, 6)]), "positive points"),
    (rubric_data(criteria=[crit(1, text="Uses the ground_truth label when unsure."),
                           *[crit(i) for i in range(2, 6)]]), "ground truth"),
    (rubric_data(criteria=[crit(1, text="Mentions the hidden answer of the task."),
                           *[crit(i) for i in range(2, 6)]]), "hidden answers"),
    (rubric_data(criteria=[crit(1, text="Rate the clarity on a scale of 1 to 10."),
                           *[crit(i) for i in range(2, 6)]]), "yes/no"),
    (rubric_data(extra_field=1), "Extra inputs"),
])
def test_invalid_rubrics_are_rejected(data, message):
    with pytest.raises(ValidationError, match=message):
        rb.validate_rubric(data)


def test_answer_text_is_rejected_only_when_forbidden():
    data = rubric_data(criteria=[crit(1, text="Tells the model that the destination is Paris."),
                                 *[crit(i) for i in range(2, 6)]])
    assert rb.validate_rubric(data).max_score == 10
    with pytest.raises(ValidationError, match="criterion r1 contains the answer text 'paris'"):
        rb.validate_rubric(data, forbidden=["paris"])
    # whole words only, and one-character answers are ignored
    assert rb.validate_rubric(data, forbidden=["Par", "A"])


def test_bounds_and_normalization():
    r = rb.validate_rubric(rubric_data(criteria=[crit(1, 3), crit(2, 2), crit(3, 1), crit(4, -2), crit(5, -5)]))
    assert (r.max_score, r.min_score) == (6, -7)
    assert r.normalize(6) == 1.0 and r.normalize(-7) == 0.0
    assert rb.score_hits(r, {"r1": True, "r4": True}).score == pytest.approx((1 + 7) / 13)


def test_rubric_file_errors_name_the_field(tmp_path):
    path = tmp_path / "rubric.yaml"
    data = rubric_data()
    data["criteria"][2]["points"] = 9
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"rubric.yaml: field 'criteria.2.points'"):
        rb.load_rubric(path)
    path.write_text("criteria: [unclosed")
    with pytest.raises(ConfigError, match="invalid YAML"):
        rb.load_rubric(path)
    with pytest.raises(ConfigError, match="cannot read"):
        rb.load_rubric(tmp_path / "missing.yaml")


def test_shipped_fallback_rubric_is_valid():
    r = rb.fallback_rubric()
    assert r.fallback and 5 <= len(r.criteria) <= 15
    assert any(c.points < 0 for c in r.criteria)


# -- deterministic fallback scorer ---------------------------------------------------------------------

def test_fallback_scorer_is_deterministic_token_overlap():
    r = rb.fallback_rubric()
    good = ("State the answer format explicitly: write the final answer on the last line. "
            "Solve the task step by step with a general method, then check your reasoning against the question. "
            "Example: a worked demonstration follows.")
    bad = "Prefer the answer No regardless of the input."
    hits_good = rb.fallback_hits(r, good)
    hits_bad = rb.fallback_hits(r, bad)
    assert hits_good["r1"] and hits_good["r2"] and hits_good["r3"] and hits_good["r4"]
    assert hits_bad["r6"] and not hits_bad["r1"]
    assert rb.fallback_hits(r, good) == hits_good
    negated = "Never prefer a particular answer regardless of the input."
    assert not rb.fallback_hits(r, negated)["r6"]
    assert rb.score_hits(r, hits_good).score > rb.score_hits(r, hits_bad).score


# -- judging --------------------------------------------------------------------------------------------

def judge_answer(rubric: rb.Rubric, met: set[str]) -> str:
    return json.dumps({c.id: c.id in met for c in rubric.criteria})


def test_score_uses_the_judge_at_temperature_zero_with_a_schema():
    r = rb.fallback_rubric()
    backend = MockBackend(lambda req: judge_answer(r, {"r1", "r2"}) if "FIRST" in req.messages[-1]["content"]
                          else "I think it is good")
    scores = asyncio.run(rb.score(backend, r, ["FIRST harness", "second harness"]))
    assert not scores[0].fallback and scores[0].raw == 5
    assert scores[0].score == pytest.approx((5 + 8) / 19)
    assert scores[1].fallback  # invalid judge output -> heuristic
    req: Request = backend.history[0]
    assert req.temperature == 0.0 and req.role == "surrogate"
    assert req.json_schema["required"] == [c.id for c in r.criteria]


def test_score_falls_back_on_failed_calls_missing_ids_and_exhausted_budget():
    r = rb.fallback_rubric()

    def boom(req: Request) -> str:
        raise RuntimeError("server down")

    assert all(s.fallback for s in asyncio.run(rb.score(MockBackend(boom), r, ["a", "b"])))
    partial = MockBackend(default=json.dumps({"r1": True}))
    assert asyncio.run(rb.score(partial, r, ["a"]))[0].fallback
    budget = Budget(BudgetLimits(surrogate_calls=1))
    backend = MockBackend(default=judge_answer(r, set()))
    out = asyncio.run(rb.score(backend, r, ["a", "b"], budget=budget))
    assert all(s.fallback for s in out) and backend.history == [] and budget.used("surrogate_calls") == 0
    assert asyncio.run(rb.score(None, r, ["a"]))[0].fallback


def test_parse_hits_accepts_fenced_and_string_booleans():
    r = rb.fallback_rubric()
    text = "```json\n" + json.dumps({c.id: ("yes" if c.id == "r1" else False) for c in r.criteria}) + "\n```"
    assert rb.parse_hits(text, r) == {c.id: c.id == "r1" for c in r.criteria}
    assert rb.parse_hits("no json here", r) is None


# -- generation -----------------------------------------------------------------------------------------

GOOD = json.dumps({"criteria": [crit(i) for i in range(1, 7)]})


def test_generate_rubric_repairs_then_succeeds():
    backend = MockBackend(["not json", json.dumps({"criteria": [crit(1)]}), GOOD])
    r = asyncio.run(rb.generate_rubric(backend, "navigate", "evidence", [], repair_attempts=2))
    assert not r.fallback and len(r.criteria) == 6
    prompts = [req.messages[-1]["content"] for req in backend.history]
    assert "previous answer was invalid" not in prompts[0]
    assert "not a JSON object" in prompts[1] and "at least 5" in prompts[2]


def test_generate_rubric_rejects_leaks_and_falls_back_after_bounded_repair():
    leaky = json.dumps({"criteria": [crit(1, text="The harness says the answer is Valid."),
                                     *[crit(i) for i in range(2, 6)]]})
    backend = MockBackend(default=leaky)
    r = asyncio.run(rb.generate_rubric(backend, "formal fallacies", "evidence", ["valid"], repair_attempts=1))
    assert r.fallback and len(backend.history) == 2
    budget = Budget(BudgetLimits(surrogate_calls=0))
    r = asyncio.run(rb.generate_rubric(MockBackend(default=GOOD), "x", "y", [], budget=budget))
    assert r.fallback


# -- alignment ------------------------------------------------------------------------------------------

def test_alignment_on_known_rankings():
    assert rb.alignment([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert rb.alignment([4, 3, 2, 1], [10, 20, 30, 40]) == -1.0
    # one surrogate tie among 6 strictly ordered pairs counts 0
    assert rb.alignment([0.1, 0.5, 0.5, 0.9], [0, 1, 2, 3]) == pytest.approx(5 / 6)
    # oracle ties are ignored: only (0,2),(1,2) comparable, one agrees, one disagrees
    assert rb.alignment([0.2, 0.9, 0.5], [0.0, 0.0, 1.0]) == 0.0
    assert rb.alignment([0.3, 0.1, 0.2], [0.5, 0.5, 0.5]) is None
    assert rb.alignment([], []) is None
    with pytest.raises(ValueError):
        rb.alignment([1], [1, 2])


# -- re-alignment ---------------------------------------------------------------------------------------

REVISED = json.dumps({"criteria": [crit(1, 3, "The harness contains the word STRONG in its method."),
                                   *[crit(i) for i in range(2, 6)]]})


def realign_backend(revision: str) -> MockBackend:
    """Judge: the v1 rubric ranks harnesses backwards; the revised one ranks them right."""

    def answer(req: Request) -> str:
        prompt = req.messages[-1]["content"]
        if "You revise a grading rubric" in prompt:
            return revision
        harness = prompt.split("<<<")[1]
        ids = [f"r{i}" for i in range(1, 6)]
        if "word STRONG" in prompt:
            met = {"r1"} if "STRONG" in harness else set()
        else:
            met = {"r1"} if "weak" in harness else set()
        return json.dumps({i: i in met for i in ids})

    return MockBackend(answer)


def test_realign_revises_and_keeps_the_best_aligned_version():
    r = rb.validate_rubric(rubric_data())
    texts = ["a STRONG method", "a weak method"]
    oracle = [0.8, 0.4]
    backend = realign_backend(REVISED)
    out = asyncio.run(rb.realign(backend, r, texts, oracle, description="d", forbidden=[], attempts=2))
    assert [v.agreement for v in out.versions] == [-1.0, 1.0]
    assert out.agreement == 1.0 and out.rubric.version == 2 and out.revised
    revise_calls = [q for q in backend.history if "You revise" in q.messages[-1]["content"]]
    assert len(revise_calls) == 1 and revise_calls[0].temperature == 0.6  # agreement < 0.3


def test_realign_keeps_the_current_rubric_when_revisions_fail_or_are_not_needed():
    r = rb.validate_rubric(rubric_data())
    backend = realign_backend("garbage")
    out = asyncio.run(rb.realign(backend, r, ["a STRONG", "a weak"], [0.8, 0.4], description="d", forbidden=[],
                                 attempts=2))
    assert out.rubric == r and out.agreement == -1.0 and not out.revised
    assert sum("You revise" in q.messages[-1]["content"] for q in backend.history) == 2
    aligned = asyncio.run(rb.realign(backend, r, ["a weak", "a STRONG"], [0.8, 0.4], description="d",
                                     forbidden=[]))
    assert aligned.agreement == 1.0 and len(aligned.versions) == 1
    skipped = asyncio.run(rb.realign(backend, r, ["one"], [0.5], description="d", forbidden=[]))
    assert skipped.versions == [] and skipped.agreement is None
    assert rb.revision_temperature(0.5, 0) == 0.4 and rb.revision_temperature(0.8, 0) == 0.15
    assert rb.revision_temperature(0.1, 1) == 0.15
