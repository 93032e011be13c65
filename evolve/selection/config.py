"""Selection configuration and presets.

A selection preset is a YAML file in `selectors/` (or any path) holding a `SelectionConfig`:
acceptance rule, guards, allocator of oracle rollouts, surrogates and budgets. Missing keys take
the defaults below, which are the `rrsi` preset. Single parts are switched with dotted overrides,
e.g. `{"acceptance.cost_rule": False, "allocator.name": "ucb"}`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evolve.errors import ConfigError, describe_validation
from evolve.paths import data_dir
from evolve.yamlfile import read_mapping

ALLOCATORS = ("successive_halving", "ucb", "thompson", "uniform")
AllocatorName = Literal["successive_halving", "ucb", "thompson", "uniform"]
CostScale = Literal["relative", "log"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AcceptanceConfig(_Strict):
    """RRSI Algorithm 2 (or plain greedy) acceptance of candidates against the incumbent."""

    split: Literal["validation", "evolve"] = "validation"
    """Split the decision is made on; `evolve` only for the unregularized ablation."""
    greedy: bool = False
    """Accept the candidate with the largest ΔS > δ (δ = 0 in the unregularized preset); no floor or cost rule."""
    delta: float | Literal["bootstrap"] = "bootstrap"
    """Noise band δ: a fixed value, or `bootstrap` for z·SE of the paired score difference."""
    delta_z: float = Field(2.0, gt=0)
    """z of the bootstrap noise band (δ = z·SE)."""
    bootstrap_reps: int = Field(300, ge=20, le=100_000)
    """Bootstrap resamples of the task set."""
    floor: bool = True
    """Reject candidates scoring below best-ever − δ."""
    cost_rule: bool = True
    """Gainers must satisfy ΔC ≤ β0 + β1·ΔS (ΔC = change in policy tokens per task, see `cost_scale`)."""
    cost_scale: CostScale = "relative"
    """How ΔC measures a change from the incumbent's policy tokens per task. `relative`:
    (candidate − incumbent) / incumbent, RRSI's rule (8× the tokens costs 7.0 in one step but 3.0 as
    three doublings, so a large edit is hard to take from a very cheap incumbent). `log`:
    ln(candidate / incumbent), which adds up along a path (8× costs ln 8 = 2.08 either way). The two
    agree for small changes (±10%: within 0.01)."""
    cost_anchor: Literal["incumbent", "seed"] = "incumbent"
    """What the cost rule measures a gainer's ΔC from. `incumbent`: RRSI's rule, the change from the
    incumbent's tokens paid by ΔS. `seed`: the change from the seed's tokens, paid by ΔS plus the
    incumbent's score gain over the seed on the same tasks (ΔC_seed ≤ β0 + β1·(ΔS + G)); whether a
    harness pays for its tokens then does not depend on which cheap incumbents came before it; the
    objective then prices a change in tokens in the seed's tokens, (candidate − incumbent) / seed on
    the relative scale. The within-band rules, the repair rule and the pruner's ablations still
    compare with the incumbent."""
    beta0: float = 0.10
    """Cost allowance of any gainer (in units of ΔC)."""
    beta1: float = Field(24.4, ge=0)
    """Extra ΔC allowed per unit of score gained."""
    within_band: bool = True
    """Admit candidates within the band that are cheaper, or cost-neutral with structural novelty."""
    cost_tolerance: float = Field(0.02, ge=0)
    """|ΔC| up to this counts as cost-neutral."""
    w_s: float = 100.0
    """Objective weight per unit of score (100: one point per percentage point)."""
    w_c: float = 2.0
    """Objective weight per unit of ΔC."""
    w_n: float = 0.5
    """Objective bonus per new structural component (novelty ν)."""
    beat_incumbent: bool = True
    """Admit only candidates whose objective is above the incumbent's own (0): the incumbent stands in
    the argmax too, so a within-band candidate must pay for its estimated score change with its token
    saving (or novelty) at the w_s : w_c : w_n rate. Off: RRSI's literal rule (any cheaper one)."""
    band_lower_bound: bool = True
    """With `beat_incumbent`, a within-band candidate (admitted for being cheaper, or cost-neutral and
    novel) must beat the incumbent's objective at the low end of the band, not at its point estimate:
    a tie on a small split is no evidence that nothing was lost, so a swap is taken only when even the
    pessimistic score change is paid for by its saving. The low end is ΔS − δ, where a bootstrap δ
    counts one more task answered differently than seen (same answers on all n tasks: δ = z/n).
    Off: the point estimate ΔS."""
    repair: bool = True
    """Feasibility first: when the incumbent itself fails the collapse guard on the decision tasks
    (it answers one label far beyond that label's gold share, e.g. a seed that says "no" to
    everything), a candidate that passes every guard, is not collapsed itself (no relief), loses
    nothing (ΔS ≥ 0), and gains label-balanced beyond its own noise band (the paired differences
    weighted so that each gold label counts alike, δ by the same bootstrap) is admissible (rule
    `repair`) when that balanced gain pays for its cost (ΔC ≤ β0 + β1·ΔS_bal), whatever its plain
    ΔS: a collapsed incumbent's plain score is the gold share of its label on these tasks, which
    moves with the split's label mix, not a measure of skill. The argmax still runs over every
    admissible candidate. Off: a collapsed incumbent is replaced only as any other."""
    repair_z: float | None = Field(1.0, gt=0)
    """z of the repair's label-balanced noise band (δ_bal = z·SE of the balanced gain); None: `delta_z`.
    The plain band (`delta_z`) guards a working incumbent against a lucky draw; the repair band (z = 1)
    only eases the replacement of one that already fails the collapse guard, by a candidate that
    still passes every guard, is not collapsed and loses nothing on the plain score."""
    validation_tasks: Annotated[int, Field(ge=1)] | Literal["all", "budget"] = "budget"
    """How many validation tasks decisions rest on (only with `split: validation`): `all` the whole
    split; a number, a seeded sample of that many (stratified by gold label), the same in every
    round; `budget`, the largest such sample that lets the oracle budget pay for every configured
    round's analyst batch, fresh tasks and two full evaluations (never below
    `guards.min_validation_tasks`). See `evolve/loop/decision_split.py`. The final report scores the
    whole split."""
    fresh_tasks: int = Field(60, ge=0)
    """Decide on the validation split pooled with up to this many evolve tasks outside the round's
    analyst batch (a seeded sample, the same for the incumbent and every candidate of a round; only
    with `split: validation`, 0: validation alone). Each round's winner on a fixed, reused
    validation split is the best of several on those very tasks, so validation alone overstates the
    incumbent and its challengers' gains; every candidate evaluated in full that validation does not
    rule out (guard, floor, regression) is decided on the pooled tasks by the same rules (the floor
    stays a validation rule). See `evolve/loop/pooled.py`. Fresh rollouts count against the budget."""
    pooled_rules: bool = False
    """With fresh tasks: also bound the early stop's noise band, objective, cost and repair rules
    over the pooled tasks (the fresh ones as not yet seen, δ over validation + fresh), and decide the
    leave-one-out pruner's ablations on validation pooled with the round's fresh tasks (guards on
    validation; when the budget cannot pay for the fresh tasks the edits are kept). Off: both judge
    on validation alone, with its wider band, so the early stop may rule out a candidate the pooled
    decision could admit and the pruner may remove an edit set the pooled decision accepted. Off by
    default: on the runs measured it made no run better (see the README)."""


class GuardsConfig(_Strict):
    """Non-compensatory guards: any message blocks acceptance regardless of score."""

    enabled: bool = True
    """Master switch (off in the unregularized preset)."""
    collapse_margin: float | None = 0.25
    """Block when the top predicted label's share exceeds its gold share by more than this (None: off)."""
    collapse_min_share: float = Field(0.6, ge=0, le=1)
    """...and the top predicted label's share is above this."""
    collapse_relief: float | None = Field(0.10, ge=0, le=1)
    """...unless the incumbent predicts that label on at least this much larger a share of the same
    tasks: the candidate relieves a collapse it inherited instead of causing one (None: never)."""
    max_parse_drop: float | None = 0.05
    """Largest allowed drop of the parse rate vs the incumbent (None: off)."""
    max_crash_rise: float | None = 0.05
    """Largest allowed rise of the crash rate vs the incumbent (None: off)."""
    min_validation_tasks: int = Field(20, ge=0)
    """No acceptance on fewer tasks than this."""


class AllocatorConfig(_Strict):
    """How oracle rollouts are spread over the candidates that passed the surrogate screen."""

    name: AllocatorName = "ucb"
    """successive_halving | ucb | thompson | uniform."""
    minibatch: int = Field(4, ge=1)
    """Tasks per paired minibatch (and the first rung of successive halving)."""
    trials_per_task: int = Field(1, ge=1)
    """Repeated trials per task (for policies sampled at temperature > 0)."""
    confidence: float = Field(0.99, gt=0.5, lt=1)
    """One-sided confidence of each bound used to drop a candidate (Thompson: posterior probabilities)."""
    eta: int = Field(2, ge=2)
    """Successive halving keeps 1/eta of the candidates per rung."""
    survivors: int = Field(1, ge=1)
    """Candidates handed to full evaluation at most."""


class SurrogateConfig(_Strict):
    """Cheap scores that decide which drafts get oracle rollouts."""

    rubric: bool = True
    """SkillLift rubric judged by the surrogate model."""
    learned: bool = True
    """COBRA-style learned surrogate (hashed text features, ridge head, LinUCB bonus); no LLM."""
    top_k: int = Field(4, ge=1)
    """Drafts sent to the oracle per round."""
    rubric_file: str | None = None
    """A fixed rubric (YAML) instead of a generated one."""
    alignment_threshold: float = Field(0.9, ge=-1, le=1)
    """Revise the rubric when its agreement with the oracle is below this."""
    realign_attempts: int = Field(2, ge=0, le=10)
    """Revisions tried per round."""
    repair_attempts: int = Field(2, ge=0, le=10)
    """Repairs of an invalid generated rubric before the fallback rubric is used."""
    features: Literal["hashing", "minilm"] = "hashing"
    """Text features of the learned surrogate (minilm needs the `embeddings` extra)."""
    nu: float = Field(0.1, ge=0)
    """LinUCB exploration weight ν."""
    lam: float = Field(0.03, gt=0)
    """LinUCB regularizer λ."""
    ridge: float = Field(1.0, gt=0)
    """L2 penalty of the ridge head."""


class BudgetLimits(_Strict):
    """Typed budgets of a run (None: unlimited)."""

    oracle_rollouts: int | None = Field(1500, ge=0)
    """Policy rollouts scored by the verifier (analyst, allocation and validation)."""
    surrogate_calls: int | None = Field(400, ge=0)
    """Rubric generation, judging and revision calls."""
    proposer_tokens: int | None = Field(400_000, ge=0)
    """Prompt + completion tokens of the proposer."""
    wall_clock_s: float | None = Field(None, ge=0)
    """Seconds of wall clock."""


class SelectionConfig(_Strict):
    """Everything selection needs; the defaults are the `rrsi` preset."""

    preset: str = "rrsi"
    """Name of the preset this configuration came from (informational)."""
    acceptance: AcceptanceConfig = AcceptanceConfig()
    guards: GuardsConfig = GuardsConfig()
    allocator: AllocatorConfig = AllocatorConfig()
    surrogate: SurrogateConfig = SurrogateConfig()
    budgets: BudgetLimits = BudgetLimits()


def preset_names() -> list[str]:
    """Names of the shipped selection presets."""
    return sorted(p.stem for p in data_dir("selectors").glob("*.yaml"))


def _read_preset(name_or_path: str) -> tuple[dict[str, Any], str, str]:
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        shipped = data_dir("selectors") / f"{name_or_path}.yaml"
        if not shipped.is_file() or "/" in name_or_path:
            raise ConfigError(
                f"unknown selection preset {name_or_path!r}; valid: {', '.join(preset_names())} (or a YAML path)"
            )
        path = shipped
    data = read_mapping(path, "selection sections")
    return data, str(path), path.stem


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any] | None) -> dict[str, Any]:
    """Return a copy of `data` with dotted keys (`acceptance.cost_rule`) set to their values.

    A mapping value is merged key by key (`acceptance: {fresh_tasks: 10}` sets one key and keeps
    the preset's others), the same as its dotted spelling.
    """
    out: dict[str, Any] = {k: dict(v) if isinstance(v, dict) else v for k, v in data.items()}
    for key, value in _flatten(overrides or {}).items():
        parts = key.split(".")
        node = out
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        node[parts[-1]] = value
    return out


def _flatten(overrides: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted keys for nested mappings: {"acceptance": {"delta_z": 3}} -> {"acceptance.delta_z": 3}."""
    out: dict[str, Any] = {}
    for key, value in overrides.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def load_selection_preset(name_or_path: str = "rrsi", overrides: dict[str, Any] | None = None) -> SelectionConfig:
    """Load a shipped preset by name (rrsi, unregularized, skilllift, cobra) or a YAML file, then apply overrides.

    Raises ConfigError for an unknown preset (listing the valid ones) or an invalid field (naming it).
    """
    data, source, stem = _read_preset(name_or_path)
    data.setdefault("preset", stem)
    merged = apply_overrides(data, overrides)
    try:
        return SelectionConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(describe_validation(exc, _blame(exc, source, overrides))) from None


def _blame(exc: ValidationError, source: str, overrides: dict[str, Any] | None) -> str:
    """Where a bad selection value came from: the run's `selection` overrides when they set it, else the preset."""
    fields = [".".join(str(part) for part in error["loc"]) + "." for error in exc.errors()]
    keys = [f"{key}." for key in _flatten(overrides or {})]  # a union's errors add a member to the path
    if any(field.startswith(key) for field in fields for key in keys):
        return "run option 'selection'"
    return source if not overrides else f"{source} (with overrides)"
