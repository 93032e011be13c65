"""Loop configuration: the proposer-side preset (budget, novelty, critic, pruner, memory).

Presets are YAML files in `proposers/` (`rrsi` is the default, `unregularized` the RRSI paper's
ablation); any field can be overridden per run, and a path to a user YAML file works as a preset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evolve.errors import ConfigError, describe_validation
from evolve.paths import data_dir
from evolve.yamlfile import read_mapping

DEFAULT_PRESET = "rrsi"
OPERATOR_NAMES = ("fewshot", "format", "control", "choice", "calibrated_fewshot", "section_removal", "skill_merge",
                  "flow", "memory", "context", "skill_disclosure")
"""Programmatic operators (see evolve.loop.operators; the last four in evolve.loop.agent_operators)."""


class LoopConfig(BaseModel):
    """Switches and parameters of one evolution round (everything but selection)."""

    model_config = ConfigDict(extra="forbid")

    preset: str = DEFAULT_PRESET
    """Name of the preset these values came from."""
    description: str = ""
    """What the preset is for."""
    llm_drafts: int = Field(2, ge=0, le=32)
    """m: LLM proposer drafts per round."""
    operator_drafts: int = Field(2, ge=0, le=32)
    """Drafts per round from the programmatic operators (no LLM)."""
    operators: list[str] = Field(default_factory=lambda: list(OPERATOR_NAMES))
    """Programmatic operators to draw from."""
    b_min: int = Field(1, ge=1, le=32)
    """Smallest edit budget (reached at t = T)."""
    b_max: int = Field(3, ge=1, le=32)
    """Edit budget of round 0 (the cosine schedule anneals from b_max to b_min)."""
    volatility: bool = False
    """Damp the budget by the volatility of per-task deltas (SkillAdam's second moment)."""
    volatility_beta: float = Field(0.9, ge=0.0, lt=1.0)
    """EMA decay of the volatility."""
    v_max: float = Field(0.25, gt=0.0)
    """Volatility at which the budget falls to b_min (binary rewards have per-task delta variance <= 1)."""
    novelty: bool = True
    """Structural novelty, stall directive, banned directions and near-duplicate filtering."""
    stall_window: int = Field(3, ge=1)
    """w: rounds over which a score gain of at most `stall_eps` counts as a stall."""
    stall_eps: float = Field(0.02, ge=0.0)
    """ε of the stall test."""
    reserved_slots: int = Field(1, ge=0)
    """Proposal slots reserved for untried components when stalled."""
    widen_drafts: int = Field(2, ge=0, le=16)
    """Extra operator drafts (and surrogate top_k) per round in a row that accepted nothing."""
    widen_rounds: int = Field(2, ge=0, le=16)
    """Most rounds in a row whose misses widen the search (caps the extra drafts)."""
    pace_drafts: int = Field(4, ge=0, le=32)
    """Most extra operator drafts (and surrogate top_k) a round gets when the rounds so far spent less
    than their share of the oracle budget: the budget left per round left, minus what a round has cost,
    buys this many more evaluated candidates at their measured cost (0: off)."""
    proposer_patience: int = Field(4, ge=0, le=100)
    """An LLM proposer whose last this-many drafts were all invalid gets no more slots (0: never)."""
    duplicate_threshold: float = Field(0.9, gt=0.0, le=1.0)
    """Text similarity at or above which an edit is a near-duplicate of an earlier one."""
    ban_rounds: int = Field(3, ge=0, le=1000)
    """Rounds a rejected direction stays banned (0: for good); earlier identical edits older than this
    are no longer duplicates either."""
    ban_similarity: float = Field(0.8, gt=0.0, le=1.0)
    """Similarity of hypothesis + normalized diff at which a text edit repeats a banned direction."""
    critic: bool = True
    """Deterministic leakage screen before any oracle rollout."""
    llm_critic: bool = True
    """LLM review against the rubric template (after the leakage screen)."""
    critic_reviews_operators: bool | None = None
    """Also send programmatic operators' edits to the LLM review. None: only when a critic model is set
    explicitly (`--critic-model`); see evolve/loop/critic.py."""
    critic_on_error: Literal["reject", "pass"] = "reject"
    """What the LLM review decides when the critic model gives no valid verdict (call failed, reply
    invalid after the repairs): `reject` (fail closed) or `pass` (fail open). Recorded with the critique."""
    critic_repair: bool = True
    """A model-written draft the critic rejects goes back to the proposer once with the reason; the
    revision is reviewed again (see evolve/loop/repair.py)."""
    leakage_ngram: int = Field(6, ge=2, le=20)
    """Word n-gram size of the leakage screen."""
    denylist: list[str] = Field(default_factory=list)
    """Extra regexes the leakage screen rejects (added to the benchmark's own)."""
    pruner: bool = True
    """Recent-yield prune set and leave-one-out ablations of accepted edits."""
    n_prune: int = Field(4, ge=1)
    """Window (rounds) of the recent yield."""
    memory: bool = True
    """Optimization memory of open/resolved problems in the proposer's context."""
    temperature: float = Field(0.7, ge=0.0, le=2.0)
    """Sampling temperature of the proposer model."""
    proposer_max_tokens: int | None = Field(None, ge=16, le=16384)
    """Most tokens of one proposer reply (None: from the proposer model, see model_budgets.py)."""
    context_chars: int | None = Field(None, ge=1000)
    """Upper bound of the proposer prompt in characters (history, memory, evidence shrink to fit).
    None: from the proposer model (6000 for the embedded model's 2048-token context)."""
    max_repairs: int = Field(2, ge=0, le=10)
    """Repair attempts for an invalid proposer or critic reply."""
    n_fail: int = Field(6, ge=0)
    """Failures shown to the proposer."""
    n_success: int = Field(3, ge=0)
    """Successes shown to the proposer."""
    evidence_chars: int | None = Field(None, ge=200)
    """Upper bound of the evidence text (None: from the proposer model)."""
    template_dir: str | None = None
    """Folder overriding the shipped proposer templates (any subset of them)."""

    @field_validator("operators")
    @classmethod
    def _operators(cls, value: list[str]) -> list[str]:
        for name in value:
            if name not in OPERATOR_NAMES:
                raise ValueError(f"unknown operator {name!r}; valid: {', '.join(OPERATOR_NAMES)}")
        return value

    @model_validator(mode="after")
    def _budget(self) -> LoopConfig:
        if self.b_max < self.b_min:
            raise ValueError(f"b_max ({self.b_max}) must be >= b_min ({self.b_min})")
        return self


def preset_names() -> list[str]:
    """Names of the shipped proposer presets."""
    return sorted(p.stem for p in data_dir("proposers").glob("*.yaml"))


def _preset_file(name_or_path: str) -> Path:
    path = Path(name_or_path).expanduser()
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ConfigError(f"proposer preset file {path} not found")
        return path
    shipped = data_dir("proposers") / f"{name_or_path}.yaml"
    if not shipped.is_file():
        raise ConfigError(f"unknown proposer preset {name_or_path!r}; valid: {', '.join(preset_names())}")
    return shipped


def load_proposer_preset(name_or_path: str = DEFAULT_PRESET, overrides: dict[str, Any] | None = None) -> LoopConfig:
    """Load a preset by name or YAML path, apply `overrides`, and validate (errors name the field)."""
    path = _preset_file(name_or_path)
    data = read_mapping(path, "loop settings")
    data.setdefault("preset", path.stem)
    unknown = sorted(set(overrides or {}) - set(LoopConfig.model_fields))
    if unknown:
        raise ConfigError(f"unknown loop setting {unknown[0]!r}; valid: {', '.join(LoopConfig.model_fields)}")
    try:
        return LoopConfig.model_validate({**data, **(overrides or {})})
    except ValidationError as exc:
        source = f"{path}" + (" (with overrides)" if overrides else "")
        raise ConfigError(describe_validation(exc, source)) from None
