"""Assembling a run's parts from its configuration: presets, benchmark, seed harness, backends."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve.backends import get_backend
from evolve.backends.base import scores_choices
from evolve.backends.metered import MeteredBackend
from evolve.bench.benchmark import Benchmark, load_benchmark
from evolve.bench.tools import attach_tools
from evolve.errors import ConfigError, EvolveError
from evolve.executors import Executor, WorkerSpec, make_executor
from evolve.harness import Harness, load_harness
from evolve.loop import decision_split, model_budgets
from evolve.loop.config import LoopConfig, load_proposer_preset
from evolve.loop.critic import CriticChain, LeakageCritic, LLMCritic
from evolve.loop.operators import OperatorProposer
from evolve.loop.proposer import LLMProposer
from evolve.loop.tool_critic import ToolCritic
from evolve.paths import data_dir, resolve_named
from evolve.roles import ROLE_ORDER, RoleSpec, distinct, public_roles, role_backends
from evolve.run_config import NO_MODEL, RunConfig
from evolve.selection.config import SelectionConfig, load_selection_preset


@dataclass
class RunParts:
    """Everything a run needs, built once from its RunConfig."""

    config: RunConfig
    loop: LoopConfig
    selection: SelectionConfig
    benchmark: Benchmark
    seed_harness: Harness
    roles: dict[str, RoleSpec]
    """The resolved model of each role (policy, proposer, critic, judge); see evolve/roles.py."""
    backends: dict[str, MeteredBackend]
    """One metered backend per role; roles with the same (model, API base) share one."""
    proposer: LLMProposer | None
    operators: OperatorProposer | None
    critic: CriticChain | None
    executor: Executor | None = None
    """Where oracle rollouts run (None: in this process, on `policy`)."""
    budgets: dict[str, Any] | None = None
    """The resolved proposer budgets and where they came from (see model_budgets.py)."""
    ood: list[Benchmark] = field(default_factory=list)
    """The out-of-distribution suites of the final report, loaded up front (see `load_ood`)."""

    @property
    def policy(self) -> MeteredBackend:
        """Backend of the policy (oracle rollouts)."""
        return self.backends["policy"]

    @property
    def judge(self) -> MeteredBackend:
        """Backend of the rubric surrogate and of the `judge` verifier."""
        return self.backends["judge"]

    def metered(self) -> list[MeteredBackend]:
        """The distinct backends, each once (to drain their usage)."""
        return distinct(self.backends)

    @property
    def trials(self) -> int:
        """Trials per task of every oracle rollout of the run (one count for oracle, allocator, acceptance)."""
        return self.selection.allocator.trials_per_task

    @property
    def budget(self) -> int | None:
        """The run's oracle-rollout budget."""
        return self.selection.budgets.oracle_rollouts


def proposer_preset_for(preset: str) -> str:
    """The proposer preset of a run preset (selection-only presets use the rrsi proposer)."""
    if Path(preset).exists():
        return "rrsi"
    shipped = {p.stem for p in data_dir("proposers").glob("*.yaml")}
    return preset if preset in shipped else "rrsi"


def selection_preset_for(preset: str) -> str:
    shipped = {p.stem for p in data_dir("selectors").glob("*.yaml")}
    if preset in shipped or Path(preset).exists():
        return preset
    raise ConfigError(f"unknown preset {preset!r}; valid: {', '.join(sorted(shipped))}")


def build_parts(config: RunConfig, *, policy: Any = None, helper: Any = None,
                backends: dict[str, Any] | None = None) -> RunParts:
    """Load presets, benchmark and seed harness and create the role backends.

    Backend objects can be injected (tests, the Python API): `policy` for the policy, `helper` for
    every other role, `backends` per role (`proposer`, `critic`, `judge`; they win over `helper`).
    A role without an injected backend is built from its model string, or shares the backend of the
    role it inherits from (see evolve/roles.py).
    """
    loop, budgets = load_loop(config)
    selection = load_selection_preset(selection_preset_for(config.preset), _selection_overrides(config))
    benchmark = load_benchmark(config.benchmark, seed=config.split_seed)
    check_acceptance_tasks(config, benchmark, selection)
    check_budget(config, benchmark, selection)
    registry = attach_tools(benchmark.verifier, config.tools, "run option 'tools'")
    seed = load_harness(resolve_named("harnesses", config.harness, marker="harness.yaml"))
    ood = load_ood(config, benchmark)
    roles = config.roles()
    injected = {"policy": policy, **dict.fromkeys(ROLE_ORDER[1:], helper), **(backends or {})}
    role_backend = role_backends(roles, lambda spec: get_backend(
        spec.model, api_base=spec.api_base, cache=config.cache, concurrency=config.concurrency), injected)
    for suite in (benchmark, *ood):
        bind_judge(suite, role_backend["judge"])
    labels = tuple(benchmark.labels or ())
    demo = benchmark.split("demo") if "demo" in benchmark.splits else []
    proposer = None
    if loop.llm_drafts > 0 and config.proposer_model != NO_MODEL:
        proposer = LLMProposer(role_backend["proposer"], template_dir=loop.template_dir, max_repairs=loop.max_repairs,
                               temperature=loop.temperature, max_tokens=loop.proposer_max_tokens,
                               max_context_chars=loop.context_chars)
    operators = OperatorProposer(demo, labels, operators=loop.operators,
                                 scores_choices=scores_choices(role_backend["policy"])) \
        if loop.operator_drafts > 0 or proposer is None else None
    critic = None
    if loop.critic:
        chain: list[Any] = [ToolCritic(registry), LeakageCritic(
            benchmark.split("evolve"), [*benchmark.denylist, *loop.denylist], labels, demo_tasks=demo,
            ngram=loop.leakage_ngram)]
        if loop.llm_critic:
            chain.append(LLMCritic(role_backend["critic"], max_repairs=loop.max_repairs,
                                   description=benchmark.description, on_error=loop.critic_on_error,
                                   review_operators=_reviews_operators(loop, config)))
        critic = CriticChain(chain)
    return RunParts(config, loop, selection, benchmark, seed, roles, role_backend, proposer, operators, critic,
                    build_executor(config, role_backend["policy"], injected=policy is not None), budgets, ood)


def load_ood(config: RunConfig, benchmark: Benchmark) -> list[Benchmark]:
    """The run's out-of-distribution suites (the run's `ood` list, else the benchmark's own siblings),
    loaded before anything is stored or evaluated, so that a wrong name fails at once, not in the final
    report after the whole evolution."""
    refs, where = (config.ood, "run option 'ood'") if config.ood is not None \
        else (list(benchmark.ood), f"benchmark {benchmark.name!r}, field 'ood'")
    suites = []
    for ref in refs:
        try:
            suites.append(load_benchmark(ref))
        except EvolveError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return suites


def load_loop(config: RunConfig) -> tuple[LoopConfig, dict[str, Any]]:
    """The run's loop settings with the proposer budgets resolved from the proposer model."""
    loop = load_proposer_preset(proposer_preset_for(config.preset), config.proposer)
    model = config.roles()["proposer"].model if config.proposer_model != NO_MODEL and loop.llm_drafts else None
    return model_budgets.resolve(loop, model, config.profile)


def _reviews_operators(loop: LoopConfig, config: RunConfig) -> bool:
    """Operator drafts get the LLM review when the preset asks for it, or by default (None) when a
    critic model was set explicitly (see evolve/loop/critic.py for why not otherwise)."""
    if loop.critic_reviews_operators is not None:
        return loop.critic_reviews_operators
    return config.critic_model is not None


def bind_judge(benchmark: Benchmark, backend: Any) -> None:
    """Give a `judge` verifier without a backend of its own the judge role's backend."""
    verifier = benchmark.verifier
    if getattr(verifier, "name", "") == "judge" and getattr(verifier, "backend", False) is None:
        verifier.backend = backend  # type: ignore[attr-defined]


def build_executor(config: RunConfig, policy: MeteredBackend, *, injected: bool = False) -> Executor:
    """The executor of `config.executor`; a Ray worker builds its backend from the model string, so an
    injected backend object can only run locally."""
    if config.executor == "ray" and injected:
        raise ConfigError("executor 'ray' builds each worker's backend from the model string; "
                          "an injected backend object runs only with executor 'local'")
    spec = WorkerSpec(model=config.model, api_base=config.api_base, concurrency=config.concurrency,
                      cache=config.cache)
    return make_executor(config.executor, policy, spec, address=config.ray_address, workers=config.workers)


def decision_tasks(benchmark: Benchmark, selection: SelectionConfig, config: RunConfig) -> int:
    """How many tasks a decision is taken on: the run's validation tasks (`decision_split.size`),
    or the analyst's evolve batch."""
    if selection.acceptance.split == "evolve":
        return min(config.evolve_batch, len(benchmark.split("evolve")))
    return decision_split.size(benchmark, selection, config)


def round_minimum(benchmark: Benchmark, selection: SelectionConfig, config: RunConfig) -> dict[str, int]:
    """Oracle rollouts one round needs at the least to accept anything: the analyst's batch, the
    incumbent on the decision tasks, one candidate fully evaluated there, and with
    `acceptance.fresh_tasks` both on the fresh evolve tasks pooled into the decision (tasks × trials)."""
    acc, trials = selection.acceptance, selection.allocator.trials_per_task
    batch = min(config.evolve_batch, len(benchmark.split("evolve")))
    n = decision_tasks(benchmark, selection, config)
    incumbent = 0 if acc.split == "evolve" else n
    parts = {"analyst": batch * trials, "incumbent": incumbent * trials, "candidate": n * trials}
    if fresh := decision_split.fresh_count(benchmark, selection, batch):
        parts["fresh"] = 2 * fresh * trials
    return {**parts, "total": sum(parts.values())}


def check_budget(config: RunConfig, benchmark: Benchmark, selection: SelectionConfig) -> None:
    """Refuse a budget below one round's minimum, naming the minimum (ConfigError)."""
    budget = selection.budgets.oracle_rollouts
    need = round_minimum(benchmark, selection, config)
    if budget is not None and budget < need["total"]:
        fresh = f" + both on the fresh evolve tasks {need['fresh']}" if need.get("fresh") else ""
        raise ConfigError(
            f"budget {budget} oracle rollouts buys no complete round: one round needs at least {need['total']} "
            f"(analyst batch {need['analyst']} + incumbent on the {selection.acceptance.split} split "
            f"{need['incumbent']} + one candidate {need['candidate']}"
            f"{fresh}); raise --budget to {need['total']} or more, "
            f"or lower --evolve-batch")


def check_acceptance_tasks(config: RunConfig, benchmark: Benchmark, selection: SelectionConfig) -> None:
    """Refuse a run whose decisions are on fewer tasks than the guard `min_validation_tasks` allows: it
    could accept nothing, whatever it spent (ConfigError naming both counts and the setting)."""
    guards, acc = selection.guards, selection.acceptance
    if not guards.enabled or not guards.min_validation_tasks:
        return
    n = decision_tasks(benchmark, selection, config)
    if n >= guards.min_validation_tasks:
        return
    if acc.split == "validation" and n < len(benchmark.split("validation")):
        raise ConfigError(
            f"selection acceptance.validation_tasks: decisions on {n} of the validation split's "
            f"{len(benchmark.split('validation'))} tasks, below guards.min_validation_tasks "
            f"({guards.min_validation_tasks}), so no candidate could be accepted; set it to "
            f"{guards.min_validation_tasks} or more, `budget` or `all`")
    where = f"its {acc.split} split has {n}" if acc.split != "evolve" else f"its analyst batch has {n}"
    raise ConfigError(
        f"benchmark {benchmark.name!r}: decisions need at least {guards.min_validation_tasks} tasks "
        f"(selection guards.min_validation_tasks) and {where}, so no candidate could be accepted; "
        f"set `selection: {{guards.min_validation_tasks: {n}}}` in the run file, or give the "
        f"{acc.split} split more tasks")


def build_plan(config: RunConfig) -> dict[str, Any]:
    """What the configured budgets buy (for `--dry-run`); loads presets and the benchmark, calls no model."""
    from evolve.selection.budget import estimate

    loop, budgets = load_loop(config)
    selection = load_selection_preset(selection_preset_for(config.preset), _selection_overrides(config))
    benchmark = load_benchmark(config.benchmark, seed=config.split_seed)
    check_acceptance_tasks(config, benchmark, selection)
    load_harness(resolve_named("harnesses", config.harness, marker="harness.yaml"))
    ood = load_ood(config, benchmark)
    drafts = loop.llm_drafts + loop.operator_drafts
    n_decision = decision_tasks(benchmark, selection, config)
    est = estimate(selection.budgets, selection.allocator, rounds=config.rounds, drafts_per_round=drafts,
                   top_k=selection.surrogate.top_k, n_validation=n_decision,
                   analyst_batch=min(config.evolve_batch, len(benchmark.split("evolve"))))
    minimum = round_minimum(benchmark, selection, config)
    return {
        "benchmark": benchmark.name, "splits": {k: len(v) for k, v in benchmark.splits.items()},
        "ood": {suite.name: sum(len(tasks) for tasks in suite.splits.values()) for suite in ood},
        "preset": config.preset, "roles": public_roles(config.roles()), "rounds": config.rounds,
        "drafts_per_round": drafts, "budgets": selection.budgets.model_dump(), "proposer_budgets": budgets,
        "round_minimum": minimum, "decision_tasks": n_decision,
        "estimate": [*est.lines(), f"one round needs at least {minimum['total']} oracle rollouts",
                     *_decision_line(benchmark, selection, n_decision)],
    }


def _decision_line(benchmark: Benchmark, selection: SelectionConfig, n: int) -> list[str]:
    acc = selection.acceptance
    if acc.split != "validation":
        return []
    total = len(benchmark.split("validation"))
    return [f"decisions on {n} of {total} validation tasks (acceptance.validation_tasks: {acc.validation_tasks})"]


def _selection_overrides(config: RunConfig) -> dict[str, Any]:
    """The run's own budget and trial count override the preset's (one value each for the whole run)."""
    overrides: dict[str, Any] = dict(config.selection)
    if config.budget is not None:
        overrides["budgets.oracle_rollouts"] = config.budget
    if config.trials is not None:
        overrides["allocator.trials_per_task"] = config.trials
    return overrides
