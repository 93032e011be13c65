"""A shared PostgreSQL store: `evolve status --watch` and `evolve report` from other processes while a run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pg_support import needs_pg

from evolve.store import LineageStore

pytestmark = [pytest.mark.postgres, needs_pg, pytest.mark.timeout(300)]
EVOLVE = str(Path(sys.executable).with_name("evolve"))


def _status(url: str, run_id: str) -> tuple[str | None, int]:
    try:
        store = LineageStore(url)
    except Exception:  # the run has not created the tables yet
        return None, 0
    try:
        runs = {r["id"]: r for r in store.list_runs()}
        return (runs[run_id]["status"], store.count_rollouts(run_id)) if run_id in runs else (None, 0)
    finally:
        store.close()


def test_status_watch_and_report_from_other_processes_during_a_run(pg_url, tmp_path):
    env = {**os.environ, "COLUMNS": "160"}
    run = subprocess.Popen([EVOLVE, "run", "--model", "mock:latency=0.05", "--rounds", "3", "--budget", "400",
                            "--seed", "1", "--no-cache", "--run-id", "shared", "--db", pg_url, "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while _status(pg_url, "shared")[1] < 20 and time.monotonic() < deadline:
            assert run.poll() is None, run.stdout.read()
            time.sleep(0.2)
        watcher = subprocess.Popen([EVOLVE, "status", "--watch", "--interval", "0.5", "--db", pg_url],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        report = subprocess.run([EVOLVE, "report", "shared", "--db", pg_url, "--out", str(tmp_path / "r.html")],
                                capture_output=True, text=True, env=env, timeout=120)
        during, rollouts = _status(pg_url, "shared")
        watching = watcher.poll() is None
        out, _ = run.communicate(timeout=240)
        watched, _ = watcher.communicate(timeout=60)  # ends by itself once no run is live
    finally:
        for process in (run, locals().get("watcher")):
            if process is not None and process.poll() is None:
                process.kill()
    assert report.returncode == 0, report.stdout + report.stderr
    assert during == "running" and rollouts > 20  # the report was written while the run went on
    html = (tmp_path / "r.html").read_text()
    assert "shared" in html and "<svg" in html
    assert run.returncode == 0, out
    assert watcher.returncode == 0, watched
    assert watching  # it kept refreshing while the run went on, and stopped by itself once it finished
    assert "shared" in watched and "finished" in watched
    assert _status(pg_url, "shared")[0] == "finished"
