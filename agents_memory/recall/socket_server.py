"""The capture daemon's brief service: session-start hooks ask it for the brief over a Unix
stream socket (mode 0600), so the hook process needs no database driver and no settings.

One request per connection: a JSON line ``{"platform": P, "event": {…client hook JSON…}}``;
the answer is ``ok\\n<what the hook prints>`` (the brief in the client's envelope) or
``err\\n``. Served one at a time on a dedicated database connection; a failure answers ``err``
and the hook builds the brief itself.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import names
from agents_memory.config import Settings
from agents_memory.errors import AgentsMemoryError
from agents_memory.recall.session import hook_output
from agents_memory.store import database
from agents_memory.store.memories import ensure_user

log = logging.getLogger(__name__)

REQUEST_LIMIT = 256 * 1024


class BriefServer:
    """A companion of the capture daemon (:class:`agents_memory.capture.daemon.Companion`)."""

    def __init__(self, settings: Settings, path: Path) -> None:
        self.settings = settings
        self.path = path
        self.stop = threading.Event()
        self._sock: socket.socket | None = None
        self._conn: psycopg.Connection[Any] | None = None
        self._user_id: int | None = None

    def start(self, stop: threading.Event) -> None:
        self.stop = stop
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.unlink(missing_ok=True)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(str(self.path))
            self.path.chmod(0o600)
            sock.listen(16)
            sock.settimeout(0.5)
        except OSError as exc:
            log.warning("cannot serve briefs on %s: %s", self.path, exc)
            return
        self._sock = sock
        threading.Thread(target=self._serve, daemon=True, name="briefs").start()

    def tick(self) -> None:
        """Nothing to do on the daemon's loop: requests are served by their own thread."""

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self.path.unlink(missing_ok=True)
            self._sock = None

    def _serve(self) -> None:
        assert self._sock is not None
        while not self.stop.is_set():
            try:
                client, _addr = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            with client:
                client.settimeout(self.settings.hook_timeout_ms / 1000)
                try:
                    client.sendall(self._answer(client))
                except OSError:
                    continue
        self._drop()

    def _answer(self, client: socket.socket) -> bytes:
        try:
            request = json.loads(_read_line(client))
            platform = request.get("platform")
            event = request.get("event") or {}
            if platform not in names() or not isinstance(event, dict):
                return b"err\n"
            brief = self._brief(platform, event)
        except (OSError, ValueError, psycopg.Error, AgentsMemoryError) as exc:
            log.warning("could not serve a brief: %s", exc)
            self._drop()
            return b"err\n"
        return b"ok\n" + brief.encode("utf-8")

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


def _read_line(client: socket.socket) -> bytes:
    data = b""
    while b"\n" not in data and len(data) < REQUEST_LIMIT:
        chunk = client.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.split(b"\n", 1)[0]
