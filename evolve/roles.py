"""The model roles of a run: policy, proposer, critic and judge, each a (model, API base) pair.

- policy (`--model`, `--api-base`): answers the benchmark tasks (every oracle rollout);
- proposer (`--proposer-model`, `--proposer-api-base`): writes the LLM edits;
- critic (`--critic-model`, `--critic-api-base`): the critic's LLM review of drafts;
- judge (`--judge-model`, `--judge-api-base`): the rubric surrogate (writing, scoring and revising the
  rubric) and the `judge` verifier of benchmarks that use one.

The run-file keys are the option names with underscores (`critic_model`, `judge_api_base`, ...).
Each role defaults to the role before it (policy → proposer → critic → judge). A role without a model
of its own takes the model *and* the API base of the role before it; a role with its own model uses
its own API base (none: the provider's default), so a local vLLM policy can work beside an API
proposer. An API base alone keeps the inherited model and points it at another server.
`--proposer-model none` (no LLM proposer) passes the policy's model on to the critic.

Roles that resolve to the same (model, API base) share one backend (one client, one response cache,
one embedded model in memory). Usage is metered per role all the same: every request carries its
role tag (`proposer`, `critic`, `surrogate` for the rubric, `judge` for the verifier).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from evolve.backends.metered import MeteredBackend
from evolve.backends.redact import redact
from evolve.errors import BackendError
from evolve.run_config import NO_MODEL

ROLE_ORDER = ("policy", "proposer", "critic", "judge")
"""The roles in the order in which each defaults to the one before it."""
ROLES_KEY = "roles"
"""Run state key of the resolved roles (`public_roles`), stored when a run starts or resumes."""


def option(role: str, what: str = "model") -> str:
    """The command-line option of a role's model or API base (`--model`, `--critic-api-base`, ...)."""
    dashed = what.replace("_", "-")
    return f"--{dashed}" if role == "policy" else f"--{role}-{dashed}"


class RoleSpec(BaseModel):
    """The resolved model of one role."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    """Model string (see `evolve models`)."""
    api_base: str | None = None
    """Server URL(s) for litellm models (None: the provider's default)."""
    inherited_from: str | None = None
    """The role whose model this role took (None: set by its own option)."""

    @property
    def key(self) -> tuple[str, str | None]:
        """Roles with the same key share one backend."""
        return self.model, self.api_base

    def public(self) -> dict[str, Any]:
        """What is stored with the run and shown: model and API base with credentials masked."""
        return {"model": redact(self.model), "api_base": redact(self.api_base) if self.api_base else None,
                "inherited_from": self.inherited_from}


def resolve_roles(config: Any) -> dict[str, RoleSpec]:
    """The four roles of a run configuration (a RunConfig or anything with its role fields)."""
    roles = {"policy": RoleSpec(model=config.model, api_base=config.api_base)}
    previous = "policy"
    for role in ROLE_ORDER[1:]:
        model, api_base = getattr(config, f"{role}_model"), getattr(config, f"{role}_api_base")
        if role == "proposer" and model == NO_MODEL:  # no LLM proposer: the critic inherits from the policy
            roles[role] = RoleSpec(model=NO_MODEL, inherited_from=None)
            continue
        before = roles[previous]
        if model is None:
            roles[role] = RoleSpec(model=before.model, api_base=api_base or before.api_base, inherited_from=previous)
        else:
            roles[role] = RoleSpec(model=model, api_base=api_base)
        previous = role
    return roles


def public_roles(roles: Mapping[str, RoleSpec]) -> dict[str, dict[str, Any]]:
    """`RoleSpec.public()` of every role (the form stored with the run)."""
    return {role: spec.public() for role, spec in roles.items()}


def roles_line(stored: Mapping[str, Any]) -> str:
    """One line for people: `policy embedded · proposer hosted_vllm/x @ http://... · critic = proposer ...`."""
    parts = []
    for role in ROLE_ORDER:
        spec = stored.get(role)
        if not isinstance(spec, Mapping):
            continue
        text = str(spec.get("model", "?")) + (f" @ {spec['api_base']}" if spec.get("api_base") else "")
        source = spec.get("inherited_from")
        parts.append(f"{role} {text}" + (f" (= {source})" if source else ""))
    return " · ".join(parts)


def role_backends(roles: Mapping[str, RoleSpec], build: Callable[[RoleSpec], Any],
                  injected: Mapping[str, Any] | None = None) -> dict[str, MeteredBackend]:
    """One metered backend per role; roles with the same (model, API base) share one.

    `build(spec)` makes a backend from a resolved role. `injected` maps roles to ready backend
    objects (tests, the Python API); they replace the role's model string, and a role that inherits
    from an injected role shares the injected backend.
    """
    injected = {role: backend for role, backend in (injected or {}).items() if backend is not None}
    out: dict[str, MeteredBackend] = {}
    by_key: dict[tuple[str, str | None], MeteredBackend] = {}
    by_object: dict[int, MeteredBackend] = {}
    for role in ROLE_ORDER:
        spec = roles[role]
        if spec.model == NO_MODEL:  # no model: the role is not served (it shares the policy's backend)
            out[role] = out["policy"]
            continue
        if role in injected:
            obj = injected[role]
            if id(obj) not in by_object:
                by_object[id(obj)] = MeteredBackend(obj)
            out[role] = by_object[id(obj)]
            continue
        if spec.inherited_from is not None and spec.key == roles[spec.inherited_from].key:
            backend = out[spec.inherited_from]
        elif spec.key in by_key:
            backend = by_key[spec.key]
        else:
            try:
                backend = MeteredBackend(build(spec))
            except BackendError as exc:
                raise BackendError(f"{option(role)} {redact(spec.model)}: {exc}") from None
        by_key.setdefault(spec.key, backend)
        out[role] = backend
    return out


def distinct(backends: Mapping[str, MeteredBackend]) -> list[MeteredBackend]:
    """The distinct backends of `role_backends`, in role order."""
    seen: dict[int, MeteredBackend] = {}
    for role in ROLE_ORDER:
        seen.setdefault(id(backends[role]), backends[role])
    return list(seen.values())
