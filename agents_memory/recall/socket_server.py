"""The capture daemon's brief service: session-start hooks ask it for the brief over a Unix
stream socket (mode 0600), so the hook process needs no database driver and no settings.

One request per connection: a JSON line ``{"platform": P, "event": {…client hook JSON…}}``;
the answer is ``ok\\n<what the hook prints>`` (the brief in the client's envelope) or
``err\\n``. A line with a ``search`` key is ``mcp-agents-memory search`` asking
(:mod:`agents_memory.recall.search_service`); its answer is ``ok\\n<JSON>`` or ``err\\n``.
Served one at a time on a dedicated database connection; a failure answers ``err`` and the
hook builds the brief (the command searches) itself.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socketserver
import threading
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import names
from agents_memory.config import Settings
from agents_memory.errors import AgentsMemoryError, SearchRefused, first_line
from agents_memory.recall.search_service import SearchService
from agents_memory.recall.session import hook_output
from agents_memory.store import database
from agents_memory.store.memories import ensure_user

log = logging.getLogger(__name__)

REQUEST_LIMIT = 256 * 1024
POLL_SEC = 0.5
"""How often the serving loop looks for :meth:`BriefServer.close`."""


class BriefServer:
    """A companion of the capture daemon (:class:`agents_memory.capture.daemon.Companion`)."""

    def __init__(self, settings: Settings, path: Path) -> None:
        self.settings = settings
        self.path = path
        self._server: _UnixServer | None = None
        self._thread: threading.Thread | None = None
        self._conn: psycopg.Connection[Any] | None = None
        self._user_id: int | None = None
        self.searches = SearchService(settings)

    def start(self, stop: threading.Event) -> None:
        """Listen and serve on a thread of its own. ``stop`` is not watched: the daemon calls
        :meth:`close` when it stops, which ends the loop."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.unlink(missing_ok=True)
            server = _UnixServer(self.path, self)
        except OSError as exc:
            log.warning("cannot serve briefs on %s: %s", self.path, exc)
            return
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, args=(POLL_SEC,), daemon=True, name="briefs"
        )
        self._thread.start()
        threading.Thread(target=self._warm, daemon=True, name="search-warm").start()

    def _warm(self) -> None:
        """The search's model, loaded while nobody waits for it."""
        try:
            self.searches.warm()
        except Exception as exc:  # the first search loads it (or says why it cannot)
            log.warning("could not load the search model ahead: %s", first_line(exc))

    def tick(self) -> None:
        """Requests are served by their own thread; the loop only lets an idle search
        backend go."""
        self.searches.tick()

    def close(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.shutdown()  # waits for the request being served, if any
        thread.join()
        server.server_close()
        self.path.unlink(missing_ok=True)
        self._server = self._thread = None
        self._drop()
        self.searches.close()

    def answer(self, line: bytes) -> bytes:
        """The answer to one request line: ``ok\n<hook output>`` or ``err\n``."""
        try:
            request = json.loads(line)
            if isinstance(request, dict) and "search" in request:
                return self._search(request)
            platform = request.get("platform")
            event = request.get("event") or {}
            if platform not in names() or not isinstance(event, dict):
                return b"err\n"
            brief = self._brief(platform, event)
        except (OSError, ValueError, AttributeError, psycopg.Error, AgentsMemoryError) as exc:
            log.warning("could not serve a brief: %s", first_line(exc))
            self._drop()
            return b"err\n"
        return b"ok\n" + brief.encode("utf-8")

    def _search(self, request: dict[str, Any]) -> bytes:
        try:
            return b"ok\n" + self.searches.answer(request).encode("utf-8")
        except SearchRefused:
            return b"err\n"
        except (OSError, ValueError, psycopg.Error, AgentsMemoryError) as exc:
            log.warning("could not serve a search: %s", first_line(exc))
            self.searches.drop()
            return b"err\n"

    def _brief(self, platform: str, event: dict[str, Any]) -> str:
        if self._conn is None or self._conn.closed or self._user_id is None:
            db = database.locate_database(self.settings, start=False)
            self._conn = database.connect(
                db, connect_timeout=5, statement_timeout_ms=self.settings.hook_timeout_ms
            )
            self._user_id = ensure_user(self._conn, self.settings.user_name)
            self._conn.commit()
        try:
            return hook_output(self._conn, self.settings, self._user_id, platform, event)
        finally:
            self._conn.rollback()

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
        self._conn = None


class _UnixServer(socketserver.UnixStreamServer):
    """No threading mix-in: requests are served one at a time, so one database connection
    serves them all. The socket is made 0600 before it listens."""

    request_queue_size = 16

    def __init__(self, path: Path, briefs: BriefServer) -> None:
        self.briefs = briefs
        self.path = path
        super().__init__(str(path), _BriefRequest)

    def server_bind(self) -> None:
        super().server_bind()
        self.path.chmod(0o600)

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.warning("a brief request failed", exc_info=True)


class _BriefRequest(socketserver.StreamRequestHandler):
    """One request per connection: a line in (at most :data:`REQUEST_LIMIT` bytes), one
    answer out, within ``HOOK_TIMEOUT_MS`` for each read and write."""

    server: _UnixServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.briefs.settings.hook_timeout_ms / 1000)

    def handle(self) -> None:
        try:
            line = self.rfile.readline(REQUEST_LIMIT)
        except OSError as exc:  # the hook gave up (a timeout)
            log.warning("could not serve a brief: %s", first_line(exc))
            answer = b"err\n"
        else:
            answer = self.server.briefs.answer(line)
        with contextlib.suppress(OSError):
            self.wfile.write(answer)
