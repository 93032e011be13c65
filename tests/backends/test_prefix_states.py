"""The LRU store of prompt-prefix states the embedded backend restores instead of re-evaluating."""

from __future__ import annotations

import pytest

from evolve.backends.prefix_states import PrefixStates


def test_a_stored_state_comes_back_for_exactly_its_prefix():
    states = PrefixStates(max_bytes=100)
    states.put([1, 2, 3], b"abc")
    assert states.get((1, 2, 3)) == b"abc"
    assert states.get([1, 2]) is None and states.get([1, 2, 3, 4]) is None
    assert (states.hits, states.misses) == (1, 2)


def test_the_least_recently_used_state_goes_first():
    states = PrefixStates(max_bytes=10)
    states.put([1], b"aaaa")
    states.put([2], b"bbbb")
    assert states.get([1]) == b"aaaa"  # [2] is now the least recently used
    states.put([3], b"cccc")
    assert states.get([2]) is None
    assert states.get([1]) == b"aaaa" and states.get([3]) == b"cccc"
    assert states.size_bytes == 8 and len(states) == 2


def test_replacing_a_state_counts_its_bytes_once_and_oversize_is_not_kept():
    states = PrefixStates(max_bytes=10)
    states.put([1], b"aaaa")
    states.put([1], b"aaaaaa")
    assert states.size_bytes == 6 and len(states) == 1
    states.put([2], b"x" * 11)
    assert states.get([2]) is None and states.get([1]) == b"aaaaaa"
    states.put([1], b"y" * 11)  # an oversize replacement drops the old state too
    assert len(states) == 0 and states.size_bytes == 0


def test_a_zero_budget_keeps_nothing_and_a_negative_one_is_refused():
    states = PrefixStates(max_bytes=0)
    states.put([1], b"a")
    assert states.get([1]) is None
    with pytest.raises(ValueError, match="max_bytes"):
        PrefixStates(max_bytes=-1)
