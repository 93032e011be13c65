"""Base vs fine-tuned proposer on parents held out from training (a measurement, not a unit test).

For every held-out group recorded in the trained folder's manifest (a run, parent and round), both
proposers get the group's stored proposer context and draft `--drafts` proposals through
LLMProposer (its parser and repair loop). Each valid draft is reviewed by the run's critic chain
and scored by the run's last rubric (both with the run's helper model). Prints `name: value` lines.

    python tests/perf/compare_trained_proposer.py --db DB --trained DIR [--drafts 2] [--max-tokens 256]
"""

from __future__ import annotations

import argparse
import asyncio
import random
from collections import defaultdict
from typing import Any
from unittest import mock

from evolve.backends.trained import TrainedBackend
from evolve.harness import apply_edits, render_files
from evolve.loop import proposer as proposer_mod
from evolve.loop.proposer import LLMProposer, ProposerContext
from evolve.loop.setup import build_parts
from evolve.run_config import RunConfig
from evolve.selection import rubric
from evolve.store import LineageStore
from evolve.train.dataset import build_dataset
from evolve.train.trainer import read_manifest


async def _draft(backend: Any, ctx: ProposerContext, messages: list[dict[str, str]], n: int, seed: int,
                 max_tokens: int, repairs: int) -> list[Any]:
    prop = LLMProposer(backend, max_repairs=repairs, temperature=0.7, max_tokens=max_tokens)
    with mock.patch.object(proposer_mod, "render_messages", lambda *a, **k: messages):
        return await prop.propose(ctx, n, random.Random(seed))


async def _judge(parts: Any, store: LineageStore, run_id: str, parent: Any, drafts: list[Any]) -> list[dict]:
    rows = []
    rubrics = store.rubrics(run_id)
    current = rubric.Rubric.model_validate(rubrics[-1]["content"]) if rubrics else None
    for d in drafts:
        row = {"valid": bool(d.edits), "critic": None, "rubric": None, "repairs": d.repairs}
        if d.edits:
            cand = apply_edits(parent, d.edits)
            verdict = await parts.critic.review(parent, cand, d.edits, None) if parts.critic else None
            row["critic"] = None if verdict is None else verdict.passed
            if current is not None:
                text = "\n".join(render_files(cand).values())
                row["rubric"] = (await rubric.score(parts.judge, current, [text]))[0].score
        rows.append(row)
    return rows


def _summary(name: str, rows: list[dict]) -> None:
    valid = [r for r in rows if r["valid"]]
    critic = [r for r in valid if r["critic"] is not None]
    scored = [r["rubric"] for r in valid if r["rubric"] is not None]
    print(f"{name}_drafts: {len(rows)}")
    print(f"{name}_valid_json_rate: {len(valid) / max(1, len(rows)):.3f}")
    print(f"{name}_critic_pass_rate_of_valid: {sum(r['critic'] for r in critic) / max(1, len(critic)):.3f}")
    print(f"{name}_critic_pass_rate_of_all: {sum(bool(r['critic']) for r in rows) / max(1, len(rows)):.3f}")
    print(f"{name}_rubric_mean_of_valid: {sum(scored) / len(scored):.3f}" if scored else f"{name}_rubric_mean: n/a")
    print(f"{name}_mean_repairs: {sum(r['repairs'] for r in rows) / max(1, len(rows)):.2f}")


async def main(args: argparse.Namespace) -> None:
    manifest = read_manifest(args.trained)
    store = LineageStore(args.db)
    data = build_dataset(store, manifest.runs, seed=manifest.seed, heldout=args.heldout)
    groups = sorted(set(manifest.heldout_groups))
    print(f"heldout_groups: {len(groups)}")
    window = int(manifest.config["max_length"]) - int(manifest.config["max_reply"])
    backends = {"base": TrainedBackend.from_base(manifest.base, window=window),
                "trained": TrainedBackend(args.trained)}
    results: dict[str, list[dict]] = defaultdict(list)
    for group in groups:
        sample = next((s for s in data.samples if s.group == group and s.origin == "llm"), None)
        if sample is None:
            continue
        run_id = sample.run_id
        parts = build_parts(RunConfig.model_validate(store.get_run(run_id)["config"]))
        parent = store.get_harness(sample.parent_hash)
        ctx = ProposerContext(incumbent=parent, budget=sample.budget)
        for name, backend in backends.items():
            drafts = await _draft(backend, ctx, sample.messages, args.drafts, args.seed, args.max_tokens,
                                  args.repairs)
            results[name] += await _judge(parts, store, run_id, parent, drafts)
            for d in drafts:
                status = "valid" if d.edits else f"invalid ({(d.error or '')[:120]})"
                print(f"# {group} {name}: {status}; reply starts {d.reply[:80]!r}", flush=True)
    for name in backends:
        _summary(name, results[name])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--trained", required=True)
    parser.add_argument("--drafts", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--repairs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--heldout", type=float, default=0.25, help="Must match the training run's --heldout.")
    asyncio.run(main(parser.parse_args()))
