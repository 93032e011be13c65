"""The litellm backend: any provider string (`openai/...`, `anthropic/...`, `ollama/...`, `hosted_vllm/...`).

litellm is imported only here, after `LITELLM_LOCAL_MODEL_COST_MAP=True` is set so that the import
never reaches the network. Every call runs under `retry.call_with_retries` (bounded retries with
backoff and jitter from an injected RNG, a hard per-attempt timeout) and an `asyncio.Semaphore` that
bounds the requests in flight; the SDK's own retries are switched off so the bound is ours. A request
that still fails becomes a `Completion` with `error` set. Several api_bases (comma-separated) form a
health-checked `ServerPool` (evolve.backends.pool): each call goes to the least busy live server, a
server that cannot be reached leaves the pool (the retry goes to another) and returns when its
health check answers again. Secrets never reach `name`, errors or records.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from evolve.backends.base import Completion, Request, ToolCall, Usage
from evolve.backends.pool import ServerPool
from evolve.backends.redact import redact
from evolve.backends.registry import BackendOptions
from evolve.backends.retry import RetriesExhausted, RetryPolicy, call_with_retries, status_code
from evolve.errors import BackendError, one_line

MAX_ERROR_CHARS = 400


def import_litellm() -> Any:
    """Import litellm without network access (local cost map), or raise MissingExtraError."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    if importlib.util.find_spec("litellm") is None:
        raise BackendError("litellm models need the 'litellm' package: pip install litellm")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def split_api_bases(api_base: str | None) -> list[str]:
    """The comma-separated api_base value as a list of URLs (empty when unset)."""
    return [part.strip().rstrip("/") for part in (api_base or "").split(",") if part.strip()]


def _is_unreachable(exc: BaseException) -> bool:
    text = str(exc).lower()
    markers = ("cannot connect", "connection refused", "connect call failed", "name or service not known")
    return type(exc).__name__ == "APIConnectionError" or any(m in text for m in markers)


class LiteLLMBackend:
    """A litellm model; see the module docstring. `extra_params` go to every call (tests: `mock_response`).

    Tool definitions (`Request.tools`) are sent natively as `tools=` (OpenAI function definitions;
    vLLM's OpenAI server needs `--enable-auto-tool-choice --tool-call-parser ...`), and the reply's
    tool calls come back in `Completion.tool_calls`. `native_tools=False` makes the runtime use the
    text protocol instead.
    """

    def __init__(
        self,
        model: str,
        *,
        api_bases: Sequence[str] = (),
        api_key: str | None = None,
        policy: RetryPolicy | None = None,
        concurrency: int = 4,
        rng: random.Random | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        extra_params: dict[str, Any] | None = None,
        native_tools: bool = True,
        health_interval_s: float = 5.0,
    ) -> None:
        if concurrency < 1:
            raise BackendError(f"concurrency must be >= 1, got {concurrency}")
        self._litellm = import_litellm()
        self.model = model
        self.name = redact(model)
        self.api_bases = list(api_bases)
        self._secrets = tuple(s for s in (api_key,) if s)
        self.policy = policy or RetryPolicy()
        self.concurrency = concurrency
        self._rng = rng or random.Random(0)
        self._sleep = sleep
        self._extra = dict(extra_params or {})
        self._api_key = api_key
        self.native_tools = native_tools
        self.pool = ServerPool(self.api_bases, interval_s=health_interval_s) if len(self.api_bases) > 1 else None
        self._semaphores: dict[int, asyncio.Semaphore] = {}

    def _key_param(self) -> dict[str, str]:
        if self._api_key:
            return {"api_key": self._api_key}
        if self.model.startswith("hosted_vllm/"):
            return {"api_key": "EMPTY"}  # a vLLM server started without --api-key accepts any key
        return {}

    def _semaphore(self) -> asyncio.Semaphore:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._semaphores:
            self._semaphores = {loop_id: asyncio.Semaphore(self.concurrency)}
        return self._semaphores[loop_id]

    def _call_params(self, request: Request) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "timeout": self.policy.timeout_s,
            "drop_params": True,
        }
        if request.seed is not None:
            params["seed"] = request.seed
        if request.stop:
            params["stop"] = list(request.stop)
        if request.tools:
            params["tools"] = [dict(t) for t in request.tools]
            params["tool_choice"] = "auto"
        if request.json_schema is not None:
            schema = {"name": "output", "schema": request.json_schema}
            params["response_format"] = {"type": "json_schema", "json_schema": schema}
        params["max_retries"] = 0  # no hidden SDK retries: the retry policy is the only one
        params.update(self._key_param())
        if self.api_bases:
            params["api_base"] = self.api_bases[0]
        params.update(self._extra)
        return params

    async def _once(self, request: Request) -> Any:
        params = self._call_params(request)
        if self.pool is None:
            return await self._litellm.acompletion(**params)
        self.pool.ensure_checker()
        base = params["api_base"] = self.pool.pick()
        self.pool.in_flight[base] += 1
        try:
            return await self._litellm.acompletion(**params)
        except Exception as exc:
            if _is_unreachable(exc):
                self.pool.mark_down(base)
            raise
        finally:
            self.pool.in_flight[base] -= 1

    def describe_error(self, exc: BaseException, attempts: int) -> str:
        """One redacted line: the error kind, its status, the server and how many attempts were made."""
        code = status_code(exc)
        kind = type(exc).__name__ + (f" {code}" if code is not None else "")
        where = f" from {', '.join(self.api_bases)}" if self.api_bases else ""
        text = one_line(f"{kind}{where} after {attempts} attempt{'s' * (attempts != 1)}: {exc}")
        if self.api_bases and _is_unreachable(exc):
            text = f"cannot reach {', '.join(self.api_bases)} (is the server running? see `evolve serve`): {text}"
        return redact(text, self._secrets)[:MAX_ERROR_CHARS]

    async def complete_one(self, request: Request) -> Completion:
        """One request with retries, timeout and the concurrency bound; failures become `error`."""
        async with self._semaphore():
            start = time.perf_counter()
            try:
                response = await call_with_retries(lambda: self._once(request), self.policy, self._rng, self._sleep)
            except RetriesExhausted as exc:
                error = self.describe_error(exc.last, exc.attempts)
                return Completion("", latency_s=time.perf_counter() - start, model=self.name, role=request.role,
                                  error=error)
            elapsed = time.perf_counter() - start
        message = response.choices[0].message
        usage = getattr(response, "usage", None)
        counts = Usage(getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0)
        return Completion(message.content or "", counts, elapsed, model=self.name, role=request.role,
                          tool_calls=_tool_calls(message))

    async def complete(self, requests: Sequence[Request]) -> list[Completion]:
        """All requests concurrently (at most `concurrency` in flight), results in request order."""
        return list(await asyncio.gather(*(self.complete_one(r) for r in requests)))


def _tool_calls(message: Any) -> tuple[ToolCall, ...]:
    """The native function calls of a response message (ids made up where the server gives none)."""
    calls = []
    for index, call in enumerate(getattr(message, "tool_calls", None) or ()):
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if not name:
            continue
        arguments = getattr(function, "arguments", "") or ""
        calls.append(ToolCall(str(getattr(call, "id", None) or f"call_{index}"), str(name),
                              arguments if isinstance(arguments, str) else json.dumps(arguments)))
    return tuple(calls)


def make_litellm_backend(model: str, options: BackendOptions) -> LiteLLMBackend:
    """The registry's factory for `<provider>/<model>` strings."""
    litellm = import_litellm()
    provider = model.split("/", 1)[0]
    if provider not in litellm.provider_list:
        known = ", ".join(sorted(str(getattr(p, "value", p)) for p in litellm.provider_list)[:40])
        raise BackendError(f"unknown litellm provider {provider!r} in model {redact(model)!r}; known: {known}, ...")
    bases = split_api_bases(options.api_base)
    if provider == "hosted_vllm" and not bases:
        raise BackendError(f"{redact(model)!r} needs --api-base (e.g. http://127.0.0.1:8000/v1, see `evolve serve`)")
    policy = RetryPolicy(max_retries=options.max_retries, timeout_s=options.timeout_s)
    return LiteLLMBackend(model, api_bases=bases, policy=policy, concurrency=options.concurrency)
