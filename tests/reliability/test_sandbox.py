"""Containment of code-executing verifiers, beyond tests/bench/test_verifiers.py: the CPU limit with a
generous wall clock, a fork bomb, huge allocations, writes, renames and deletions outside the sandbox,
sockets, the environment the code sees, and the temporary working folder."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from evolve.bench.sandbox import PythonTests, PythonTestsOptions, run_sandboxed
from evolve.bench.task import Task

OK = "def add(a, b):\n    return a + b\n"
TASK = Task(id="t", input="add", target="def check(candidate):\n    assert candidate(2, 3) == 5\n",
            meta={"entry_point": "add"})


def score(code: str, **options) -> tuple[float, str, float]:
    start = time.monotonic()
    result = PythonTests(PythonTestsOptions(**options)).score(TASK, code)
    return result.reward, result.detail, time.monotonic() - start


def test_cpu_limit_stops_a_busy_loop_before_the_wall_clock():
    reward, detail, elapsed = score("while True:\n    pass\n" + OK, timeout_s=60, cpu_s=1)
    assert reward == 0.0 and "signal" in detail  # SIGXCPU / SIGKILL from RLIMIT_CPU
    assert elapsed < 30


def test_fork_bomb_is_refused():
    bomb = "import os\nwhile True:\n    os.fork()\n" + OK
    reward, detail, elapsed = score(bomb, timeout_s=10)
    assert reward == 0.0 and "os.fork is not allowed" in detail and elapsed < 10
    for spawn in ("import subprocess\nsubprocess.run(['true'])\n",
                  "import multiprocessing\nmultiprocessing.Process(target=print).start()\n",
                  "import os\nos.posix_spawn('/bin/true', ['true'], {})\n"):
        assert score(spawn + OK)[0] == 0.0, spawn


@pytest.mark.parametrize("alloc", ["x = bytearray(8 * 1024 ** 3)\n",
                                   "chunks = []\nwhile True:\n    chunks.append(bytearray(64 * 1024 ** 2))\n"])
def test_huge_allocation_fails_inside_the_sandbox(alloc):
    reward, detail, elapsed = score(alloc + OK, memory_mb=256, timeout_s=30)
    assert reward == 0.0 and ("MemoryError" in detail or "signal" in detail), detail
    assert elapsed < 30


def test_writes_renames_and_deletions_outside_are_contained(tmp_path):
    tmp_path = tmp_path / "outside"
    tmp_path.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    attacks = {
        "open": f"open({str(tmp_path / 'new.txt')!r}, 'w').write('x')\n",
        "os.open": f"import os\nos.open({str(tmp_path / 'new.txt')!r}, os.O_WRONLY | os.O_CREAT)\n",
        "append": f"open({str(victim)!r}, 'a').write('x')\n",
        "remove": f"import os\nos.remove({str(victim)!r})\n",
        "rename": f"import os\nos.rename({str(victim)!r}, 'stolen.txt')\n",
        "symlink": f"import os\nos.symlink({str(victim)!r}, 'link')\nopen('link', 'w').write('x')\n",
        "parent": "open('../escaped.txt', 'w').write('x')\n",
        "rmtree": f"import shutil\nshutil.rmtree({str(tmp_path)!r})\n",
    }
    for name, attack in attacks.items():
        reward, detail, _ = score(attack + OK)
        assert reward == 0.0, name
        assert "sandbox" in detail, (name, detail)
    assert victim.read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim.txt"]


def test_network_is_refused():
    code = "import socket\nsocket.create_connection(('127.0.0.1', 9))\n" + OK
    reward, detail, _ = score(code)
    assert reward == 0.0 and "socket.connect is not allowed" in detail


def test_no_inherited_secrets_and_a_fresh_temporary_folder(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-openai-0123456789")
    monkeypatch.setenv("EVOLVE_TEST_PG_URL", "postgresql+psycopg://user:planted@127.0.0.1/db")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "planted-aws-secret")
    program = ("import json, os, sys\n"
               "sys.stderr.write(json.dumps({'env': dict(os.environ), 'cwd': os.getcwd(),"
               " 'files': sorted(os.listdir('.'))}))\n"
               "sys.exit(3)\n")
    code, err = run_sandboxed(program, PythonTestsOptions())
    assert code == 3
    seen = json.loads(err)
    assert set(seen["env"]) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_CTYPE"}, seen["env"]
    assert "planted" not in err
    cwd = Path(seen["cwd"])
    assert seen["files"] == ["program.py"] and seen["env"]["HOME"] == seen["cwd"]
    assert cwd.name.startswith("evolve-sandbox-") and not cwd.exists()  # removed afterwards
    assert Path.cwd() != cwd
