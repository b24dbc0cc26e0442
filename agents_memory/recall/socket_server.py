"""The capture daemon's brief service: session-start hooks ask it for the brief over a Unix
stream socket (mode 0600), so the hook process needs no database driver and no settings.

One request per connection: a JSON line ``{"platform": P, "event": {…client hook JSON…}}``;
the answer is ``ok\\n<what the hook prints>`` (the brief in the client's envelope) or
``err\\n``. A line ``{"prompt": {"platform": P, "event": {…}}}`` is the per-prompt hook
asking (:mod:`agents_memory.recall.prompt_hook`; the answer is the same shape). A line with a
``search`` key is ``mcp-agents-memory search`` asking
(:mod:`agents_memory.recall.search_service`); its answer is ``ok\\n<JSON>`` or ``err\\n``.
A line with a ``cli`` key is the fast ``mcp-agents-memory search`` client: the whole command
line, run by the command the entry point handed in (:class:`CommandRunner`; answer
``ok\\n<JSON>`` or ``err\\n``: the client runs the full command).
A failure answers ``err`` and the hook builds its output (the command searches) itself.

Requests are served concurrently by at most :data:`WORKERS` threads, each on a database
connection borrowed for the request (:class:`~agents_memory.recall.connections.Connections`),
so a slow search never holds up a session-start or a per-prompt hook; up to :data:`QUEUED`
more wait for a thread, and a connection beyond that is closed at once (the hook falls back).
"""

from __future__ import annotations

import contextlib
import json
import logging
import socketserver
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import names
from agents_memory.config import Settings
from agents_memory.errors import AgentsMemoryError, SearchRefused, first_line
from agents_memory.recall.connections import Connections
from agents_memory.recall.prompt_hook import prompt_output, switched_off
from agents_memory.recall.search_service import SearchService
from agents_memory.recall.session import hook_output

log = logging.getLogger(__name__)

REQUEST_LIMIT = 256 * 1024
POLL_SEC = 0.5
"""How often the serving loop looks for :meth:`BriefServer.close`."""
WORKERS = 4
"""Requests served at once (threads; each borrows a database connection)."""
QUEUED = 16
"""Requests waiting for a worker at most; one more is closed unanswered (the hook falls back)."""


CommandRunner = Callable[[Any, SearchService], str | None]
"""Runs a client's command line (the ``cli`` request) on the daemon's search service: the
answer's JSON, or ``None`` when the client is to run it itself
(:class:`agents_memory.cli.search_remote.SearchCommands`, handed in by the entry point)."""


class BriefServer:
    """A companion of the capture daemon (:class:`agents_memory.capture.daemon.Companion`)."""

    def __init__(
        self, settings: Settings, path: Path, commands: CommandRunner | None = None
    ) -> None:
        self.settings = settings
        self.path = path
        self.commands = commands
        self._server: _UnixServer | None = None
        self._thread: threading.Thread | None = None
        self._briefs = Connections(settings, statement_timeout_ms=settings.hook_timeout_ms)
        self._prompts = Connections(settings, statement_timeout_ms=settings.prompt_hook_timeout_ms)
        self.searches = SearchService(settings)
        self._warming: threading.Thread | None = None

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
        self.warm_ahead()

    def warm_ahead(self) -> None:
        """Load the search's model on a thread of its own, once: the entry point calls it
        when the daemon starts, so the model loads while the database opens and the
        watches are set up, not after the socket is up (:meth:`start` calls it too)."""
        if self._warming is None:
            self._warming = threading.Thread(target=self._warm, daemon=True, name="search-warm")
            self._warming.start()

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
        server.shutdown()  # stops accepting
        thread.join()
        server.server_close()  # waits for the requests being served
        self.path.unlink(missing_ok=True)
        self._server = self._thread = None
        self._briefs.close()
        self._prompts.close()
        self.searches.close()

    def answer(self, line: bytes) -> bytes:
        """The answer to one request line: ``ok\n<hook output>`` or ``err\n``."""
        what = "brief"
        try:
            request = json.loads(line)
            if isinstance(request, dict) and "search" in request:
                return self._search(request)
            if isinstance(request, dict) and "cli" in request:
                return self._command(request["cli"])
            if isinstance(request, dict) and "prompt" in request:
                what, request = "prompt", request["prompt"]
            platform = request.get("platform")
            event = request.get("event") or {}
            if platform not in names() or not isinstance(event, dict):
                return b"err\n"
            output = (
                self._prompt(platform, event) if what == "prompt" else self._brief(platform, event)
            )
        except (OSError, ValueError, AttributeError, psycopg.Error, AgentsMemoryError) as exc:
            log.warning("could not serve a %s: %s", what, first_line(exc))
            return b"err\n"
        return b"ok\n" + output.encode("utf-8")

    def _search(self, request: dict[str, Any]) -> bytes:
        try:
            return b"ok\n" + self.searches.answer(request).encode("utf-8")
        except SearchRefused:
            return b"err\n"
        except (OSError, ValueError, psycopg.Error, AgentsMemoryError) as exc:
            log.warning("could not serve a search: %s", first_line(exc))
            return b"err\n"

    def _command(self, request: Any) -> bytes:
        if self.commands is None:
            return b"err\n"
        try:
            answer = self.commands(request, self.searches)
        except Exception as exc:  # the client runs the command itself
            log.warning("could not run a search command: %s", first_line(exc))
            return b"err\n"
        return b"err\n" if answer is None else b"ok\n" + answer.encode("utf-8")

    def _brief(self, platform: str, event: dict[str, Any]) -> str:
        with self._briefs.borrow() as (conn, user_id):
            return hook_output(conn, self.settings, user_id, platform, event)

    def _prompt(self, platform: str, event: dict[str, Any]) -> str:
        if switched_off(self.settings, platform, event):
            return ""  # before borrowing a connection: off costs nothing
        with self._prompts.borrow() as (conn, user_id):
            return prompt_output(
                conn,
                self.settings,
                user_id,
                platform,
                event,
                vector=self.searches.prompt_vector,
            )


class _UnixServer(socketserver.UnixStreamServer):
    """Requests are served by a bounded pool of :data:`WORKERS` threads, :data:`QUEUED` more
    wait; beyond that a connection is closed unanswered. The socket is made 0600 before it
    listens."""

    request_queue_size = 16

    def __init__(self, path: Path, briefs: BriefServer) -> None:
        self.briefs = briefs
        self.path = path
        self._workers = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="briefs")
        self._slots = threading.BoundedSemaphore(WORKERS + QUEUED)
        super().__init__(str(path), _BriefRequest)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            log.warning("too many hook requests at once; one was turned away")
            self.shutdown_request(request)
            return
        try:
            self._workers.submit(self._serve, request, client_address)
        except RuntimeError:  # shutting down
            self._slots.release()
            self.shutdown_request(request)

    def _serve(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self._slots.release()

    def server_close(self) -> None:
        super().server_close()
        self._workers.shutdown(wait=True)

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
