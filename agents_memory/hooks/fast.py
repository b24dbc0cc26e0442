"""The hook commands' fast path: standard library only until it has to do more.

``memory-capture hook session-start|prompt|flush`` land here before click, pydantic or psycopg
are imported. The first thing done is arming a process-wide deadline (``HOOK_TIMEOUT_MS``; for
the per-prompt hook its own, shorter ``PROMPT_HOOK_TIMEOUT_MS``): when it fires the process
leaves at once with exit 0 and no output, wherever it is (an import, a hung socket, a slow
query). Hooks fail open, always.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from types import FrameType

RESPONSE_LIMIT = 1 << 20
STDIN_LIMIT = 8 << 20
"""The client's hook JSON is read up to this many characters (a longer one is cut, so it
parses as nothing: no information, no output)."""


def _leave(_signum: int = 0, _frame: FrameType | None = None) -> None:
    try:
        sys.stdout.flush()
    finally:
        os._exit(0)


def arm_deadline(budget_ms: int) -> float:
    """Exit 0 silently after ``budget_ms``; returns the absolute deadline (monotonic).

    Two clocks: SIGALRM for Python code, and a timer thread for when the main thread sits in a
    C call that holds no GIL (libpq waiting on a hung server), where a Python signal handler
    would only run after the call returns."""
    seconds = budget_ms / 1000
    signal.signal(signal.SIGALRM, _leave)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    timer = threading.Timer(seconds, _leave)
    timer.daemon = True
    timer.start()
    return time.monotonic() + seconds


def ask_daemon(path: str, request: bytes, deadline: float) -> str | None:
    """The hook's output from the capture daemon's socket, or ``None`` if it cannot answer
    in time. A bare stdlib socket on purpose: this runs inside the hook's time budget, before
    any heavier import (the daemon's side is :mod:`agents_memory.recall.socket_server`)."""
    remaining = deadline - time.monotonic() - 0.05
    if remaining <= 0:
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(remaining)
            sock.connect(path)
            sock.sendall(request + b"\n")
            sock.shutdown(socket.SHUT_WR)
            chunks: list[bytes] = []
            size = 0
            while size < RESPONSE_LIMIT:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except OSError:
        return None
    answer = b"".join(chunks).decode("utf-8", errors="replace")
    if not answer.startswith("ok\n"):
        return None
    return answer[3:]


def session_start(platform: str, deadline: float) -> None:
    import json

    from agents_memory.hooks.session_start import build_direct, parse_event
    from agents_memory.paths import brief_socket_path

    event = parse_event(_stdin())
    request = json.dumps({"platform": platform, "event": event}).encode()
    output = ask_daemon(str(brief_socket_path()), request, deadline)
    if output is None:
        output = build_direct(platform, event)
    _print(output)


def prompt(platform: str, deadline: float) -> None:
    """The per-prompt hook: the daemon's answer, else built here (full-text only)."""
    import json

    from agents_memory.hooks.session_start import parse_event
    from agents_memory.paths import brief_socket_path

    event = parse_event(_stdin())
    request = json.dumps({"prompt": {"platform": platform, "event": event}}).encode()
    output = ask_daemon(str(brief_socket_path()), request, deadline)
    if output is None:
        from agents_memory.hooks.prompt import build_direct

        output = build_direct(platform, event)
    _print(output)


def _stdin() -> str:
    return sys.stdin.read(STDIN_LIMIT) if not sys.stdin.isatty() else ""


def _print(output: str) -> None:
    if output:
        sys.stdout.write(output + "\n")
        sys.stdout.flush()


def run(argv: list[str]) -> None:
    """``argv``: ``["session-start" | "prompt", "--platform", P]`` or ``["flush"]``. Never
    raises."""
    from agents_memory.paths import hook_budget_ms, prompt_hook_budget_ms

    budget = prompt_hook_budget_ms() if argv[:1] == ["prompt"] else hook_budget_ms()
    deadline = arm_deadline(budget)
    try:
        if argv[:1] == ["flush"]:
            from agents_memory.hooks.flush import run as run_flush

            run_flush()
        elif argv[:1] in (["session-start"], ["prompt"]):
            platform = _platform(argv[1:])
            if platform is not None:
                hook = session_start if argv[0] == "session-start" else prompt
                hook(platform, deadline)
    except BaseException:  # noqa: S110 - hooks fail open: no output, exit 0
        pass
    _leave()


def _platform(args: list[str]) -> str | None:
    for index, arg in enumerate(args):
        if arg == "--platform" and index + 1 < len(args):
            value = args[index + 1]
        elif arg.startswith("--platform="):
            value = arg.partition("=")[2]
        else:
            continue
        from agents_memory.adapters import names

        return value if value in names() else None
    return None


def wants_fast_path(argv: list[str]) -> bool:
    """A hook invocation that is not asking for help."""
    return (
        len(argv) >= 2
        and argv[0] == "hook"
        and argv[1] in ("session-start", "prompt", "flush")
        and not {"-h", "--help"} & set(argv)
    )
