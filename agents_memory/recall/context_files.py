"""The brief in the managed context files of clients that cannot inject one from a hook (Grok's
rules file, Antigravity's ``GEMINI.md``): a companion of the capture daemon rewrites the block
between our markers with the compact brief every few minutes."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.config import Settings
from agents_memory.errors import AgentsMemoryError
from agents_memory.install.installer import refresh_context_blocks
from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.store.entry import open_user_connection

log = logging.getLogger(__name__)

REFRESH_SEC = 300.0
"""How often the brief in Grok's and Antigravity's managed context files is rewritten."""
BRIEF_CHARS = 4000


class ContextFiles:
    """A companion of the capture daemon (:class:`agents_memory.capture.daemon.Companion`):
    refreshes the context files under ``home`` on the first tick and every
    :data:`REFRESH_SEC` after. Never fatal."""

    def __init__(self, settings: Settings, home: Path) -> None:
        self.settings = settings
        self.home = home
        self._next = 0.0
        self._conn: psycopg.Connection[Any] | None = None
        self._user_id: int | None = None

    def start(self, stop: threading.Event) -> None:
        """Nothing to start: the work happens on :meth:`tick`."""

    def tick(self) -> None:
        if time.monotonic() < self._next:
            return
        self.refresh()
        self._next = time.monotonic() + REFRESH_SEC

    def refresh(self) -> list[Path]:
        """Rewrite the blocks now; the files that changed."""
        try:
            conn, user_id = self._connection()
            brief = build_brief(
                conn,
                self.settings,
                user_id,
                BriefRequest.compact(self.settings, platform=None, cwd=None, max_chars=BRIEF_CHARS),
            )
            conn.rollback()
            changed = refresh_context_blocks(self.home, brief)
        except (psycopg.Error, AgentsMemoryError, OSError) as exc:
            log.warning("could not refresh the context files' brief: %s", exc)
            self.close()
            return []
        for path in changed:
            log.info("refreshed the memory brief in %s", path)
        return changed

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
        self._conn = None

    def _connection(self) -> tuple[psycopg.Connection[Any], int]:
        if self._conn is None or self._conn.closed or self._user_id is None:
            opened = open_user_connection(self.settings, connect_timeout=5)
            self._conn, self._user_id = opened.conn, opened.user_id
        return self._conn, self._user_id
