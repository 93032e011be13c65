"""Banned directions: semantic for text, exact for settings and draws, and they expire."""

from __future__ import annotations

from evolve.harness import Edit
from evolve.loop.bans import active, ban, match


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
