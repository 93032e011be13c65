"""Runs untrusted code inside the sandbox folder (started by evolve.bench.sandbox, never imported).

Usage: python -I -B _sandbox_runner.py LIMITS_JSON. The current directory is the sandbox; it holds
`program.py`. Resource limits are set first, then an audit hook refuses writes outside the sandbox,
new processes, sockets and ctypes, then the program runs. The hook is defence in depth for honest
mistakes of generated code, not a security boundary against hostile native code.
"""

import json
import os
import resource
import sys

ROOT = os.path.realpath(os.getcwd())
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
BLOCKED = {
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "pty.spawn", "socket.connect", "socket.bind", "socket.sendto", "ctypes.dlopen", "ctypes.dlsym",
    "ctypes.cdata", "os.kill", "os.killpg",
}
ONE_PATH = {"os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate", "os.utime",
            "shutil.rmtree", "os.mkfifo", "os.mknod"}
TWO_PATHS = {"os.rename", "os.link", "os.symlink", "shutil.copyfile", "shutil.copymode", "shutil.copystat",
             "shutil.move"}
_busy = False


def _inside(path):
    if isinstance(path, int):
        return True
    real = os.path.realpath(os.fsdecode(path))
    return real == ROOT or real.startswith(ROOT + os.sep)


def _check(event, args):
    if event in BLOCKED:
        raise PermissionError(f"sandbox: {event} is not allowed")
    if event == "open":
        path, mode, flags = (list(args) + [None, None, None])[:3]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & WRITE_FLAGS)
        if path is not None and writing and not _inside(path):
            raise PermissionError(f"sandbox: writing {path!r} outside the sandbox is not allowed")
    elif event in ONE_PATH and args and not _inside(args[0]):
        raise PermissionError(f"sandbox: {event} outside the sandbox is not allowed")
    elif event in TWO_PATHS and len(args) > 1 and not (_inside(args[0]) and _inside(args[1])):
        raise PermissionError(f"sandbox: {event} outside the sandbox is not allowed")


def _hook(event, args):
    global _busy
    if _busy:
        return
    _busy = True
    try:
        _check(event, args)
    finally:
        _busy = False


def _limit(name, value):
    if value:
        resource.setrlimit(name, (value, value))


def main():
    limits = json.loads(sys.argv[1])
    _limit(resource.RLIMIT_CPU, limits["cpu_s"])
    _limit(resource.RLIMIT_AS, limits["memory_mb"] * 1024 * 1024)
    _limit(resource.RLIMIT_FSIZE, limits["file_mb"] * 1024 * 1024)
    _limit(resource.RLIMIT_CORE, 0)
    with open("program.py", encoding="utf-8") as handle:
        source = handle.read()
    code = compile(source, "program.py", "exec")
    sys.addaudithook(_hook)
    exec(code, {"__name__": "__main__"})


if __name__ == "__main__":
    main()
