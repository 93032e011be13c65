"""Scripted stand-ins for a capable proposer model (tests only).

They speak the Backend protocol through `MockBackend` (a callable responder) and decide what to
propose from the text of the proposer prompt they are shown, like a model would:

- `CompetentProposer` reads the evidence section: unparsable answers → an answer-format section;
  one gold label systematically answered as another label → a general rule for that label. Without
  that signal in the evidence it proposes nothing (an empty edit list, an invalid draft).
- `CheatingProposer` writes benchmark-specific edits: a lookup table of the evidence's inputs and
  answers, an evolve input copied as an example, and evolve task ids it was told about.

`truth_policy` is the matching policy: it knows every answer but says it only when the harness
carries the relevant rules (a format rule, then a rule for the label it is biased against).
Both proposers answer critic requests with a pass (the leakage screen is what must catch a cheat)
and repair requests according to `repair`.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable
from typing import Any

from evolve.backends.base import Request
from evolve.backends.mock import MockBackend

FORMAT_TEXT = "Answer with exactly one word: the label, and nothing else."
UNPARSABLE = "Let me think about this text for a moment."
_PARSED = re.compile(r"answers parsed (\d+)%")
_LABEL_ROW = re.compile(r"^- (?P<label>[\w-]+): (?P<ok>\d+)/(?P<n>\d+) \(wrong answers: (?P<wrong>.*)\)$")
_WRONG = re.compile(r"(.+?) ×(\d+)")
MISSED = 0.9
"""A gold label answered right on less than this share of its tasks counts as missed."""


def section(text: str, title: str) -> str:
    """The body of the markdown section `# title` of a prompt (empty when absent)."""
    match = re.search(rf"^# {re.escape(title)}[^\n]*\n(.*?)(?=^# |\Z)", text, re.S | re.M)
    return match.group(1) if match else ""


def prompt_text(request: Request) -> str:
    return "\n".join(m.get("content") or "" for m in request.messages if m["role"] != "assistant")


def valid_labels(text: str) -> list[str]:
    match = re.search(r"^Valid answers: (.*)\.$", text, re.M)
    return [x.strip() for x in match.group(1).split(",")] if match else []


def missed_label(evidence: str, labels: list[str]) -> tuple[str, str] | None:
    """(label, answered instead) for a gold label mostly answered as one other valid label."""
    for line in evidence.splitlines():
        row = _LABEL_ROW.match(line.strip())
        if not row or int(row["ok"]) >= MISSED * int(row["n"]):
            continue
        wrong = {k.strip(): int(v) for k, v in _WRONG.findall(row["wrong"])}
        top = max(wrong, key=wrong.get, default=None)
        if top in labels and top != row["label"] and wrong[top] * 2 >= int(row["n"]) - int(row["ok"]):
            return row["label"], top
    return None


def edit(op: str, component: str, target: Any, value: Any, hypothesis: str, **reasons: str) -> dict[str, Any]:
    return {"op": op, "component": component, "target": target, "value": value, "hypothesis": hypothesis,
            **reasons}


class CompetentProposer:
    """Rules over the evidence text (see module docstring). `calls` counts proposer requests."""

    def __init__(self) -> None:
        self.calls = 0

    def edits(self, text: str) -> list[dict[str, Any]]:
        evidence, harness = section(text, "Evidence"), section(text, "Current harness")
        labels = valid_labels(text)
        parsed = _PARSED.search(evidence)
        if parsed and int(parsed.group(1)) < 80 and "exactly one word" not in harness:
            return [edit("add", "system", "answer-format", FORMAT_TEXT,
                         "answers that cannot be parsed score zero; a strict one-word format fixes that",
                         target_failure_cluster="unparsable answers", expected_effect="parse rate near 100%",
                         specificity_risk="low: the format rule names no task")]
        missed = missed_label(evidence, labels)
        if missed and f"label-{missed[0]}" not in harness:
            label, other = missed
            rule = (f"Answer {label} when the main point of the text supports {label}, even if another part "
                    f"of it sounds {other}; do not default to {other}.")
            return [edit("add", "system", f"label-{label}", rule,
                         f"{label} tasks are systematically answered {other}; a rule for {label} fixes the bias",
                         target_failure_cluster=f"gold {label} answered {other}",
                         expected_effect=f"{label} accuracy rises", specificity_risk="low: a label-level rule")]
        return []

    def __call__(self, request: Request) -> str:
        if request.role == "critic":
            return json.dumps({"verdict": "pass", "reason": "a reusable mechanism"})
        if request.role != "proposer":
            return "{}"
        self.calls += 1
        return json.dumps({"edits": self.edits(prompt_text(request))})

    def backend(self) -> MockBackend:
        return MockBackend(self)


class CheatingProposer:
    """Benchmark-specific edits (see module docstring); slot `k` of a round uses cheat `k mod 3`."""

    def __init__(self, task_ids: Iterable[str] = ()) -> None:
        self.task_ids = list(task_ids)
        self.calls = 0

    @staticmethod
    def _pairs(evidence: str) -> list[tuple[str, str]]:
        inputs = re.findall(r"^- input: (.*)$", evidence, re.M)
        answers = re.findall(r"^ {2}expected: (.*?) \| got:", evidence, re.M)
        return list(zip(inputs, answers, strict=False))

    def edits(self, text: str, k: int) -> list[dict[str, Any]]:
        pairs = self._pairs(section(text, "Evidence"))
        if not pairs:
            return []
        cheat = k % 3
        if cheat == 0:
            table = "\n".join(f"{i} => {a}" for i, a in pairs)
            return [edit("add", "system", "known-answers", f"If the input is one of these, answer as listed:\n{table}",
                         "remember the answers of these inputs")]
        if cheat == 1:
            return [edit("add", "example", None, {"input": pairs[0][0], "output": pairs[0][1]},
                         "show this exact task with its answer")]
        ids = ", ".join(self.task_ids[:3]) or "t-000000000000"
        return [edit("add", "system", "task-ids", f"Tasks {ids} have the answer {pairs[0][1]}.",
                     "these tasks are known")]

    def __call__(self, request: Request) -> str:
        if request.role == "critic":
            return json.dumps({"verdict": "pass", "reason": "looks fine"})
        if request.role != "proposer":
            return "{}"
        k = self.calls
        self.calls += 1
        return json.dumps({"edits": self.edits(prompt_text(request), k)})

    def backend(self) -> MockBackend:
        return MockBackend(self)


REPAIR_REQUEST = "The critic rejected these edits"


class LeakThenRepair:
    """First draft: the format section plus a lookup line copied from the evidence; asked to repair
    (`fix`): the format section alone, otherwise the same leak again. `repair_requests` counts them."""

    def __init__(self, fix: bool) -> None:
        self.fix = fix
        self.repair_requests = 0

    def __call__(self, request: Request) -> str:
        if request.role == "critic":
            return json.dumps({"verdict": "pass", "reason": "looks reusable"})
        if request.role != "proposer":
            return "{}"
        fmt = edit("add", "system", "answer-format", FORMAT_TEXT, "a strict one-word format makes answers parse")
        pairs = CheatingProposer._pairs(section(prompt_text(request), "Evidence"))
        shown = pairs[:2]
        if REPAIR_REQUEST in request.messages[-1]["content"]:
            self.repair_requests += 1
            if self.fix:
                return json.dumps({"edits": [fmt]})
            shown = pairs[2:4]
        leak = edit("add", "system", "seen", "\n".join(f"{i} => {a}" for i, a in shown), "remember these")
        return json.dumps({"edits": [fmt, leak]})

    def backend(self) -> MockBackend:
        return MockBackend(self)


def truth_policy(answers: dict[str, str], biased_to: str, rule_label: str, *, hit: int = 4):
    """A policy that knows `answers` (input -> label) but answers unparsably without a format rule,
    and without a rule for `rule_label` (`answer <rule_label> when`) answers `biased_to` on the
    `rule_label` tasks except `hit` in 5 of them (a stable hash of the input decides which)."""

    def answer(request: Request) -> str:
        system = "\n".join(m["content"] for m in request.messages if m["role"] == "system").casefold()
        text = request.messages[-1]["content"]
        if "exactly one word" not in system:
            return UNPARSABLE
        truth = answers.get(text, biased_to)
        if truth == rule_label and f"answer {rule_label} when" not in system and zlib.crc32(text.encode()) % 5 >= hit:
            return biased_to
        return truth

    return answer


BENCHMARK, OOD = "sentiment-products", "ood:sentiment-restaurants"
RUN = {"benchmark": BENCHMARK, "rounds": 3, "seed": 3, "budget": 2000, "cache": False,
       "proposer": {"operator_drafts": 0}}
"""Whole runs with LLM drafts only, so what is accepted is the scripted proposer's."""


def all_answers(*names: str) -> dict[str, str]:
    from evolve.bench.benchmark import load_benchmark

    answers: dict[str, str] = {}
    for name in names:
        bench = load_benchmark(name)
        for split in bench.splits:
            answers.update({t.input: t.target for t in bench.split(split)})
    return answers


def scripted_run(db: str, scripted: Any, run_id: str = "r", **extra: Any) -> dict[str, Any]:
    """A run of `truth_policy` (biased to `positive`, blind to `negative` without its rule)."""
    from evolve import api

    policy = MockBackend(truth_policy(all_answers(BENCHMARK, "sentiment-restaurants"), "positive", "negative"))
    return api.run(db=db, run_id=run_id, policy=policy, helper=scripted.backend(), **{**RUN, **extra})


def run_table(db: str, summary: dict[str, Any], run_id: str = "r") -> dict[str, Any]:
    """Edits proposed, critic-rejected, accepted, oracle rollouts on critic-rejected candidates, ΔS."""
    from evolve.store import LineageStore

    store = LineageStore(db)
    llm = [c for c in store.candidates(run_id) if c.origin == "llm"]
    rejected = [c for c in llm if c.status == "rejected_critic" and (c.reason or "").startswith("critic")]
    return {
        "edits_proposed": sum(len(store.edits(c.id)) for c in llm),
        "critic_rejected": len(rejected),
        "critic_repairs": sum(bool(c.meta.get("repair_of")) for c in llm),
        "accepted": sum(c.status == "accepted" for c in llm),
        "rollouts_on_rejected": sum(len(store.rollouts(run_id, harness_hash=c.harness_hash)) for c in rejected),
        "dS_test": summary["best"]["test"]["score"] - summary["seed"]["test"]["score"],
        "dS_ood": summary["best"][OOD]["score"] - summary["seed"][OOD]["score"],
    }
