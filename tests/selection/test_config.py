from __future__ import annotations

import pytest

from evolve.errors import ConfigError
from evolve.selection.config import SelectionConfig, load_selection_preset, preset_names


def test_shipped_presets_load_and_rrsi_is_the_default():
    assert set(preset_names()) >= {"rrsi", "unregularized", "skilllift", "cobra"}
    rrsi = load_selection_preset("rrsi")
    assert rrsi.model_dump(exclude={"preset"}) == SelectionConfig().model_dump(exclude={"preset"})
    assert load_selection_preset("cobra").allocator.name == "ucb"


def test_unregularized_is_greedy_on_the_evolve_split_without_rules():
    cfg = load_selection_preset("unregularized")
    acc = cfg.acceptance
    assert (acc.split, acc.greedy, acc.delta, acc.floor, acc.cost_rule) == ("evolve", True, 0.0, False, False)
    assert not cfg.guards.enabled and cfg.allocator.name == "uniform"


def test_dotted_overrides_switch_single_parts():
    cfg = load_selection_preset("rrsi", {"acceptance.cost_rule": "false", "allocator.name": "thompson",
                                         "acceptance.delta": "0.05"})
    assert cfg.acceptance.cost_rule is False
    assert cfg.acceptance.delta == 0.05
    assert cfg.allocator.name == "thompson"
    assert cfg.acceptance.floor is True


def test_nested_overrides_merge_into_the_preset_like_dotted_ones():
    nested = load_selection_preset("unregularized", {"acceptance": {"fresh_tasks": 10}, "guards": {}})
    dotted = load_selection_preset("unregularized", {"acceptance.fresh_tasks": 10})
    assert nested == dotted
    assert nested.acceptance.greedy is True and nested.acceptance.split == "evolve", "the preset's other keys stay"
    assert nested.acceptance.fresh_tasks == 10


def test_a_bad_override_is_blamed_on_the_run_not_the_preset_file():
    for overrides in ({"acceptance.delta_z": -1}, {"acceptance": {"delta_z": -1}}):
        with pytest.raises(ConfigError) as err:
            load_selection_preset("rrsi", overrides)
        assert str(err.value) == "run option 'selection': field 'acceptance.delta_z': Input should be greater than 0"
    with pytest.raises(ConfigError, match=r"^run option 'selection': field 'acceptance.validation_tasks"):
        load_selection_preset("rrsi", {"acceptance": {"validation_tasks": 0}})  # a union field


def test_unknown_preset_lists_valid_ones():
    with pytest.raises(ConfigError, match=r"unknown selection preset 'nope'; valid: .*rrsi.*unregularized"):
        load_selection_preset("nope")


def test_unknown_allocator_lists_valid_ones():
    with pytest.raises(ConfigError) as err:
        load_selection_preset("rrsi", {"allocator.name": "greedy"})
    msg = str(err.value)
    assert "allocator.name" in msg
    for name in ("successive_halving", "ucb", "thompson", "uniform"):
        assert name in msg


def test_invalid_field_in_a_preset_file_is_named(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("acceptance:\n  beta1: -3\n")
    with pytest.raises(ConfigError, match=r"mine.yaml: field 'acceptance.beta1'"):
        load_selection_preset(str(path))
    path.write_text("guards:\n  colapse_margin: 0.2\n")
    with pytest.raises(ConfigError, match=r"field 'guards.colapse_margin': Extra inputs"):
        load_selection_preset(str(path))


def test_user_preset_file_fills_defaults(tmp_path):
    path = tmp_path / "fast.yaml"
    path.write_text("allocator:\n  minibatch: 8\n")
    cfg = load_selection_preset(str(path))
    assert cfg.preset == "fast" and cfg.allocator.minibatch == 8 and cfg.acceptance.beta0 == 0.10
