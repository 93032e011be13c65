"""Runs untrusted code inside the sandbox folder (started by evolve.bench.sandbox, never imported).

Usage: python -I -B _sandbox_runner.py JOB_JSON. The current directory is the sandbox folder. The
job is one of:

- `{"kind": "program"}`: run `program.py` of the folder (the `python_tests` verifier);
- `{"kind": "tool", "file" | "module", "paths", "function", "arguments"}`: load a registered tool's
  module (a file, or a module found on `paths`), call `function(**arguments)` with its output
  captured, and print one JSON line `{"ok", "result" | "error", "output"}` on stdout;
- `{"kind": "exec", "argv"}`: replace this process by a command (the opt-in `bash` tool).

Resource limits (`limits`) are set first and apply to everything. Then, for Python jobs, an audit
hook refuses new processes, sockets, ctypes, frame and gc introspection helpers, writes outside
the folder and reads outside the folder and the Python installation. The hook is built from
closure-captured values and functions, and the code runs in a fresh `__main__`, so simple
monkeypatching of this module or of builtins does not switch it off; it stays defence in depth for
generated code, not a security boundary against hostile native code (see RELIABILITY.md).
"""

import json
import os
import resource
import sys
import types

BLOCKED = (
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "pty.spawn", "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "os.kill", "os.killpg",
    "resource.setrlimit", "resource.prlimit", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    "sys.setprofile", "sys.settrace", "os.putenv", "os.unsetenv",
)
BLOCKED_IMPORTS = ("ctypes", "_ctypes", "_posixsubprocess", "_xxsubinterpreters", "_testcapi")
ONE_PATH = ("os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate", "os.utime",
            "shutil.rmtree", "os.mkfifo", "os.mknod")
TWO_PATHS = ("os.rename", "os.link", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.move")
LISTING = ("os.listdir", "os.scandir")
DEVICES = ("/dev/null", "/dev/urandom", "/dev/zero")


def _limit(name, value):
    if value:
        resource.setrlimit(name, (value, value))


def set_limits(limits):
    """CPU seconds, address space, file size, no core files and (when given) the process count."""
    _limit(resource.RLIMIT_CPU, limits.get("cpu_s"))
    _limit(resource.RLIMIT_AS, limits.get("memory_mb", 0) * 1024 * 1024)
    _limit(resource.RLIMIT_FSIZE, limits.get("file_mb", 0) * 1024 * 1024)
    _limit(resource.RLIMIT_NPROC, limits.get("processes"))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def python_roots(extra=()):
    """Folders of the Python installation on sys.path (stdlib, site-packages), plus `extra` folders."""
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    roots = [os.path.realpath(p) for p in extra]
    for entry in sys.path:
        real = os.path.realpath(entry) if entry else ""
        if real and any(real == p or real.startswith(p + os.sep) for p in prefixes):
            roots.append(real)
    return tuple(dict.fromkeys(roots))


def make_hook(root, read_roots):
    """The audit hook: every value and helper it uses is captured here, not looked up at call time."""
    blocked, blocked_imports = frozenset(BLOCKED), frozenset(BLOCKED_IMPORTS)
    one_path, two_paths, listing = frozenset(ONE_PATH), frozenset(TWO_PATHS), frozenset(LISTING)
    write_roots, reads = (root,), (root, *read_roots)
    devices = frozenset(DEVICES)
    realpath, fsdecode, join, dirname, sep = os.path.realpath, os.fsdecode, os.path.join, os.path.dirname, os.sep
    is_int, is_str, deny = int, str, PermissionError
    isinstance_, any_, list_, len_ = isinstance, any, list, len
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def inside(path, roots, base=None):
        if isinstance_(path, is_int):
            return True
        text = fsdecode(path)
        if base is not None and not text.startswith(sep):
            text = join(base, text)
        real = realpath(text)
        for r in roots:
            if real == r or real.startswith(r + sep):
                return True
        return False

    def hook(event, args):
        if event in blocked or event.startswith("ctypes."):
            raise deny(f"sandbox: {event} is not allowed")
        if event == "import":
            if args and args[0] in blocked_imports:
                raise deny(f"sandbox: importing {args[0]} is not allowed")
        elif event == "open":
            path, mode, flags = (list_(args) + [None, None, None])[:3]
            if path is None:
                return
            writing = (isinstance_(mode, is_str) and any_(c in mode for c in "wax+")) or (
                isinstance_(flags, is_int) and flags & write_flags)
            if writing and not inside(path, write_roots):
                raise deny(f"sandbox: writing {path!r} outside the sandbox is not allowed")
            if not writing and not inside(path, reads) and fsdecode(path) not in devices:
                raise deny(f"sandbox: reading {path!r} outside the sandbox is not allowed")
        elif event in listing:
            path = args[0] if args and args[0] is not None else "."
            if not inside(path, reads):
                raise deny(f"sandbox: listing {path!r} outside the sandbox is not allowed")
        elif event in one_path and args and not inside(args[0], write_roots):
            raise deny(f"sandbox: {event} outside the sandbox is not allowed")
        elif event in two_paths and len_(args) > 1 and not (inside(args[0], write_roots)
                                                           and inside(args[1], write_roots)):
            raise deny(f"sandbox: {event} outside the sandbox is not allowed")
        elif event == "os.symlink" and len_(args) > 1 and not (
                inside(args[1], write_roots) and inside(args[0], write_roots, dirname(realpath(fsdecode(args[1]))))):
            raise deny("sandbox: os.symlink outside the sandbox is not allowed")

    return hook


def _fresh_main():
    module = types.ModuleType("__main__")
    sys.modules["__main__"] = module
    return module.__dict__


def _load_tool(job):
    if job.get("file"):
        import importlib.util

        spec = importlib.util.spec_from_file_location("evolve_sandbox_tools", job["file"])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        import importlib

        sys.path[:0] = list(job.get("paths") or ())
        module = importlib.import_module(job["module"])
    return getattr(module, job["function"])


def _run_tool(job, root, read_roots):
    import contextlib
    import io

    out = sys.stdout
    cap = int(job.get("max_chars") or 100_000)
    try:
        function = _load_tool(job)
    except Exception as exc:  # a broken registration is reported, not raised
        out.write(json.dumps({"ok": False, "error": f"cannot load tool: {type(exc).__name__}: {exc}"}) + "\n")
        return
    captured = io.StringIO()
    sys.addaudithook(make_hook(root, read_roots))
    _fresh_main()
    try:
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            result = function(**(job.get("arguments") or {}))
        text = "" if result is None else str(result)
        reply = {"ok": True, "result": text[:cap], "chars": len(text)}
    except BaseException as exc:  # the tool's failure goes back to the policy as text
        reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:cap]}
    reply["output"] = captured.getvalue()[-cap:]
    out.write(json.dumps(reply) + "\n")
    out.flush()


def main():
    job = json.loads(sys.argv[1])
    set_limits(job.get("limits") or {})
    root = os.path.realpath(os.getcwd())
    read_roots = python_roots(job.get("paths") or ())
    kind = job.get("kind", "program")
    if kind == "exec":
        argv = job["argv"]
        os.execve(argv[0], argv, dict(os.environ))
    if kind == "tool":
        _run_tool(job, root, read_roots)
        return
    with open("program.py", encoding="utf-8") as handle:
        source = handle.read()
    code = compile(source, "program.py", "exec")
    sys.addaudithook(make_hook(root, read_roots))
    exec(code, _fresh_main())


if __name__ == "__main__":
    main()
