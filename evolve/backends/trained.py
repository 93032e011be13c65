"""`trained:DIR`: a proposer fine-tuned by `evolve train-proposer`, run with transformers on the CPU.

The folder holds `manifest.json`; the base model plus LoRA adapter (merged at load) or the full
weights are loaded on the first request. Prompts are cut as in training (`fit_prompt` to the trained prompt window).
Generation is greedy at temperature 0, sampled otherwise
(seeded by `Request.seed`); it stops at `<|im_end|>` and honours `max_tokens`. There is no
constrained decoding: `json_schema` is ignored and the proposer's parser and repair loop handle
the reply. A failed request becomes a Completion with `error` set.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evolve.backends.base import Completion, Request, Usage
from evolve.backends.registry import BackendOptions, register_prefix
from evolve.errors import BackendError

_loaded: dict[str, tuple[Any, Any]] = {}
_lock = threading.Lock()


def load_trained(folder: str | Path) -> tuple[Any, Any, Any]:
    """(model, tokenizer, manifest) of a trained proposer folder, loaded once per process."""
    from evolve.train.model import load_model, require_train_extra
    from evolve.train.trainer import read_manifest

    require_train_extra("the trained:DIR backend")
    folder = Path(folder).expanduser().resolve()
    manifest = read_manifest(folder)
    key = str(folder)
    with _lock:
        if key not in _loaded:
            weights = folder / manifest.weights
            if manifest.lora:
                _loaded[key] = load_model(manifest.base_path, adapter=weights)
            else:
                _loaded[key] = load_model(str(weights))
        model, tokenizer = _loaded[key]
    model.eval()
    return model, tokenizer, manifest


class TrainedBackend:
    """A fine-tuned proposer folder behind the Backend protocol (see the module docstring)."""

    def __init__(self, folder: str | Path, name: str | None = None) -> None:
        folder = Path(folder).expanduser()
        if not folder.is_dir():
            raise BackendError(f"trained:{folder}: no such folder; write one with `evolve train-proposer --out DIR`")
        from evolve.train.model import require_train_extra
        from evolve.train.trainer import read_manifest

        require_train_extra("the trained:DIR backend")
        read_manifest(folder)
        self.folder = folder
        self.name = name or f"trained:{folder}"
        self._model: tuple[Any, Any, int] | None = None
        self._gen_lock = threading.Lock()

    @classmethod
    def from_base(cls, base: str, *, window: int = 1152, name: str | None = None) -> TrainedBackend:
        """The untrained `base` model (`embedded` or a model folder) with the same generation code,
        prompts cut to `window` tokens: the baseline a fine-tuned proposer is compared with."""
        from evolve.train.model import load_model

        self = cls.__new__(cls)
        self.folder, self.name, self._gen_lock = Path(base), name or f"base:{base}", threading.Lock()
        model, tokenizer = load_model(base)
        model.eval()
        self._model = (model, tokenizer, window)
        return self

    def _ensure(self) -> tuple[Any, Any, int]:
        if self._model is None:
            model, tokenizer, manifest = load_trained(self.folder)
            window = int(manifest.config["max_length"]) - int(manifest.config["max_reply"])
            self._model = (model, tokenizer, window)
        return self._model

    def complete_one(self, request: Request) -> Completion:
        start = time.perf_counter()
        try:
            text, usage = self._generate(request)
        except BackendError:
            raise
        except Exception as exc:  # one failed generation is a failed completion, not a crash
            return Completion("", latency_s=time.perf_counter() - start, model=self.name, role=request.role,
                              error=f"trained: {type(exc).__name__}: {exc}")
        return Completion(text, usage, time.perf_counter() - start, model=self.name, role=request.role)

    def _generate(self, request: Request) -> tuple[str, Usage]:
        import torch

        from evolve.train.model import fit_prompt, prompt_ids

        model, tokenizer, window = self._ensure()
        limit = int(getattr(model.config, "max_position_embeddings", 2048) or 2048)
        ids = fit_prompt(prompt_ids(tokenizer, list(request.messages)), min(window, limit // 2))
        room = max(0, min(request.max_tokens, limit - len(ids)))
        if room == 0:
            raise ValueError("max_tokens must be at least 1")
        kwargs: dict[str, Any] = {"max_new_tokens": room, "eos_token_id": model.config.eos_token_id,
                                  "pad_token_id": tokenizer.pad_token_id}
        if request.temperature > 0:
            kwargs |= {"do_sample": True, "temperature": request.temperature, "top_p": 0.95}
        else:
            kwargs |= {"do_sample": False}
        with self._gen_lock, torch.no_grad():
            if request.seed is not None:
                torch.manual_seed(request.seed)
            input_ids = torch.tensor([ids])
            out = model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **kwargs)
        new = out[0, len(ids):].tolist()
        text = tokenizer.decode(new, skip_special_tokens=True)
        for stop in request.stop:
            text = text.split(stop)[0] if stop else text
        return text, Usage(len(ids), len(new))

    async def complete(self, requests: Sequence[Request]) -> list[Completion]:
        """Complete requests one after another in a worker thread."""
        return [await asyncio.to_thread(self.complete_one, r) for r in requests]


def _factory(rest: str, options: BackendOptions) -> TrainedBackend:
    if options.api_base:
        raise BackendError("--api-base applies only to litellm models (<provider>/<model>), not to 'trained:DIR'")
    return TrainedBackend(rest)


register_prefix("trained", _factory, "trained:DIR")
