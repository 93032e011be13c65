"""`evolve models` (which backends can run here) and `evolve serve` (start vLLM servers)."""

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
    log_file: Annotated[Path | None, typer.Option("--log-file", help="Server log (default: runs/logs/vllm-PORT.log).")]
    = None,
    extra_args: Annotated[str, typer.Option("--extra-args", help="More `vllm serve` arguments, quoted.")] = "",
    ready_timeout: Annotated[float, typer.Option("--ready-timeout", help="Seconds to wait for the health check.")]
    = 900.0,
    replicas: Annotated[int, typer.Option("--replicas", help="Servers to start, one GPU and port (PORT+i) each.")]
    = 1,
    gpus: Annotated[str | None, typer.Option("--gpus", help="GPU ids of the replicas, comma-separated (default: "
                                             "0..N-1).")] = None,
    executor: Annotated[str, typer.Option("--executor", help="local: replicas on this machine; ray: Ray actors "
                                          "with one GPU each, on the cluster's nodes.")] = "local",
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="Ray cluster of --executor ray "
                                                    "(default: start a local one).")] = None,
) -> None:
    """Start a vLLM OpenAI-compatible server (or --replicas N of them), wait until healthy, keep running until
    Ctrl-C."""
    if replicas != 1 or executor != "local" or gpus:
        _serve_replicas(model, replicas, port=port, gpus=gpus, executor=executor, ray_address=ray_address,
                        log_dir=log_file.parent if log_file else home() / "logs", ready_timeout=ready_timeout,
                        gpu_memory_utilization=gpu_memory_utilization, max_model_len=max_model_len,
                        extra_args=extra_args)
        return
    host = "127.0.0.1"
    command = serve_command(  # the options are checked before the vllm extra is looked for
        model, port=port, host=host, gpu_memory_utilization=gpu_memory_utilization,
        max_model_len=max_model_len, extra_args=extra_args, executable="vllm",
    )
    command[0] = vllm_executable()
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


def _serve_replicas(model: str, replicas: int, *, port: int, gpus: str | None, executor: str,
                    ray_address: str | None, log_dir: Path, ready_timeout: float, **options: object) -> None:
    from evolve.backends import replicas as rep
    from evolve.errors import ConfigError

    if executor not in ("local", "ray"):
        raise ConfigError(f"--executor must be local or ray, got {executor!r}")
    ids = [g.strip() for g in gpus.split(",") if g.strip()] if gpus else None
    plans = rep.plan_replicas(model, replicas, port=port, gpus=ids, executable=vllm_executable(), **options)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    group = rep.RayReplicas(plans, log_dir, address=ray_address) if executor == "ray" else None
    servers: list[ServerProcess] = []
    code = 0
    try:
        if group is not None:
            err_console.print(f"starting {replicas} replicas as Ray actors (one GPU each); logs: {log_dir} "
                              "on each node")
            group.start()
            bases = group.wait_healthy(ready_timeout)
        else:
            for plan in plans:
                err_console.print(f"starting on GPU {plan.gpu}: {' '.join(plan.command)}")
            servers = rep.start_local_replicas(plans, log_dir)
            for server in servers:
                server.wait_healthy(timeout_s=ready_timeout)
            bases = [server.api_base for server in servers]
        console.print(f"model: hosted_vllm/{model}\napi_base: {','.join(bases)}")
        err_console.print(f"ready: {replicas} replicas; use --api-base {','.join(bases)}; Ctrl-C stops them")
        code = group.watch() if group is not None else _first_exit(servers)
    except KeyboardInterrupt:
        err_console.print("stopping the replicas...")
    finally:
        if group is not None:
            group.stop()
        for server in servers:
            server.stop()
        signal.signal(signal.SIGTERM, previous)
    if code:
        err_console.print(f"a replica exited with code {code}; see the logs in {log_dir}")
        raise typer.Exit(1)


def _first_exit(servers: list[ServerProcess], poll_s: float = 1.0) -> int:
    """Block until one server process exits; its exit code."""
    import time

    while True:
        for server in servers:
            if server.process is not None and server.process.poll() is not None:
                return server.process.returncode
        time.sleep(poll_s)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def register(app: typer.Typer) -> None:
    """Add `evolve models` and `evolve serve`."""
    app.command("models")(models)
    app.command("serve")(serve)
