"""Several vLLM servers of one model (`evolve serve --replicas N`): one per GPU, one port each.

Locally, replica i runs `vllm serve` with `CUDA_VISIBLE_DEVICES` set to the i-th GPU id and port
`port + i`. With Ray, each replica is an actor holding one GPU (`num_gpus=1`; Ray sets
`CUDA_VISIBLE_DEVICES`) that runs the server on its own node, listening on that node's address.
Either way the replicas' URLs, joined by commas, are the `--api-base` of a run: its server pool
balances over them and health-checks them. Ray is imported only by `start_ray_replicas`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evolve.backends.vllm_server import ServerProcess, api_base_for, serve_command
from evolve.errors import BackendError


@dataclass(frozen=True)
class ReplicaPlan:
    """Where replica `index` runs: its GPU, port and command line."""

    index: int
    gpu: str
    port: int
    command: list[str]


def plan_replicas(model: str, replicas: int, *, port: int = 8000, host: str = "127.0.0.1",
                  gpus: Sequence[str] | None = None, **serve_options: Any) -> list[ReplicaPlan]:
    """One plan per replica: GPU `gpus[i]` (default: i) and port `port + i` (validated like `serve_command`)."""
    if replicas < 1:
        raise BackendError(f"--replicas must be at least 1, got {replicas}")
    ids = list(gpus) if gpus else [str(i) for i in range(replicas)]
    if len(ids) < replicas:
        raise BackendError(f"--gpus names {len(ids)} GPU(s) for {replicas} replicas; give one id per replica")
    if port + replicas - 1 > 65535:
        raise BackendError(f"--port {port} leaves no room for {replicas} replicas (ports up to 65535)")
    return [ReplicaPlan(i, ids[i], port + i, serve_command(model, port=port + i, host=host, **serve_options))
            for i in range(replicas)]


def start_local_replicas(plans: Sequence[ReplicaPlan], log_dir: Path, host: str = "127.0.0.1") -> list[ServerProcess]:
    """Start every replica on this machine, each seeing only its GPU; stop the started ones if one fails."""
    servers: list[ServerProcess] = []
    try:
        for plan in plans:
            env = {**os.environ, "CUDA_VISIBLE_DEVICES": plan.gpu}
            server = ServerProcess(plan.command, api_base_for(host, plan.port), log_dir / f"vllm-{plan.port}.log", env)
            server.start()
            servers.append(server)
    except BaseException:
        for server in servers:
            server.stop()
        raise
    return servers


class ServerReplica:
    """A model server run by a Ray actor on its node (importable without Ray)."""

    def __init__(self, command: list[str], port: int, log_dir: str) -> None:
        host = _node_address()
        command = _with_host(command, host)
        self.server = ServerProcess(command, api_base_for(host, port), Path(log_dir) / f"vllm-{port}.log",
                                    dict(os.environ))
        self.server.start()

    def api_base(self) -> str:
        return self.server.api_base

    def gpus(self) -> str:
        return os.environ.get("CUDA_VISIBLE_DEVICES", "")

    def wait_healthy(self, timeout_s: float) -> list[str]:
        return self.server.wait_healthy(timeout_s=timeout_s)

    def poll(self) -> int | None:
        """The server's exit code, or None while it runs."""
        return None if self.server.process is None else self.server.process.poll()

    def stop(self) -> int | None:
        return self.server.stop()


def _node_address() -> str:
    from ray.util import get_node_ip_address

    return get_node_ip_address()


def _with_host(command: list[str], host: str) -> list[str]:
    out = list(command)
    if "--host" in out:
        out[out.index("--host") + 1] = host
    return out


class RayReplicas:
    """Replicas as Ray actors, one GPU each (`num_gpus`), spread over the cluster's nodes."""

    def __init__(self, plans: Sequence[ReplicaPlan], log_dir: Path, *, address: str | None = None,
                 num_gpus: float = 1.0) -> None:
        self.plans, self.log_dir, self.address, self.num_gpus = list(plans), log_dir, address, num_gpus
        self.actors: list[Any] = []
        self.started_ray = False

    def start(self) -> None:
        from evolve.executors.ray_executor import require_ray

        require_ray()
        import ray

        if not ray.is_initialized():
            ray.init(address=self.address or "local", include_dashboard=False, logging_level="ERROR",
                     log_to_driver=False)
            self.started_ray = True
        remote = ray.remote(num_gpus=self.num_gpus, num_cpus=0, max_restarts=0,
                            scheduling_strategy="SPREAD")(ServerReplica)
        self.actors = [remote.remote(p.command, p.port, str(self.log_dir)) for p in self.plans]

    def wait_healthy(self, timeout_s: float) -> list[str]:
        """The replicas' api_bases once every server is healthy (BackendError otherwise)."""
        import ray

        try:
            ray.get([a.wait_healthy.remote(timeout_s) for a in self.actors], timeout=timeout_s + 30)
        except Exception as exc:
            last = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
            raise BackendError(f"a replica did not become healthy: {last[:300]}") from None
        return ray.get([a.api_base.remote() for a in self.actors])

    def gpus(self) -> list[str]:
        """`CUDA_VISIBLE_DEVICES` of each replica, as Ray set it."""
        import ray

        return ray.get([a.gpus.remote() for a in self.actors])

    def watch(self, poll_s: float = 1.0) -> int:
        """Block until a replica's server exits; return its exit code."""
        import ray

        while True:
            done = [c for c in ray.get([a.poll.remote() for a in self.actors]) if c is not None]
            if done:
                return done[0]
            time.sleep(poll_s)

    def stop(self) -> None:
        """Stop every server, then its actor (and the local cluster if this started it)."""
        import ray

        for actor in self.actors:
            try:
                ray.get(actor.stop.remote(), timeout=60)
            except Exception:  # a dead actor's server died with it
                pass
            ray.kill(actor)
        self.actors = []
        if self.started_ray:
            ray.shutdown()
            self.started_ray = False
