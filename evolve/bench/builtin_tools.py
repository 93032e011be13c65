"""The built-in tools' code. It runs only inside the sandbox (loaded by `_sandbox_runner.py` from this
file), never in the engine process; standard library only. The current directory is the rollout's
workspace (a fresh temporary folder when the task has none); paths are relative to it.

Pure tools: `calculator`, `word_count`. Workspace tools: `read_file`, `write_file`, `edit_file`,
`list_files`, `search`, `run_python`, `run_tests`. (`bash` is not here: it runs as a command.)
"""

from __future__ import annotations

import ast
import contextlib
import fnmatch
import io
import operator
import os
import re
import sys
import traceback

_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
SKIP_DIRS = {"__pycache__", ".git", ".pytest_cache"}
MAX_MATCHES = 50


def _eval_node(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval_node(node.left), _eval_node(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 100:
            raise ValueError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval_node(node.operand))
    raise ValueError(f"unsupported expression element {type(node).__name__}")


def calculator(expression):
    """Evaluate an arithmetic expression (+ - * / // % ** and parentheses)."""
    value = _eval_node(ast.parse(str(expression), mode="eval").body)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def word_count(text):
    """Count the words of a text."""
    return str(len(str(text).split()))


def _path(path):
    """A workspace-relative path; absolute paths and `..` that leave the workspace are refused."""
    text = str(path or ".").strip()
    root = os.path.realpath(os.getcwd())
    real = os.path.realpath(os.path.join(root, text))
    if not (real == root or real.startswith(root + os.sep)):
        raise PermissionError(f"path {text!r} is outside the workspace")
    return real


def _rel(real):
    return os.path.relpath(real, os.path.realpath(os.getcwd()))


def read_file(path):
    """The text of a workspace file."""
    with open(_path(path), encoding="utf-8", errors="replace") as handle:
        return handle.read()


def write_file(path, content):
    """Create or overwrite a workspace file with `content`."""
    real = _path(path)
    os.makedirs(os.path.dirname(real), exist_ok=True)
    with open(real, "w", encoding="utf-8") as handle:
        handle.write(str(content))
    return f"wrote {len(str(content))} characters to {_rel(real)}"


def edit_file(path, old, new):
    """Replace the one occurrence of `old` in a workspace file by `new`."""
    real = _path(path)
    with open(real, encoding="utf-8") as handle:
        text = handle.read()
    count = text.count(str(old))
    if count != 1:
        raise ValueError(f"{_rel(real)} contains the old text {count} times; it must occur exactly once")
    with open(real, "w", encoding="utf-8") as handle:
        handle.write(text.replace(str(old), str(new)))
    return f"edited {_rel(real)}"


def _walk(top):
    for folder, dirs, files in os.walk(_path(top)):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            yield os.path.join(folder, name)


def list_files(path="."):
    """The files under a workspace folder, one relative path per line."""
    return "\n".join(_rel(p) for p in _walk(path)) or "(no files)"


def search(pattern, path=".", glob="*"):
    """Lines matching a regular expression in the workspace files (`file:line: text`)."""
    regex = re.compile(str(pattern))
    hits = []
    for file in _walk(path):
        if not fnmatch.fnmatch(os.path.basename(file), glob):
            continue
        try:
            with open(file, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        hits += [f"{_rel(file)}:{n}: {line.strip()}" for n, line in enumerate(lines, 1) if regex.search(line)]
        if len(hits) >= MAX_MATCHES:
            return "\n".join(hits[:MAX_MATCHES]) + "\n(more matches not shown)"
    return "\n".join(hits) or "(no matches)"


def _captured(run):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            run()
        except SystemExit as exc:
            if exc.code not in (None, 0):
                buffer.write(f"exit code {exc.code}\n")
        except BaseException as exc:  # the error is the observation
            buffer.write(_traceback(exc))
    return buffer.getvalue() or "(no output)"


def _traceback(exc):
    """The traceback of the policy's own code (frames of the sandbox machinery left out)."""
    info = traceback.TracebackException.from_exception(exc, limit=8)
    machinery = {os.path.realpath(__file__), os.path.realpath(sys.argv[0]) if sys.argv else ""}
    info.stack = traceback.StackSummary.from_list(
        [f for f in info.stack if os.path.realpath(f.filename) not in machinery])
    return "".join(info.format())


def run_python(code):
    """Run Python code in the workspace and return what it printed (and any error)."""
    root = os.path.realpath(os.getcwd())
    if root not in sys.path:
        sys.path.insert(0, root)
    compiled = compile(str(code), "<run_python>", "exec")
    return _captured(lambda: exec(compiled, {"__name__": "__main__"}))


def run_tests(path="tests", pattern="test*.py"):
    """Run the workspace's unittest tests under `path` and return the report."""
    import unittest

    root = os.path.realpath(os.getcwd())
    if root not in sys.path:
        sys.path.insert(0, root)
    start = _path(path)
    buffer = io.StringIO()
    if start not in sys.path:
        sys.path.insert(1, start)
    suite = unittest.defaultTestLoader.discover(start, pattern=str(pattern), top_level_dir=start)
    result = unittest.TextTestRunner(stream=buffer, verbosity=1).run(suite)
    status = "NO TESTS" if not result.testsRun else "PASSED" if result.wasSuccessful() else "FAILED"
    return f"{status}: {result.testsRun} tests, {len(result.failures)} failures, {len(result.errors)} errors\n" + \
        buffer.getvalue()
