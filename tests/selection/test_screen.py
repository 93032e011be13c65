from __future__ import annotations

import pytest

from evolve.selection.screen import rubric_usable, screen


def test_rubric_ranks_while_it_separates_drafts_and_is_not_misaligned():
    out = screen(4, 2, rubric_scores=[0.2, 0.9, 0.5, 0.9], rubric_agreement=0.4)
    assert out.basis == "rubric" and out.order == [1, 3, 2, 0] and out.chosen == [1, 3]


def test_learned_breaks_rubric_ties():
    out = screen(3, 2, rubric_scores=[0.5, 0.9, 0.9], learned_scores=[0.9, 0.1, 0.4])
    assert out.basis == "rubric+learned" and out.chosen == [2, 1]


def test_degenerate_or_misaligned_rubric_gives_way_to_the_learned_surrogate():
    all_met = [0.58, 0.58, 0.58]  # a judge that says "true" to every criterion
    out = screen(3, 1, rubric_scores=all_met, learned_scores=[0.1, 0.7, 0.3])
    assert out.basis == "learned" and out.chosen == [1]
    out = screen(3, 1, rubric_scores=[0.9, 0.1, 0.5], rubric_agreement=-0.5, learned_scores=[0.1, 0.7, 0.3])
    assert out.basis == "learned" and out.chosen == [1]
    assert not rubric_usable([0.2, 0.8], 0.0) and rubric_usable([0.2, 0.8], None)


def test_no_usable_scores_keep_proposal_order():
    out = screen(3, 5)
    assert out.basis == "proposal order" and out.chosen == [0, 1, 2]
    with pytest.raises(ValueError, match="rubric_scores has 2 values for 3 drafts"):
        screen(3, 1, rubric_scores=[0.1, 0.2])
