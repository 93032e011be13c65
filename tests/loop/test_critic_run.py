"""The critic in whole runs: an unavailable critic model rejects model-written drafts at no oracle cost."""

from __future__ import annotations

from engine_mocks import RUN_OPTIONS, helper_answer, policy_answer

from evolve import api
from evolve.backends.mock import MockBackend
from evolve.store import LineageStore


def _critic_down(request):
    if request.role == "critic":
        raise RuntimeError("critic server unreachable")
    return helper_answer(request)


def _run(tmp_path, **proposer):
    db = str(tmp_path / "c.db")
    api.run(db=db, run_id="c", policy=MockBackend(policy_answer), helper=MockBackend(_critic_down),
            **{**RUN_OPTIONS, "rounds": 2}, proposer=proposer)
    store = LineageStore(db)
    rows = []
    for c in store.candidates("c"):
        spent = sum(1 for r in store.rollouts("c") if r.candidate_id == c.id)
        rows.append((c, store.critiques(c.id), spent))
    store.close()
    return rows


def test_an_unavailable_critic_rejects_model_written_drafts_before_any_rollout(tmp_path):
    rows = _run(tmp_path)
    reviewed = [(c, crits, spent) for c, crits, spent in rows if any(x["kind"] == "llm-unavailable" for x in crits)]
    assert reviewed, "the LLM draft reached the critic"
    for c, crits, spent in reviewed:
        [crit] = crits
        assert c.origin == "llm" and c.status == "rejected_critic" and spent == 0
        assert crit["verdict"] == "reject" and crit["details"]["on_error"] == "reject"
        assert "critic model unavailable" in c.reason and "critic server unreachable" in c.reason
    operators = [c for c, crits, _ in rows if c.origin not in ("seed", "llm", "pruner")]
    assert operators and all(c.status != "rejected_critic" for c in operators)
    assert any(c.status == "accepted" for c in operators), "operator drafts skip the LLM review and still win"


def test_critic_on_error_pass_lets_drafts_through_and_records_it(tmp_path):
    rows = _run(tmp_path, critic_on_error="pass")
    reviewed = [(c, crits, spent) for c, crits, spent in rows if c.origin == "llm" and crits
                and "llm-unavailable" in crits[0]["kind"]]
    assert reviewed and all(c.status != "rejected_critic" and spent > 0 for c, _, spent in reviewed)
    assert all(crits[0]["verdict"] == "pass" and crits[0]["details"]["llm-unavailable"]["on_error"] == "pass"
               for _, crits, _ in reviewed)
