"""``mcp-agents-memory search`` answered by the running capture daemon before click, rich,
pydantic or psycopg are imported: standard library only (issue 31: a warm search costs little
more than starting Python).

The entry point (:func:`agents_memory.cli.entry.memory_main`) calls :func:`run` when the
command line is a plain ``search`` (:func:`wants_fast_path`). It sends the daemon the command
line and what the output depends on: stdout's tty-ness and encoding, the terminal's size, the
variables a console reads (:data:`TERMINAL_ENV`, none a secret), the login name, and a keyed
digest of every environment variable (a per-request random key; no value, so no secret, is
ever sent). The daemon runs the same ``search`` command on the same settings
(:mod:`agents_memory.cli.search_remote`) and answers the text it printed and its exit code.
Anything else (no daemon, an old one, other settings, a usage error, a time-out) returns from
:func:`run` and the full command runs as it always did, printing the same bytes, only slower.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping

try:  # the same BLAKE2 as hashlib's, without loading OpenSSL (milliseconds at every start)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

DAEMON_WAIT_SEC = 30.0
"""How long a search waits for the capture daemon's answer before it searches itself."""
REQUEST_LIMIT = 128 * 1024
"""A longer request line is not sent (the full command runs); the daemon reads up to 256 KiB."""
ENV_LIMIT = 1024
"""An environment of more variables (or a name longer than :data:`NAME_LIMIT`) is not
described: the full command runs."""
NAME_LIMIT = 256
TERMINAL_ENV = (
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "COLUMNS",
    "LINES",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
)
"""The variables the table's console reads; sent as they are (values up to :data:`NAME_LIMIT`)."""
SLOW_FLAGS = frozenset({"-h", "--help", "--debug", "--version"})
"""Any of these on the command line: the full command (help, tracebacks, the version)."""


def wants_fast_path(argv: list[str]) -> bool:
    """``search …`` with no help, debug or version flag, on a system with Unix sockets."""
    return (
        bool(argv)
        and argv[0] == "search"
        and not SLOW_FLAGS & set(argv)
        and hasattr(os, "getuid")
        and len(argv) <= 256
    )


def env_digests(environ: Mapping[str, str], key: bytes) -> dict[str, str]:
    """Each variable's name and a keyed digest of its ``NAME=value`` (never the value)."""
    return {
        name: blake2b(
            f"{name}={value}".encode("utf-8", "surrogateescape"), key=key, digest_size=16
        ).hexdigest()
        for name, value in environ.items()
    }


def terminal_size() -> tuple[int, int] | None:
    """The size of the first of stdin, stdout, stderr that is a terminal, as a console finds
    it."""
    for fd in (0, 1, 2):
        try:
            columns, lines = os.get_terminal_size(fd)
        except (AttributeError, ValueError, OSError):
            continue
        return columns, lines
    return None


def request_line(argv: list[str]) -> bytes | None:
    """The request for ``argv`` (``search …``), or ``None`` when it would be too big."""
    from agents_memory.paths import login_name

    names = list(os.environ)
    if len(names) > ENV_LIMIT or any(len(name) > NAME_LIMIT for name in names):
        return None
    if len({name.upper() for name in names}) != len(names):
        return None  # two names differing only in case: which one the settings read is moot
    key = os.urandom(16)
    stdout = sys.stdout
    line = {
        "cli": {
            "argv": argv,
            "login": login_name(),
            "key": key.hex(),
            "env": env_digests(os.environ, key),
            "terminal": {
                "isatty": bool(stdout.isatty()),
                "encoding": stdout.encoding,
                "size": terminal_size(),
                "env": {
                    name: os.environ[name][:NAME_LIMIT]
                    for name in TERMINAL_ENV
                    if name in os.environ
                },
            },
        }
    }
    data = json.dumps(line).encode("utf-8", "surrogateescape")
    return data if len(data) <= REQUEST_LIMIT else None


def run(argv: list[str]) -> None:
    """Print the daemon's answer and exit with its code; return (nothing printed) when the
    full command has to run instead."""
    try:
        answered = _ask(argv)
    except KeyboardInterrupt:
        sys.exit(130)
    if answered is None:
        return
    out, err, code = answered
    try:
        sys.stderr.write(err)  # the command writes its notes before its results
        sys.stderr.flush()
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:  # `search … | head -1`: the reader has gone
        sys.exit(_broken_pipe())
    sys.exit(code)


def _broken_pipe() -> int:
    """End as the full command ends when its reader has gone (click's and rich's way): nothing
    more printed, no traceback, exit code 1. The standard streams are pointed at /dev/null so
    that the interpreter's last flush of what is still buffered fails silently too."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError, AttributeError):
            continue
    os.close(devnull)
    return 1


def _ask(argv: list[str]) -> tuple[str, str, int] | None:
    from agents_memory.hooks.fast import ask_daemon
    from agents_memory.paths import brief_socket_path

    path = brief_socket_path()
    try:
        line = request_line(argv) if path.exists() else None
    except (OSError, UnicodeError, ValueError, AttributeError):
        line = None
    answer = (
        None if line is None else ask_daemon(str(path), line, time.monotonic() + DAEMON_WAIT_SEC)
    )
    try:
        data = json.loads(answer or "")
        out, err, code = data["out"], data["err"], data["code"]
    except (ValueError, KeyError, TypeError):
        return None
    if not (isinstance(out, str) and isinstance(err, str) and type(code) is int):
        return None
    return out, err, code
