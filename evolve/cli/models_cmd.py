"""`evolve models` (which backends can run here) and `evolve serve` (start a vLLM server)."""

from __future__ import annotations

import json
import signal
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from evolve.backends.catalog import backend_catalog
from evolve.backends.vllm_server import ServerProcess, api_base_for, serve_command, vllm_executable
from evolve.cli.common import JsonOption, console, err_console
from evolve.paths import home


def models(as_json: JsonOption = False) -> None:
    """List the model backends, whether each is available here, and what to install for the missing ones."""
    rows = backend_catalog()
    if as_json:
        typer.echo(json.dumps([asdict(r) for r in rows], indent=2))
        return
    table = Table(title="model backends")
    for column in ("backend", "model string", "available", "install", "note"):
        table.add_column(column, overflow="fold")
    for row in rows:
        mark = "[green]yes[/green]" if row.available else "[red]no[/red]"
        table.add_row(row.name, escape(row.model_string), mark, escape(row.install or "-"), escape(row.note))
    console.print(table)


def serve(
    model: Annotated[str, typer.Option("--model", help="Model to serve: a Hugging Face id or a local folder.")],
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1.")] = 8000,
    gpu_memory_utilization: Annotated[float, typer.Option("--gpu-memory-utilization", help="GPU memory share.")] = 0.9,
    max_model_len: Annotated[int | None, typer.Option("--max-model-len", help="Context length limit.")] = None,
    log_file: Annotated[Path | None, typer.Option("--log-file", help="Server log [default: runs/logs/vllm-PORT.log].")]
    = None,
    extra_args: Annotated[str, typer.Option("--extra-args", help="More `vllm serve` arguments, quoted.")] = "",
    ready_timeout: Annotated[float, typer.Option("--ready-timeout", help="Seconds to wait for the health check.")]
    = 900.0,
) -> None:
    """Start a vLLM OpenAI-compatible server, wait until it is healthy, and keep it running until Ctrl-C."""
    host = "127.0.0.1"
    command = serve_command(
        model, port=port, host=host, gpu_memory_utilization=gpu_memory_utilization,
        max_model_len=max_model_len, extra_args=extra_args, executable=vllm_executable(),
    )
    api_base = api_base_for(host, port)
    log_path = log_file or home() / "logs" / f"vllm-{port}.log"
    server = ServerProcess(command, api_base, log_path)
    err_console.print(f"starting: {' '.join(command)}\nlog: {log_path}")
    server.start()
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        served = server.wait_healthy(timeout_s=ready_timeout)
        name = served[0] if served else model
        console.print(f"model: hosted_vllm/{name}\napi_base: {api_base}")
        err_console.print(f"ready: use the model string hosted_vllm/{name} with --api-base {api_base}; Ctrl-C stops it")
        code = server.process.wait() if server.process is not None else 0
    except KeyboardInterrupt:
        err_console.print("stopping the server...")
        code = 0
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)
    if code:
        err_console.print(f"the server exited with code {code}; see {log_path}")
        raise typer.Exit(1)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def register(app: typer.Typer) -> None:
    """Add `evolve models` and `evolve serve`."""
    app.command("models")(models)
    app.command("serve")(serve)
