from __future__ import annotations

import pytest

from evolve.errors import ConfigError
from evolve.loop.config import LoopConfig, load_proposer_preset, preset_names


def test_shipped_presets():
    assert {"rrsi", "unregularized"} <= set(preset_names())
    rrsi = load_proposer_preset("rrsi")
    assert (rrsi.preset, rrsi.b_min, rrsi.b_max) == ("rrsi", 1, 3)
    assert rrsi.critic and rrsi.pruner and rrsi.novelty
    unreg = load_proposer_preset("unregularized")
    assert unreg.b_min == unreg.b_max == 5
    assert not (unreg.critic or unreg.pruner or unreg.novelty or unreg.llm_critic)


def test_overrides_and_errors(tmp_path):
    assert load_proposer_preset("rrsi", {"b_max": 4, "llm_critic": False}).b_max == 4
    with pytest.raises(ConfigError, match=r"unknown proposer preset 'nope'; valid: .*rrsi.*unregularized"):
        load_proposer_preset("nope")
    with pytest.raises(ConfigError, match=r"unknown loop setting 'bmax'; valid: .*b_max"):
        load_proposer_preset("rrsi", {"bmax": 2})
    with pytest.raises(ConfigError, match="field 'b_min'"):
        load_proposer_preset("rrsi", {"b_min": 0})
    with pytest.raises(ConfigError, match=r"b_max .* must be >= b_min"):
        load_proposer_preset("rrsi", {"b_min": 3, "b_max": 2})
    with pytest.raises(ConfigError, match="unknown operator 'magic'"):
        load_proposer_preset("rrsi", {"operators": ["magic"]})


def test_user_yaml_file(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("b_max: 2\nnovelty: false\n")
    cfg = load_proposer_preset(str(path))
    assert (cfg.preset, cfg.b_max, cfg.novelty) == ("mine", 2, False)
    path.write_text("b_max: [\n")
    with pytest.raises(ConfigError, match=r"mine.yaml: invalid YAML"):
        load_proposer_preset(str(path))
    path.write_text("colour: blue\n")
    with pytest.raises(ConfigError, match=r"mine.yaml: field 'colour'"):
        load_proposer_preset(str(path))
    with pytest.raises(ConfigError, match="not found"):
        load_proposer_preset(str(tmp_path / "missing.yaml"))
    assert LoopConfig().preset == "rrsi"
