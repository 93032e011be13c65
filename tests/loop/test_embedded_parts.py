"""The proposer's and critic's JSON schemas drive the real embedded model's grammar."""

from __future__ import annotations

import asyncio
import random

import pytest
from loop_helpers import harness

from evolve.harness import Edit, apply_edits
from evolve.loop.critic import LLMCritic
from evolve.loop.proposer import LLMProposer, ProposerContext

pytestmark = pytest.mark.embedded


@pytest.fixture(scope="module")
def backend():
    from evolve.backends import get_backend

    return get_backend("embedded", cache=False)


def test_critic_verdict_is_valid_json_under_the_grammar(backend):
    parent = harness()
    edits = [Edit(op="add", component="system", target="tip", value="Answer with one word.", hypothesis="format")]
    verdict = asyncio.run(LLMCritic(backend, max_repairs=0, max_tokens=64).review(
        parent, apply_edits(parent, edits), edits))
    assert verdict.kind == "llm" and isinstance(verdict.passed, bool)


def test_proposer_reply_is_parsed_or_recorded(backend):
    ctx = ProposerContext(incumbent=harness(), evidence="score 0.40", budget=1, description="Parity questions",
                          labels=("even", "odd"))
    [draft] = asyncio.run(LLMProposer(backend, max_repairs=0, max_tokens=96).propose(ctx, 1, random.Random(0)))
    assert draft.reply.lstrip().startswith("{")  # the grammar forces a JSON object
    assert (draft.error is None) == bool(draft.edits)
    if draft.edits:
        apply_edits(ctx.incumbent, draft.edits)
