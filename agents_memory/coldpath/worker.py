"""The Cold Path worker: one per shared pool, woken by NOTIFY or the clock, running the jobs.

* **Singleton with failover.** The worker holds ``pg_try_advisory_lock`` on a dedicated,
  non-pooled connection (:func:`~agents_memory.store.coldpath.coldqueue.connect_for_lock`, TCP
  keepalives on both ends). A worker that does not get it stands by and tries again every
  ``COLD_PATH_INTERVAL_SEC``: when the holder dies its backend exits, the lock is free, and a
  standby takes over within one interval.
* **Wake-ups.** The holder LISTENs on ``agents_memory_new`` (the capture pipeline NOTIFYs after
  storing rows) on the lock connection and otherwise ticks every ``COLD_PATH_INTERVAL_SEC``. A
  tick runs every enabled job once (one batch each) in registry order; while any job found
  work the next tick follows at once, so a backlog drains without waiting for the clock.
  Beside the ticks, the fresh lane (:mod:`.fresh`) embeds live turns at once on its own
  thread, so that a new turn does not wait for the tick under way.
* **--once** (:meth:`ColdPathWorker.run_once`): take the lock (or refuse: another worker has
  it), let every job drain its whole backlog, return.
* **Stopping.** :meth:`ColdPathWorker.request_stop` (the CLI calls it on SIGTERM/SIGINT/SIGHUP)
  lets the current batch finish and commit, then the loop returns and the lock is released.
* **Failures.** A job that raises is logged with its traceback and the tick goes on; a lost
  database connection raises :class:`DatabaseError` (the CLI exits 1 and systemd restarts it).
  Every job run is recorded in ``coldpath_runs`` for ``status``/``doctor``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import pq

from agents_memory.coldpath.base import LLM, Job, JobContext
from agents_memory.coldpath.fresh import FreshLane
from agents_memory.config import Settings
from agents_memory.errors import ColdPathBusy, DatabaseError, first_line
from agents_memory.store import database, team
from agents_memory.store.coldpath import coldqueue
from agents_memory.store.coldpath.coldqueue import JobReport
from agents_memory.store.memories import ensure_user

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder

log = logging.getLogger(__name__)

WAIT_SLICE_SEC = 0.25
"""How often a waiting worker looks at its stop flag."""
MAX_DRAIN_PASSES = 100


class ColdPathWorker:
    def __init__(
        self,
        settings: Settings,
        db: database.Database,
        *,
        jobs: Sequence[Job],
        llm: LLM | None = None,
        embedder: Embedder | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        fresh_embedder: Embedder | None = None,
    ) -> None:
        """``fresh_embedder``: a second embedder (normal priority) for the fresh lane
        (:mod:`.fresh`), which :meth:`serve` runs while it holds the lock and the embedder job
        is enabled; ``None``: new turns wait for the embedder job."""
        self.settings = settings
        self.db = db
        self.jobs = list(jobs)
        self.llm = llm
        self.embedder = embedder
        self.progress = progress
        self.holding = False
        self.ticks = 0
        """Completed ticks."""
        self._stop = threading.Event()
        self._lock_conn: psycopg.Connection[Any] | None = None
        self._work_conn: psycopg.Connection[Any] | None = None
        self._user_id: int | None = None
        self._notes: dict[str, tuple[str, ...]] = {}
        self._disabled_logged: set[str] = set()
        self.fresh_lane: FreshLane | None = None
        if fresh_embedder is not None and any(
            j.name == "embedder" and j.enabled(settings) for j in self.jobs
        ):
            self.fresh_lane = FreshLane(settings, db, fresh_embedder)

    # --- lifecycle ------------------------------------------------------------------------
    def request_stop(self) -> None:
        self._stop.set()

    def stopping(self) -> bool:
        return self._stop.is_set()

    def close(self) -> None:
        """Stop the fresh lane, release the lock and close both connections (idempotent)."""
        if self.fresh_lane is not None:
            self.fresh_lane.stop()
        for conn in (self._work_conn, self._lock_conn):
            if conn is not None and not conn.closed:
                try:
                    if conn is self._lock_conn and self.holding:
                        coldqueue.unlock(conn)
                finally:
                    conn.close()
        self.holding = False
        self._work_conn = self._lock_conn = None

    def __enter__(self) -> ColdPathWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the lock -------------------------------------------------------------------------
    def try_acquire(self) -> bool:
        """Take the singleton lock if it is free (and start listening for new rows)."""
        if self.holding:
            return True
        conn = self._lock_connection()
        if not coldqueue.try_lock(conn):
            return False
        coldqueue.listen_for_new_rows(conn)
        self.holding = True
        log.info("Cold Path lock taken on %s; this worker runs the jobs", self.settings.device_name)
        return True

    def holder(self) -> coldqueue.LockHolder | None:
        return coldqueue.lock_holder(self._lock_connection())

    def _announce(self) -> None:
        """Connect before the warm-up, so that ``status`` sees a worker starting (its
        application name) rather than none; a database not up yet is retried after it."""
        try:
            self._lock_connection()
        except DatabaseError as exc:
            log.info("%s; trying again after the warm-up", exc)

    def _lock_connection(self) -> psycopg.Connection[Any]:
        if self._lock_conn is None or self._lock_conn.closed:
            name = f"{coldqueue.LOCK_APPLICATION_PREFIX} {self.settings.device_name} {os.getpid()}"
            try:
                self._lock_conn = coldqueue.connect_for_lock(
                    self.db.conninfo, application_name=name
                )
            except psycopg.OperationalError as exc:
                raise DatabaseError(
                    f"cannot connect to {self.db.description}: {first_line(exc)}"
                ) from exc
        return self._lock_conn

    # --- running --------------------------------------------------------------------------
    def run_once(self) -> list[JobReport]:
        """Drain every job's backlog once and return what was done (the lock is required)."""
        if not self.try_acquire():
            holder = self.holder()
            raise ColdPathBusy(
                "another Cold Path worker is running"
                + (f": {holder.description}" if holder else "")
                + "; it is already working through the backlog"
            )
        totals: dict[str, JobReport] = {}
        try:
            for _ in range(MAX_DRAIN_PASSES):
                reports = self.tick(drain=True)
                for report in reports:
                    _merge(totals.setdefault(report.name, JobReport(report.name)), report)
                if self.stopping() or not any(r.did_work for r in reports):
                    break
        except psycopg.OperationalError as exc:
            raise DatabaseError(f"lost the database: {first_line(exc)}") from exc
        return list(totals.values())

    def serve(self) -> None:
        """Run until :meth:`request_stop`: stand by for the lock, then tick on NOTIFY or the
        interval. Raises :class:`DatabaseError` when the database goes away."""
        interval = self.settings.cold_path_interval_sec
        try:
            self._announce()
            self._sleep(self.settings.cold_path_warmup_sec)
            standing_by = False
            while not self.stopping():
                if not self.holding:
                    if not self.try_acquire():
                        if not standing_by:
                            holder = self.holder()
                            log.info(
                                "another Cold Path worker holds the lock (%s); standing by",
                                holder.description if holder else "?",
                            )
                            standing_by = True
                        self._sleep(interval)
                        continue
                    standing_by = False
                    if self.fresh_lane is not None:
                        self.fresh_lane.start()
                reports = self.tick()
                if self.stopping():
                    break
                if any(r.did_work for r in reports):
                    self._drain_notifications()
                    continue
                self._wait_for_notify(interval)
        except psycopg.OperationalError as exc:
            raise DatabaseError(f"lost the database: {first_line(exc)}") from exc
        finally:
            if self.fresh_lane is not None:
                self.fresh_lane.stop()

    def tick(self, *, drain: bool = False) -> list[JobReport]:
        """Run every enabled job once; record each run."""
        conn = self._work_connection()
        now = datetime.now(UTC)
        reports: list[JobReport] = []
        for job in self.jobs:
            if self.stopping():
                break
            if not job.enabled(self.settings):
                if job.name not in self._disabled_logged:
                    log.info("Cold Path job %s is disabled by the configuration", job.name)
                    self._disabled_logged.add(job.name)
                continue
            report = self._run_for_everyone(job, conn, now, drain=drain)
            reports.append(report)
            coldqueue.record_run(conn, report, now=now, device_name=self.settings.device_name)
            conn.commit()
            self._log_report(report)
        self.ticks += 1
        return reports

    def _run_for_everyone(
        self, job: Job, conn: psycopg.Connection[Any], now: datetime, *, drain: bool
    ) -> JobReport:
        """``job`` for the settings' user, or, as a team's Cold Path, for every person (one
        report summing theirs)."""
        people = team.people_for_coldpath(conn)
        if people is None:
            return self._run_job(job, conn, now, self._user(conn), drain=drain)
        total = JobReport(job.name)
        for user_id in people:
            report = self._run_job(job, conn, now, user_id, drain=drain)
            total.processed += report.processed
            total.failed += report.failed
            total.skipped += report.skipped
            total.llm_calls += report.llm_calls
            total.heuristic += report.heuristic
            total.notes.extend(n for n in report.notes if n not in total.notes)
        return total

    def _run_job(
        self, job: Job, conn: psycopg.Connection[Any], now: datetime, user_id: int, *, drain: bool
    ) -> JobReport:
        ctx = JobContext(
            conn=conn,
            settings=self.settings,
            user_id=user_id,
            now=now,
            llm=self.llm,
            embedder=self.embedder,
            batch_size=self.settings.cold_path_batch_size,
            drain=drain,
            stop_requested=self._stop.is_set,
            progress=self.progress,
        )
        try:
            report = job.run(ctx)
        except psycopg.Error as exc:
            if conn.broken or conn.closed:
                raise DatabaseError(f"lost the database: {first_line(exc)}") from exc
            log.exception("Cold Path job %s failed", job.name)
            report = JobReport(job.name, notes=[f"crashed: {first_line(exc)}"])
        except Exception as exc:
            log.exception("Cold Path job %s failed", job.name)
            report = JobReport(job.name, notes=[f"crashed: {type(exc).__name__}: {exc}"[:300]])
        if conn.info.transaction_status != pq.TransactionStatus.IDLE:
            log.debug("job %s left a transaction open; rolling it back", job.name)
            conn.rollback()
        return report

    def _log_report(self, report: JobReport) -> None:
        notes = tuple(report.notes)
        if report.did_work:
            log.info(
                "%s: %d processed, %d failed, %d skipped, %d LLM calls, %d heuristic%s",
                report.name,
                report.processed,
                report.failed,
                report.skipped,
                report.llm_calls,
                report.heuristic,
                f" ({'; '.join(notes)})" if notes else "",
            )
        elif notes and self._notes.get(report.name) != notes:
            log.info("%s: %s", report.name, "; ".join(notes))
        self._notes[report.name] = notes

    def _work_connection(self) -> psycopg.Connection[Any]:
        if self._work_conn is None or self._work_conn.closed:
            self._work_conn = database.connect(self.db)
            self._user_id = None
        return self._work_conn

    def _user(self, conn: psycopg.Connection[Any]) -> int:
        if self._user_id is None:
            self._user_id = ensure_user(conn, self.settings.user_name)
            conn.commit()
        return self._user_id

    # --- waiting --------------------------------------------------------------------------
    def _sleep(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def _wait_for_notify(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a NOTIFY (True) or the stop flag; also notices a dead
        lock connection (raises ``OperationalError``)."""
        conn = self._lock_connection()
        deadline = time.monotonic() + seconds
        while not self.stopping():
            left = deadline - time.monotonic()
            if left <= 0:
                coldqueue.ping(conn)  # a lost lock connection surfaces here at the latest
                return False
            woken = False
            for _note in conn.notifies(timeout=min(WAIT_SLICE_SEC, left), stop_after=1):
                woken = True  # the generator ends after one; it holds the connection's lock
            if woken:
                self._drain_notifications()
                return True
        return False

    def _drain_notifications(self) -> None:
        conn = self._lock_connection()
        for _note in conn.notifies(timeout=0.0):
            pass


def _merge(total: JobReport, report: JobReport) -> None:
    total.processed += report.processed
    total.failed += report.failed
    total.skipped += report.skipped
    total.llm_calls += report.llm_calls
    total.heuristic += report.heuristic
    total.notes.extend(n for n in report.notes if n not in total.notes)
