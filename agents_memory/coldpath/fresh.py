"""The fresh lane: a live turn gets its vector within seconds even while a backlog is embedded.

The embedder job works through a backlog one batch a tick, with the model at a lower CPU
priority, and a tick runs every other job too. A turn captured meanwhile waits for the batch
under way, which on a busy machine takes many seconds however small the batches are (a
512-token answer alone needs over half a second of a free core, and a niced model gets little
of a busy one). So the worker that holds the Cold Path lock also runs this lane on a thread of
its own: woken by the capture pipeline's NOTIFY on a connection of its own, it embeds the live
turns that have no vector yet (captured and written within :data:`FRESH_WITHIN`: an import of
old history is the backlog's work) with a second embedder at normal priority and one thread,
one small batch (:data:`~.embedder.FRESH_BATCH_TOKENS`) per wake-up and more while live turns
remain. Rows either side locked are skipped by the other (``SKIP LOCKED``), so a row is never
embedded twice at once. Failures are logged and the lane waits for the next NOTIFY; the
backlog job embeds whatever the lane leaves.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import psycopg

from agents_memory.coldpath.base import JobContext
from agents_memory.coldpath.embedder import EmbedderJob
from agents_memory.config import Settings
from agents_memory.store import database
from agents_memory.store.coldpath import coldqueue
from agents_memory.store.memories import ensure_user

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder

log = logging.getLogger(__name__)

FRESH_WITHIN = timedelta(minutes=10)
"""A row is a live turn when it was captured and its turn was written this recently."""
MAX_BATCHES_PER_WAKE = 8
"""Bounds one wake-up's work (a burst of live turns), so that the lane never drains a
backlog at normal priority."""
WAIT_SLICE_SEC = 0.25


class FreshLane:
    """A thread embedding live turns beside the Cold Path worker's ticks."""

    def __init__(self, settings: Settings, db: database.Database, embedder: Embedder) -> None:
        self.settings = settings
        self.db = db
        self.embedder = embedder
        self.job = EmbedderJob(fresh_within=FRESH_WITHIN)
        self.embedded = 0
        """Rows this lane embedded (tests and benchmarks read it)."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._serve, name="agents-memory-fresh-lane", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Let the batch under way finish, then end the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _serve(self) -> None:
        try:
            listen = coldqueue.connect_for_lock(
                self.db.conninfo, application_name=f"agents-memory fresh lane {os.getpid()}"
            )
        except psycopg.OperationalError as exc:
            log.warning("fresh lane: cannot connect (%s); the backlog job embeds new turns", exc)
            return
        try:
            with listen, database.connect(self.db) as work:
                coldqueue.listen_for_new_rows(listen)
                user_id = ensure_user(work, self.settings.user_name)
                work.commit()
                self._embed_live(work, user_id)  # turns that arrived before the LISTEN
                while not self._stop.is_set():
                    if self._woken(listen):
                        self._embed_live(work, user_id)
        except psycopg.Error as exc:
            log.warning("fresh lane stopped: %s; the backlog job embeds new turns", exc)

    def _woken(self, listen: psycopg.Connection[Any]) -> bool:
        woken = False
        for _note in listen.notifies(timeout=WAIT_SLICE_SEC, stop_after=1):
            woken = True
        if woken:
            for _note in listen.notifies(timeout=0.0):
                pass
        return woken

    def _embed_live(self, conn: psycopg.Connection[Any], user_id: int) -> None:
        for _ in range(MAX_BATCHES_PER_WAKE):
            if self._stop.is_set():
                return
            ctx = JobContext(
                conn=conn,
                settings=self.settings,
                user_id=user_id,
                now=datetime.now(UTC),
                llm=None,
                embedder=self.embedder,
                batch_size=self.settings.cold_path_batch_size,
            )
            report = self.job.run(ctx)
            self.embedded += report.processed
            if report.processed:
                log.debug("fresh lane: embedded %d live turns", report.processed)
            if not report.processed:
                return
