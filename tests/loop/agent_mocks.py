"""A scripted mock policy for repo-fix that succeeds only when the harness carries a reusable mechanism:
checking its work with the tests before answering (`control.flow.verify_before_answer`, or a system
section that says "run the tests before answering").

Without it the policy behaves like a hasty agent: it reads the faulty file, writes a note instead of a
fix, and declares victory. With it, the test run shows the failure, and the policy then applies the
task's reference fix (`meta.solution`, which only this test double reads), reruns the tests and answers.
It speaks the text protocol, as the mock backend has no native tool calling."""

from __future__ import annotations

import json
from typing import Any

from evolve.backends.base import Request

MECHANISM = "run the tests before answering"


def _tool(name: str, **arguments: Any) -> str:
    return json.dumps({"tool": name, "arguments": arguments})


def repo_fix_policy(solutions: dict[str, dict[str, str]]):
    """A policy callable for `MockBackend`; `solutions` maps a task input to its `meta.solution`."""

    def answer(request: Request) -> str:
        contents = [m.get("content") or "" for m in request.messages]
        task = next((c for c in contents if c in solutions), None)
        if task is None:
            return "I cannot tell what the task is."
        fix, last = solutions[task], contents[-1]
        mine = "\n".join(m.get("content") or "" for m in request.messages if m.get("role") == "assistant")
        checks_first = MECHANISM in contents[0].lower()
        if "numbered plan" in last:
            return "1. Read the code. 2. Fix the bug. 3. Answer."
        if "PASSED:" in last:
            return "Fixed the bug; the tests pass."
        if "FAILED:" in last:
            return _tool("edit-file", path=fix["path"], old=fix["old"], new=fix["new"])
        if "Result of tool edit-file: edited" in last:
            return _tool("run-tests")
        if "verify your work" in last:
            return _tool("run-tests")
        if "Result of tool write-file" in last:
            return _tool("run-tests") if checks_first else "Done: I fixed the bug."
        if "Result of tool read-file" in last and "write-file" not in mine:
            return _tool("write-file", path="NOTES.md", content="Looked at the code; it seems fine.")
        return _tool("read-file", path=fix["path"])

    return answer
