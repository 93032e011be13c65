"""The run configuration: a YAML run file plus CLI overrides, validated and stored with the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evolve.errors import ConfigError, describe_validation
from evolve.loop.model_budgets import ModelProfile
from evolve.yamlfile import read_mapping

DEFAULT_BENCHMARK = "extract-city"
NO_MODEL = "none"
"""`proposer_model: none`: no LLM proposer (the programmatic operators get every slot)."""
PRESETS = ("rrsi", "unregularized", "skilllift", "cobra")


class RunConfig(BaseModel):
    """Everything that determines a run. Stored (resolved) with the run so it can be resumed."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str = DEFAULT_BENCHMARK
    """Benchmark: shipped name, folder or task file."""
    ood: list[str] | None = None
    """Out-of-distribution suites to report on (default: the benchmark's declared siblings)."""
    harness: str = "minimal"
    """Seed harness: shipped name, folder or JSON bundle."""
    model: str = "embedded"
    """Policy model string."""
    api_base: str | None = None
    """API base URL of the policy model (stored with credentials masked)."""
    proposer_model: str | None = None
    """Proposer model (default: the policy's model and API base; `none`: no LLM proposer, the
    operators get every slot). Roles: see evolve/roles.py."""
    proposer_api_base: str | None = None
    """API base URL of the proposer model."""
    critic_model: str | None = None
    """Model of the critic's LLM review (default: the proposer's)."""
    critic_api_base: str | None = None
    """API base URL of the critic model."""
    judge_model: str | None = None
    """Model of the rubric surrogate and of the `judge` verifier (default: the critic's)."""
    judge_api_base: str | None = None
    """API base URL of the judge model."""
    preset: str = "rrsi"
    """Preset spanning proposer, critic, pruner and selection."""
    rounds: int = Field(5, ge=1, le=1000)
    """Evolution rounds T."""
    budget: int | None = Field(None, ge=10)
    """Oracle rollouts available to the evolution rounds (final reporting is extra); default: the
    preset's `budgets.oracle_rollouts` (1500 in the shipped presets)."""
    seed: int = 0
    """Seed of every random choice of the run (drafts, allocation order, bootstrap)."""
    split_seed: int | None = None
    """Seed of the benchmark's split shuffle (default: the benchmark's own, as `evolve eval` uses);
    the run stores its split task ids, and `evolve eval --run RUN` reuses them."""
    evolve_batch: int = Field(24, ge=1)
    """Evolve-split tasks the analyst rolls the incumbent out on each round."""
    trials: int | None = Field(None, ge=1, le=16)
    """Trials per task of every oracle rollout (default: the preset's `allocator.trials_per_task`)."""
    concurrency: int = Field(4, ge=1, le=256)
    """Concurrent model requests."""
    report_limit: int | None = Field(None, ge=1)
    """Cap on tasks per split in the final seed-vs-best report (None: whole splits)."""
    profile: ModelProfile | None = None
    """The proposer model's limits where litellm's model map does not know it (`context_tokens`,
    `max_output_tokens`); the proposer budgets derive from it (evolve/loop/model_budgets.py)."""
    proposer: dict[str, Any] = Field(default_factory=dict)
    """Overrides of the proposer preset (dotted keys allowed)."""
    selection: dict[str, Any] = Field(default_factory=dict)
    """Overrides of the selection preset (dotted keys allowed)."""
    cache: bool = True
    """Use the persistent response cache."""
    tools: list[str | dict[str, Any]] = Field(default_factory=list)
    """Tool implementations this run admits besides the built-ins and the benchmark's: `python:<module>:<function>`
    or `{implementation, path}` (a folder put on the sandbox's import path); `builtin:bash` allows the shell.
    Harness tools may name only admitted implementations; their calls run in the sandbox."""
    executor: Literal["local", "ray"] = "local"
    """Where oracle rollouts run: in this process, or on Ray workers (the `ray` extra)."""
    ray_address: str | None = None
    """Ray cluster to join (`HOST:6379`, `ray://HOST:10001`, `auto`); None: start a local cluster."""
    workers: int = Field(8, ge=1, le=4096)
    """Rollout workers (Ray actors) of `executor: ray`; each has `concurrency` requests in flight."""

    @field_validator("tools")
    @classmethod
    def _tools(cls, value: list[str | dict[str, Any]]) -> list[str | dict[str, Any]]:
        from evolve.bench.tools import ToolSpec

        for spec in value:
            ToolSpec.model_validate({"implementation": spec} if isinstance(spec, str) else spec)
        return value

    def roles(self) -> dict[str, Any]:
        """The resolved roles (policy, proposer, critic, judge) as `evolve.roles.RoleSpec`s."""
        from evolve.roles import resolve_roles

        return resolve_roles(self)


def load_run_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML run file into a dict (validated later together with the CLI overrides)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: run file not found")
    data = read_mapping(path, "run options")
    return data


def _tool_path(spec: Any, base: Path) -> Any:
    """A run file's tool registration with its `path` made absolute (relative to the run file)."""
    if isinstance(spec, dict) and isinstance(spec.get("path"), str) and not Path(spec["path"]).is_absolute():
        return {**spec, "path": str((base / spec["path"]).resolve())}
    return spec


def make_config(file: str | Path | None = None, **overrides: Any) -> RunConfig:
    """Merge a run file with overrides (None values are ignored) and validate."""
    data: dict[str, Any] = load_run_file(file) if file else {}
    if file and isinstance(data.get("tools"), list):
        data["tools"] = [_tool_path(spec, Path(file).parent) for spec in data["tools"]]
    data.update({k: v for k, v in overrides.items() if v is not None})
    source = str(file) if file else "run options"
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation(exc, source)) from None
    if config.preset not in PRESETS and not Path(config.preset).exists():
        raise ConfigError(f"{source}: unknown preset {config.preset!r}; valid: {', '.join(PRESETS)}")
    return config
