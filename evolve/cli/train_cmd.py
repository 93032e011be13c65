"""`evolve train-dataset` and `evolve train-proposer`: proposer fine-tuning from the lineage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evolve.cli.common import DbOption, console, err_console, open_store
from evolve.errors import ConfigError

if TYPE_CHECKING:
    from evolve.train.dataset import ProposerDataset

RunsOption = Annotated[str, typer.Option("--runs", help="Comma-separated run ids to learn from.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the held-out split and of training.")]
HeldoutOption = Annotated[float, typer.Option("--heldout", help="Fraction of parents held out from training.")]


def _run_ids(runs: str) -> list[str]:
    ids = [r.strip() for r in runs.split(",") if r.strip()]
    if not ids:
        raise ConfigError("--runs: name at least one run id, comma-separated (see `evolve status`)")
    return ids


def _dataset(db: str | None, runs: str, seed: int, heldout: float) -> ProposerDataset:
    from evolve.train.dataset import build_dataset

    store = open_store(db)
    try:
        return build_dataset(store, _run_ids(runs), seed=seed, heldout=heldout)
    finally:
        store.close()


def train_dataset(
    runs: RunsOption,
    out: Annotated[Path, typer.Option("--out", help="Folder for samples.jsonl and pairs.jsonl.")],
    db: DbOption = None,
    seed: SeedOption = 0,
    heldout: HeldoutOption = 0.25,
) -> None:
    """Write the proposer training data of some runs as JSONL (format: evolve/train/dataset.py)."""
    from evolve.train.dataset import write_jsonl

    data = _dataset(db, runs, seed, heldout)
    paths = write_jsonl(data, out)
    console.print(json.dumps({"files": {k: str(v) for k, v in paths.items()}, **data.sizes(),
                              "heldout_groups": data.heldout_groups}), markup=False, highlight=False)


def train_proposer(
    runs: RunsOption,
    out: Annotated[Path, typer.Option("--out", help="Output folder (manifest.json, weights, checkpoints).")],
    method: Annotated[str, typer.Option("--method", help="dpo | rwsft")] = "rwsft",
    base: Annotated[str, typer.Option("--base", help="Base model: embedded or a Hugging Face model folder.")]
    = "embedded",
    db: DbOption = None,
    epochs: Annotated[int, typer.Option("--epochs", min=1)] = 1,
    lr: Annotated[float, typer.Option("--lr")] = 1e-4,
    batch: Annotated[int, typer.Option("--batch", min=1, help="Examples per optimizer step.")] = 2,
    max_steps: Annotated[int | None, typer.Option("--max-steps", min=1)] = None,
    max_length: Annotated[int, typer.Option("--max-length", min=16, help="Tokens per example.")] = 1024,
    max_reply: Annotated[int, typer.Option("--max-reply", min=4, help="Reply tokens kept per example.")] = 384,
    seed: SeedOption = 0,
    heldout: HeldoutOption = 0.25,
    lora: Annotated[bool, typer.Option("--lora/--full", help="LoRA adapter (peft) or all weights.")] = True,
    threads: Annotated[int | None, typer.Option("--threads", min=1, help="torch CPU threads.")] = None,
    device: Annotated[str, typer.Option("--device", help="auto | cpu | cuda | cuda:N")] = "auto",
) -> None:
    """Fine-tune the proposer model on the lineage of some runs (needs the `train` extra)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from evolve.train.model import require_train_extra
    from evolve.train.trainer import TrainConfig, check_size, train

    if method not in ("dpo", "rwsft"):
        raise ConfigError(f"--method {method!r} is unknown; valid: dpo, rwsft")
    cfg = TrainConfig(method=method, base=base, epochs=epochs, lr=lr, batch=batch, max_steps=max_steps,
                      seed=seed, lora=lora, max_length=max_length, max_reply=max_reply,
                      threads=threads, device=device)
    data = _dataset(db, runs, seed, heldout)
    check_size(data.part("train"), cfg)  # user errors (options, runs, data) before a missing extra
    require_train_extra("evolve train-proposer")
    err_console.print(f"data: {data.sizes()}", markup=False, highlight=False)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=False) as bar:
        task = bar.add_task(f"{method} loss —", total=None)

        def progress(step: int, total: int, loss: float) -> None:
            bar.update(task, completed=step, total=total, description=f"{method} loss {loss:.4f}")

        manifest = train(data, cfg, out, progress=progress)
    console.print(json.dumps({"out": str(out), "steps": manifest.steps, "first_loss": manifest.losses[:1],
                              "last_loss": manifest.losses[-1:], **manifest.data,
                              "use": f"evolve run --proposer-model trained:{out}"}), markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("train-dataset")(train_dataset)
    app.command("train-proposer")(train_proposer)
