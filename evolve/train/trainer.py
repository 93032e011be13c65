"""Fine-tuning the proposer: DPO on preference pairs or reward-weighted SFT, in plain torch.

LoRA adapters come from peft (default); `lora=False` trains all weights. Examples are processed
one at a time with gradient accumulation over `batch` (no padding; CPU-friendly), prompts are
cut by `fit_prompt` to `max_length - max_reply` tokens, and only the reply tokens are scored.

- `rwsft`: loss = Σ w_i · NLL_i / Σ w_i over samples with reward > 0 (w = reward; NLL = mean token
  negative log-likelihood of the reply).
- `dpo`: loss = −log σ(β · [(log π(c) − log π_ref(c)) − (log π(r) − log π_ref(r))]); the reference
  log-probabilities are computed once with the untrained model before the first step.

The output folder holds `manifest.json` (TrainManifest) and either `adapter/` (LoRA, with the
tokenizer beside it) or `model/` (a complete Hugging Face model folder with its tokenizer);
`checkpoints/step-N/` for the intermediate checkpoints.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evolve.errors import ConfigError, MissingExtraError
from evolve.train.dataset import ProposerDataset
from evolve.train.model import IM_END, fit_prompt, has_peft, load_model, prompt_ids, require_train_extra

Method = Literal["dpo", "rwsft"]
MANIFEST = "manifest.json"


class TrainConfig(BaseModel):
    """Options of one fine-tuning run."""

    model_config = ConfigDict(extra="forbid")

    method: Method = "rwsft"
    base: str = "embedded"
    epochs: int = Field(1, ge=1)
    lr: float = Field(1e-4, gt=0)
    batch: int = Field(2, ge=1)
    max_steps: int | None = Field(None, ge=1)
    seed: int = 0
    lora: bool = True
    lora_r: int = Field(8, ge=1)
    beta: float = Field(0.1, gt=0)
    max_length: int = Field(1024, ge=16)
    """Tokens per example (prompt + reply)."""
    max_reply: int = Field(384, ge=4)
    """Reply tokens kept; the prompt gets `max_length - max_reply` (see `fit_prompt`)."""
    min_examples: int = Field(2, ge=1)
    device: str = "auto"
    """torch device: auto (cuda when available, else cpu), cpu, cuda, cuda:N."""
    threads: int | None = Field(None, ge=1)
    """torch CPU threads (None: torch's default)."""
    checkpoints: int = Field(2, ge=0)
    """Intermediate checkpoints, evenly spaced over the steps (the final weights are always saved)."""

    @model_validator(mode="after")
    def _window(self) -> TrainConfig:
        if self.max_reply >= self.max_length:
            raise ValueError(f"max_reply ({self.max_reply}) must be below max_length ({self.max_length})")
        return self

    @property
    def prompt_window(self) -> int:
        return self.max_length - self.max_reply


class TrainManifest(BaseModel):
    """What `manifest.json` in a trained proposer folder records."""

    model_config = ConfigDict(extra="forbid")

    format: int = 1
    base: str
    base_path: str
    method: Method
    lora: bool
    weights: str
    """Folder (relative) with the LoRA adapter or the full model."""
    runs: list[str]
    seed: int
    data: dict[str, int]
    heldout_groups: list[str]
    steps: int
    losses: list[float]
    config: dict[str, Any]
    created: str


Progress = Callable[[int, int, float], None]


def _encode(tokenizer: Any, messages: list[dict[str, str]], reply: str, cfg: TrainConfig) -> tuple[list[int], int]:
    """Token ids of prompt + reply and the number of reply tokens (the reply cut to `max_reply`, the
    prompt to `max_length - max_reply` by `fit_prompt`)."""
    reply_ids = tokenizer(reply + IM_END, add_special_tokens=False)["input_ids"][: cfg.max_reply]
    prompt = fit_prompt(prompt_ids(tokenizer, messages), cfg.prompt_window)
    return prompt + reply_ids, len(reply_ids)


def reply_logprob(model: Any, ids: list[int], n_reply: int) -> tuple[Any, Any]:
    """(sum, mean) log-probability of the last `n_reply` tokens of `ids` under `model`."""
    import torch

    input_ids = torch.tensor([ids], device=next(model.parameters()).device)
    logits = model(input_ids=input_ids, logits_to_keep=n_reply + 1).logits[0, :-1]
    targets = input_ids[0, -n_reply:]
    logp = torch.log_softmax(logits.float(), dim=-1).gather(1, targets[:, None])[:, 0]
    return logp.sum(), logp.mean()


def check_size(data: ProposerDataset, cfg: TrainConfig) -> None:
    """ConfigError naming the counts when the training split is too small for `cfg.method`."""
    if cfg.method == "rwsft":
        found = sum(1 for s in data.samples if s.reward > 0)
        if found < cfg.min_examples:
            raise ConfigError(f"too little data for rwsft: {found} training sample(s) with reward > 0 in "
                              f"runs {','.join(data.runs)} (minimum {cfg.min_examples}); add runs to --runs")
    elif len(data.pairs) < cfg.min_examples:
        raise ConfigError(f"too little data for dpo: {len(data.pairs)} training preference pair(s) in runs "
                          f"{','.join(data.runs)} (minimum {cfg.min_examples}); add runs to --runs or use "
                          "--method rwsft")


def _examples(data: ProposerDataset, cfg: TrainConfig, tokenizer: Any) -> list[dict[str, Any]]:
    check_size(data, cfg)
    if cfg.method == "rwsft":
        return [{"ids": _encode(tokenizer, s.messages, s.reply, cfg), "weight": s.reward}
                for s in data.samples if s.reward > 0]
    return [{"chosen": _encode(tokenizer, p.messages, p.chosen, cfg),
             "rejected": _encode(tokenizer, p.messages, p.rejected, cfg)} for p in data.pairs]


def _loss(model: Any, ex: dict[str, Any], cfg: TrainConfig) -> Any:
    import torch

    if cfg.method == "rwsft":
        return -reply_logprob(model, *ex["ids"])[1] * ex["weight"]
    chosen, _ = reply_logprob(model, *ex["chosen"])
    rejected, _ = reply_logprob(model, *ex["rejected"])
    margin = (chosen - ex["ref"][0]) - (rejected - ex["ref"][1])
    return -torch.nn.functional.logsigmoid(cfg.beta * margin)


def _with_lora(model: Any, cfg: TrainConfig) -> Any:
    if not has_peft():
        raise MissingExtraError("train-proposer --lora", "train", "peft")
    from peft import LoraConfig, get_peft_model

    targets = [n for n in ("q_proj", "k_proj", "v_proj", "o_proj")
               if any(name.endswith(n) for name, _ in model.named_modules())]
    config = LoraConfig(r=cfg.lora_r, lora_alpha=2 * cfg.lora_r, lora_dropout=0.0, target_modules=targets,
                        task_type="CAUSAL_LM")
    return get_peft_model(model, config)


def _device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def _save(model: Any, tokenizer: Any, folder: Path, cfg: TrainConfig) -> str:
    weights = "adapter" if cfg.lora else "model"
    model.save_pretrained(folder / weights)
    tokenizer.save_pretrained(folder / weights if weights == "model" else folder)
    return weights


def train(data: ProposerDataset, cfg: TrainConfig, out: str | Path, progress: Progress | None = None) -> TrainManifest:
    """Fine-tune `cfg.base` on the training split of `data`; write the result into `out`."""
    require_train_extra("evolve train-proposer")
    import torch

    train_part = data.part("train")
    out = Path(out)
    check_size(train_part, cfg)
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    model, tokenizer = load_model(cfg.base)
    examples = _examples(train_part, cfg, tokenizer)
    model.to(_device(cfg.device))
    if cfg.method == "dpo":
        model.eval()
        with torch.no_grad():
            for ex in examples:
                ex["ref"] = (reply_logprob(model, *ex["chosen"])[0].item(),
                             reply_logprob(model, *ex["rejected"])[0].item())
    if cfg.lora:
        model = _with_lora(model, cfg)
    model.to(_device(cfg.device))
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    per_epoch = math.ceil(len(examples) / cfg.batch)
    total = min(cfg.max_steps or per_epoch * cfg.epochs, per_epoch * cfg.epochs)
    rng, losses, step = random.Random(cfg.seed), [], 0
    out.mkdir(parents=True, exist_ok=True)
    while step < total:
        order = list(range(len(examples)))
        rng.shuffle(order)
        for start in range(0, len(order), cfg.batch):
            if step >= total:
                break
            chunk = order[start:start + cfg.batch]
            norm = sum(examples[i].get("weight", 1.0) for i in chunk)
            step_loss = 0.0
            for i in chunk:
                loss = _loss(model, examples[i], cfg) / norm
                loss.backward()
                step_loss += float(loss.item())
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            losses.append(round(step_loss, 6))
            if progress:
                progress(step, total, step_loss)
            if cfg.checkpoints and step < total and step % max(1, total // (cfg.checkpoints + 1)) == 0:
                _save(model, tokenizer, out / "checkpoints" / f"step-{step}", cfg)
    model.eval()
    model.to("cpu")
    weights = _save(model, tokenizer, out, cfg)
    manifest = _manifest(data, cfg, weights, step, losses)
    (out / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return manifest


def _manifest(data: ProposerDataset, cfg: TrainConfig, weights: str, steps: int,
              losses: list[float]) -> TrainManifest:
    from evolve.train.model import resolve_base

    return TrainManifest(
        base=cfg.base, base_path=str(resolve_base(cfg.base)), method=cfg.method, lora=cfg.lora, weights=weights,
        runs=data.runs, seed=cfg.seed, data=data.sizes(), heldout_groups=data.heldout_groups, steps=steps,
        losses=losses, config=cfg.model_dump(mode="json"),
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))


def read_manifest(folder: str | Path) -> TrainManifest:
    """The manifest of a trained proposer folder (ConfigError naming the file when missing or invalid)."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise ConfigError(f"{path}: no manifest.json; a trained proposer folder is written by "
                          "`evolve train-proposer --out DIR`")
    try:
        return TrainManifest.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except ValueError as exc:
        raise ConfigError(f"{path}: not a valid manifest ({str(exc).splitlines()[0]})") from None
