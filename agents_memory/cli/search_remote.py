"""The capture daemon's side of the fast ``mcp-agents-memory search``
(:mod:`agents_memory.cli.fast_search`): the client's command line run by the same ``search``
command (its click parsing, :func:`~agents_memory.cli.search.respond`, its table or JSON), on
the daemon's warm model and open connections, its output captured for the client's terminal.

The daemon answers only a command line that would run the same here as in the client: the
same settings (every variable the settings, their ``.env`` file and the data paths read has
the same digest here, the same login name, and the settings loaded now equal the daemon's),
no ``--debug`` (its log lines are the client's own) and no help. Anything it cannot answer as
the client would, a usage error included, is ``None``: the client runs the full command,
which prints the error itself.
"""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from agents_memory.cli.fast_search import (
    NAME_LIMIT,
    TERMINAL_ENV,
    env_digests,
    wants_fast_path,
)
from agents_memory.cli.search import Find, respond
from agents_memory.cli.search import search as search_command
from agents_memory.cli.tables import Terminal
from agents_memory.config import Settings, SettingsCache
from agents_memory.hooks.fast import RESPONSE_LIMIT
from agents_memory.paths import login_name
from agents_memory.recall.search_request import SearchRequest
from agents_memory.recall.search_service import SearchService

log = logging.getLogger(__name__)

PATH_ENV = (
    "MEMORY_CONFIG_PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_RUNTIME_DIR",
    "TZ",
    "USER",
    "LOGNAME",
    "LNAME",
    "USERNAME",
)
"""Besides the settings' own variables, what the settings and the output depend on: where the
``.env`` file and the data live, the time zone of the times shown, the login name."""


class CapturedStream(io.StringIO):
    """A client's stdout or stderr as the daemon writes it: its text kept, its tty-ness and
    encoding the client's (what the console decides colours and box characters by)."""

    def __init__(self, *, tty: bool, encoding: str) -> None:
        super().__init__()
        self._tty = tty
        self._encoding = encoding

    def isatty(self) -> bool:
        return self._tty

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding


class SearchCommands:
    """What the brief socket calls for a ``{"cli": …}`` request
    (:class:`~agents_memory.recall.socket_server.BriefServer`)."""

    def __init__(self) -> None:
        self._settings = SettingsCache()  # the settings as a fresh read finds them, read again
        # only when the environment or the .env file changed

    def __call__(self, request: Any, searches: SearchService) -> str | None:
        """``{"out", "err", "code"}`` as JSON, or ``None``: the client runs the full
        command."""
        if not isinstance(request, dict):
            return None
        argv = request.get("argv")
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
            return None
        if not wants_fast_path(argv) or not self._same_settings(request, searches.settings):
            return None
        terminal = _terminal(request.get("terminal"))
        if terminal is None:
            return None
        try:
            ctx = search_command.make_context("search", argv[1:])
            with ctx:
                respond(searches.settings, ctx.params, _finder(searches), terminal)
        except Exception as exc:  # a usage error, a refused project, a failure: the client's
            log.debug("the search client runs its own command: %s", exc)
            return None
        answer = json.dumps(
            {"out": _text(terminal.out), "err": _text(terminal.err), "code": 0},
            ensure_ascii=False,
        )
        return answer if len(answer.encode("utf-8")) < RESPONSE_LIMIT - 16 else None

    def _same_settings(self, request: dict[str, Any], settings: Settings) -> bool:
        key, digests = request.get("key"), request.get("env")
        if not (isinstance(key, str) and isinstance(digests, dict)):
            return False
        if request.get("login") != login_name() or settings.log_level == "DEBUG":
            return False
        try:
            own = env_digests(os.environ, bytes.fromhex(key))
        except ValueError:
            return False
        theirs, ours = _by_upper(digests), _by_upper(own)
        if theirs is None or ours is None:
            return False
        names = {name.upper() for name in Settings.model_fields} | set(PATH_ENV)
        if any(theirs.get(name) != ours.get(name) for name in names):
            return False
        return self._settings.load() == settings  # the .env file may have changed since the start


def _by_upper(digests: Mapping[Any, Any]) -> dict[str, str] | None:
    """The digests by upper-cased name (the settings read names case-blind); ``None`` when two
    names differ only in case."""
    upper = {str(name).upper(): str(value) for name, value in digests.items()}
    return upper if len(upper) == len(digests) else None


def _terminal(described: Any) -> Terminal | None:
    """The client's terminal, from its description (``None`` when it is not one)."""
    if not isinstance(described, dict):
        return None
    tty, encoding, size, env = (described.get(k) for k in ("isatty", "encoding", "size", "env"))
    if not (isinstance(tty, bool) and isinstance(encoding, str) and len(encoding) < 64):
        return None
    if not (isinstance(env, dict) and set(env) <= set(TERMINAL_ENV)):
        return None
    if not all(isinstance(v, str) and len(v) <= NAME_LIMIT for v in env.values()):
        return None
    if size is not None and not (
        isinstance(size, list) and len(size) == 2 and all(type(n) is int for n in size)
    ):
        return None
    return Terminal(
        out=CapturedStream(tty=tty, encoding=encoding),
        err=CapturedStream(tty=False, encoding=encoding),
        environ=dict(env),
        size=None if size is None else (size[0], size[1]),
    )


def _finder(searches: SearchService) -> Find:
    def find(
        _settings: Settings, request: SearchRequest, now: datetime, note: Callable[[str], None]
    ) -> dict[str, Any]:
        notes, result = searches.search(request, now)
        for said in notes:
            note(said)
        return result

    return find


def _text(stream: Any) -> str:
    return stream.getvalue() if isinstance(stream, io.StringIO) else ""
