"""Banned directions: semantic for text, exact for settings and draws, and they expire."""

from __future__ import annotations

from evolve.harness import Edit
from evolve.loop.bans import active, ban, match, match_draft


def section(text: str, hypothesis: str, target: str = "format") -> Edit:
    return Edit(op="add", component="system", target=target, value=text, hypothesis=hypothesis)


FORMAT = section("Answer with one word: positive or negative.", "an explicit answer format helps parsing")


def test_a_reworded_edit_with_the_same_hypothesis_repeats_the_direction():
    bans = ban([FORMAT], t=1, candidate_id="c")
    again = section("Answer with one word: positive or negative!", "an explicit answer format helps parsing",
                    target="answer-format")
    assert match(again, bans, 0.8) is not None, "a new address does not make a new direction"


def test_a_refinement_with_another_hypothesis_and_text_is_allowed():
    bans = ban([FORMAT], t=1)
    other = section("Before answering, list the words that carry an opinion and weigh them.",
                    "reasoning about opinion words fixes the missed negative reviews")
    assert match(other, bans, 0.8) is None


def test_settings_and_draws_are_exact_directions():
    samples3 = Edit(op="set", component="control", target="samples", value=3)
    bans = ban([samples3], t=0)
    assert match(samples3, bans, 0.8) is not None
    assert match(Edit(op="set", component="control", target="samples", value=5), bans, 0.8) is None
    draw = Edit(op="set", component="example", target="2", value=[{"input": "a", "output": "x"},
                                                                 {"input": "b", "output": "y"}])
    other = Edit(op="set", component="example", target="2", value=[{"input": "c", "output": "x"},
                                                                  {"input": "d", "output": "y"}])
    assert match(other, ban([draw], t=0), 0.8) is None


def test_bans_expire():
    bans = ban([FORMAT], t=1)
    assert active(bans, 4, rounds=3) and not active(bans, 5, rounds=3)
    assert active(bans, 50, rounds=0), "0 rounds: banned for good"


def _draw(*inputs: str) -> Edit:
    return Edit(op="set", component="example", target=str(len(inputs)),
                value=[{"input": i, "output": "x"} for i in inputs])


MOVE = Edit(op="set", component="control", target="examples_as", value="system")


def test_a_rejected_pair_is_banned_only_as_a_combination():
    pair = ban([_draw("a", "b"), MOVE], t=1, candidate_id="r.1.0")
    assert match_draft([MOVE, _draw("a", "b")], pair, 0.8) is not None, "the same pair in any order"
    assert match_draft([_draw("a", "b"), MOVE, FORMAT], pair, 0.8) is not None, "a draft that contains it"
    assert match_draft([_draw("c", "d"), MOVE], pair, 0.8) is None, "another draw with the same move is new"
    assert match_draft([MOVE], pair, 0.8) is None and match_draft([_draw("a", "b")], pair, 0.8) is None


def test_a_rejected_single_edit_bans_every_draft_that_contains_it():
    single = ban([MOVE], t=1, candidate_id="r.1.1")
    assert match_draft([_draw("c", "d"), MOVE], single, 0.8) is not None
    assert match_draft([_draw("c", "d")], single, 0.8) is None


def test_registration_judges_bans_and_earlier_candidates_as_wholes():
    from types import SimpleNamespace

    from evolve.loop.config import LoopConfig
    from evolve.loop.drafting import banned_reason
    from evolve.loop.state import LoopState

    state = LoopState(incumbent_id="r.0.0")
    state.bans = [b.model_dump() for b in ban([_draw("a", "b"), MOVE], t=1, candidate_id="r.1.0")]
    ctx = SimpleNamespace(state=state, t=2, loop=LoopConfig())
    previous = {"r.1.0": [_draw("a", "b"), MOVE], "r.1.1": [FORMAT]}
    assert banned_reason(ctx, [_draw("c", "d"), MOVE], previous) is None, "a new draw with the same move"
    assert "directions example:set:2:" in banned_reason(ctx, [MOVE, _draw("a", "b")], previous)
    assert "near-duplicate of an earlier candidate" in banned_reason(ctx, [FORMAT, MOVE], previous)
