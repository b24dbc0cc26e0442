"""The Cold Path's queue: the singleton lock and its wake-ups, claiming rows to embed, per-row
errors and their cooldowns, backlog counts and the last-run record of every job.

* **Singleton.** One session-level advisory lock (:data:`COLDPATH_LOCK_KEY`) held on a
  dedicated, non-pooled connection for the worker's lifetime (a pooled connection would keep it
  after going back to the pool). When the holder dies its backend exits and the lock is free;
  over TCP the keepalives set by :func:`connect_for_lock` bound how long a silent network drop
  keeps it. :func:`lock_holder` reads ``pg_locks`` to say who holds it right now.
* **Wake-ups.** The lock connection LISTENs (:func:`listen_for_new_rows`) on the channel the
  capture pipeline NOTIFYs after storing rows (:data:`~.memories.NEW_MEMORY_CHANNEL`);
  :func:`ping` makes a lost connection surface while the worker waits.
* **Cooldowns.** A failed row gets ``cold_error`` (``"<job>: <message>"``), one more
  ``cold_attempts`` and ``cold_next_at`` = now + 5 min (active) or 1 h (archived); claims skip
  rows whose ``cold_next_at`` lies ahead (:data:`READY_SQL`). Jobs pass their ``ctx.now`` so
  the clock is explicit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import psycopg

from agents_memory.store.memories import NEW_MEMORY_CHANNEL
from agents_memory.store.passages import CONTEXT_CHARS, PREVIOUS_SQL, passage_text

# "coldpath" as a 64-bit integer; every process of the product uses the same key.
COLDPATH_LOCK_KEY = 0x636F6C6470617468
LOCK_APPLICATION_PREFIX = "agents-memory-coldpath"

ACTIVE_COOLDOWN = timedelta(minutes=5)
ARCHIVED_COOLDOWN = timedelta(hours=1)
ERROR_MAX_CHARS = 1000

READY_SQL = "(m.cold_next_at IS NULL OR m.cold_next_at <= %(now)s)"
"""Claim condition on alias ``m``: not in a retry cooldown at ``%(now)s``."""


# --- the singleton lock ----------------------------------------------------------------------
def connect_for_lock(
    conninfo: str, *, application_name: str, connect_timeout: float = 10.0
) -> psycopg.Connection[Any]:
    """A dedicated autocommit connection for the lock and LISTEN, with TCP keepalives on both
    ends (ignored on Unix sockets) so that a machine that drops off the network loses the lock
    within about a minute instead of at the kernel's two-hour default."""
    return psycopg.connect(
        conninfo,
        autocommit=True,
        connect_timeout=max(1, int(connect_timeout)),
        application_name=application_name[:63],
        keepalives=1,
        keepalives_idle=15,
        keepalives_interval=5,
        keepalives_count=4,
        options="-c tcp_keepalives_idle=15 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=4",
    )


def try_lock(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (COLDPATH_LOCK_KEY,)).fetchone()
    return bool(row and row[0])


def unlock(conn: psycopg.Connection[Any]) -> None:
    conn.execute("SELECT pg_advisory_unlock(%s)", (COLDPATH_LOCK_KEY,))


def listen_for_new_rows(conn: psycopg.Connection[Any]) -> None:
    """Have ``conn`` (autocommit) receive the capture pipeline's NOTIFY on new rows."""
    conn.execute(f"LISTEN {NEW_MEMORY_CHANNEL}")


def ping(conn: psycopg.Connection[Any]) -> None:
    """A round trip: raises ``OperationalError`` when the connection is lost."""
    conn.execute("SELECT 1")


@dataclass(frozen=True, slots=True)
class LockHolder:
    pid: int
    application_name: str | None
    client_addr: str | None
    since: datetime | None

    @property
    def description(self) -> str:
        who = self.application_name or "a Cold Path worker"
        where = f" from {self.client_addr}" if self.client_addr else ""
        return f"{who} (backend pid {self.pid}{where})"


def lock_holder(conn: psycopg.Connection[Any]) -> LockHolder | None:
    """The session holding the Cold Path lock in this database right now, or ``None``."""
    row = conn.execute(
        "SELECT l.pid, a.application_name, a.client_addr::text, a.backend_start"
        " FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
        "  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        "  AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid"
        " LIMIT 1",
        (COLDPATH_LOCK_KEY >> 32, COLDPATH_LOCK_KEY & 0xFFFFFFFF),
    ).fetchone()
    if row is None:
        return None
    return LockHolder(int(row[0]), row[1] or None, row[2], row[3])


def waiting_workers(conn: psycopg.Connection[Any]) -> list[str]:
    """The application names of Cold Path workers connected to this database without the
    lock: warming up before their first try, or standing by behind the holder."""
    rows = conn.execute(
        "SELECT a.application_name FROM pg_stat_activity a"
        " WHERE a.datname = current_database() AND starts_with(a.application_name, %s)"
        "  AND NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid"
        "   AND l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
        "   AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid)"
        " ORDER BY a.backend_start",
        (LOCK_APPLICATION_PREFIX + " ", COLDPATH_LOCK_KEY >> 32, COLDPATH_LOCK_KEY & 0xFFFFFFFF),
    ).fetchall()
    return [str(row[0]) for row in rows]


# --- per-row errors and cooldowns ----------------------------------------------------------
def record_row_error(
    conn: psycopg.Connection[Any], memory_id: int, job: str, error: str, *, now: datetime
) -> None:
    """Note ``job``'s failure on a row and put the row in its retry cooldown."""
    text = f"{job}: {' '.join(error.split())}"[:ERROR_MAX_CHARS]
    conn.execute(
        "UPDATE memory SET cold_error = %(err)s, cold_attempts = cold_attempts + 1,"
        " cold_next_at = %(now)s + CASE WHEN is_active THEN %(active)s ELSE %(archived)s END"
        " WHERE id = %(id)s",
        {
            "err": text,
            "now": now,
            "active": ACTIVE_COOLDOWN,
            "archived": ARCHIVED_COOLDOWN,
            "id": memory_id,
        },
    )


def clear_row_errors(conn: psycopg.Connection[Any], memory_ids: Sequence[int], job: str) -> None:
    """Forget ``job``'s earlier error on rows it has now handled (another job's error stays)."""
    if not memory_ids:
        return
    conn.execute(
        "UPDATE memory SET cold_error = NULL, cold_next_at = NULL"
        " WHERE id = ANY(%s) AND starts_with(cold_error, %s)",
        (list(memory_ids), f"{job}: "),
    )


# --- the embedder's queue ------------------------------------------------------------------
def _claim_order(newest_first: bool) -> str:
    newest = "m.message_at DESC, m.id DESC"
    return " ORDER BY m.is_active DESC, " + (newest if newest_first else "m.created_at, m.id")


def unembedded_candidates(
    conn: psycopg.Connection[Any],
    limit: int,
    *,
    now: datetime,
    newest_first: bool = True,
    since: datetime | None = None,
) -> list[tuple[int, int]]:
    """The next ``limit`` rows to embed in claim order, without locking them: ``(id, length
    of the text to embed)`` pairs (:func:`~.passages.passage_text`'s length, give or take a
    blank context), so that the caller can size a batch before it claims it. ``since``: only
    rows captured since then whose turn is that recent too (live turns, not an import)."""
    recent = "" if since is None else " AND m.created_at >= %(since)s AND m.message_at >= %(since)s"
    rows = conn.execute(
        "SELECT m.id, length(m.message) + coalesce(length(right(" + PREVIOUS_SQL + ","
        " %(context)s)) + 1, 0) FROM memory m WHERE m.embedding IS NULL AND "
        + READY_SQL
        + recent
        + _claim_order(newest_first)
        + " LIMIT %(limit)s",
        {"now": now, "limit": limit, "context": CONTEXT_CHARS, "since": since},
    ).fetchall()
    return [(int(r[0]), int(r[1])) for r in rows]


def claim_unembedded(
    conn: psycopg.Connection[Any],
    limit: int,
    *,
    now: datetime,
    newest_first: bool = True,
    ids: Sequence[int] | None = None,
) -> list[tuple[int, str]]:
    """Lock up to ``limit`` rows without a vector (only rows of ``ids`` when given): active
    first, then the newest turn (by when it was said, index ``memory_embed_claim_time``: a turn
    captured a moment ago is embedded before an old backlog, and imported history from its
    newest end), skipping rows in a cooldown and rows another
    transaction holds. ``newest_first=False`` is the order before issue 24 (oldest first),
    kept for benchmarks. Returns ``(id, text to embed)`` pairs: the message after the end of
    the turn before it (:mod:`agents_memory.store.passages`)."""
    only = "" if ids is None else " AND m.id = ANY(%(ids)s)"
    rows = conn.execute(
        "SELECT m.id, m.message, " + PREVIOUS_SQL + " FROM memory m"
        " WHERE m.embedding IS NULL AND "
        + READY_SQL
        + only
        + _claim_order(newest_first)
        + " LIMIT %(limit)s FOR UPDATE OF m SKIP LOCKED",
        {"now": now, "limit": limit, "ids": list(ids or ())},
    ).fetchall()
    return [(int(r[0]), passage_text(str(r[1]), r[2])) for r in rows]


def count_memories(conn: psycopg.Connection[Any]) -> int:
    """Every row of ``memory``, active or archived (what a reembed rebuilds)."""
    row = conn.execute("SELECT count(*) FROM memory").fetchone()
    return int(row[0]) if row else 0


def count_unembedded(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT count(*) FROM memory WHERE embedding IS NULL").fetchone()
    return int(row[0]) if row else 0


def write_embeddings(
    conn: psycopg.Connection[Any], vectors: Sequence[tuple[int, Any]], model: str
) -> None:
    """Store ``(id, halfvec)`` pairs and the model that made them."""
    with conn.cursor() as cur:
        cur.executemany(
            "UPDATE memory SET embedding = %s, embedding_model = %s WHERE id = %s",
            [(vector, model, memory_id) for memory_id, vector in vectors],
        )


# --- backlog and status --------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Backlog:
    unembedded: int | None
    """Rows without a vector; ``None`` when the database has no vector column."""
    untagged: int
    in_cooldown: int
    """Rows waiting out a retry cooldown after an error."""
    with_error: int
    rows: int = 0
    """Every row of ``memory``: with the two counts above, the totals done (``rows -
    unembedded`` have a vector, ``rows - untagged`` are tagged)."""


def backlog(conn: psycopg.Connection[Any], *, now: datetime, vectors: bool) -> Backlog:
    unembedded: int | None = None
    if vectors:
        unembedded = count_unembedded(conn)
    row = conn.execute(
        "SELECT count(*) FILTER (WHERE NOT tag_processed),"
        " count(*) FILTER (WHERE cold_next_at > %s),"
        " count(*) FILTER (WHERE cold_error IS NOT NULL)"
        " FROM memory WHERE NOT tag_processed OR cold_error IS NOT NULL",
        (now,),
    ).fetchone()
    assert row is not None
    return Backlog(unembedded, int(row[0]), int(row[1]), int(row[2]), count_memories(conn))


@dataclass(frozen=True, slots=True)
class JobRun:
    job: str
    ran_at: datetime
    device_name: str | None
    processed: int
    failed: int
    skipped: int
    llm_calls: int
    heuristic: int
    notes: list[str] = field(default_factory=list)
    worked_at: datetime | None = None
    """The last run that processed or failed a row."""
    total_processed: int = 0
    total_failed: int = 0
    rate_per_sec: float | None = None
    """Rows per second over the worker's recent ticks (``_RATE_SQL``)."""
    rate_at: datetime | None = None


@dataclass(slots=True)
class JobReport:
    """What one run of a Cold Path job did (recorded in ``coldpath_runs``)."""

    name: str
    processed: int = 0
    failed: int = 0
    skipped: int = 0
    llm_calls: int = 0
    heuristic: int = 0
    """Rows handled by the deterministic fallback instead of the LLM."""
    notes: list[str] = field(default_factory=list)

    @property
    def did_work(self) -> bool:
        return bool(self.processed or self.failed)


_SAMPLE = "coldpath_runs.processed / extract(epoch FROM EXCLUDED.ran_at - coldpath_runs.ran_at)"
_MEASURED = (
    " coldpath_runs.processed > 0 AND EXCLUDED.ran_at > coldpath_runs.ran_at"
    " AND EXCLUDED.ran_at - coldpath_runs.ran_at <= interval '15 minutes'"
)
_RATE_SQL = (
    "  rate_per_sec = CASE WHEN" + _MEASURED + " THEN CASE WHEN coldpath_runs.rate_at IS NULL"
    "   OR coldpath_runs.rate_at < EXCLUDED.ran_at - interval '1 hour' THEN "
    + _SAMPLE
    + "   ELSE 0.7 * coldpath_runs.rate_per_sec + 0.3 * "
    + _SAMPLE
    + " END"
    " ELSE coldpath_runs.rate_per_sec END,"
    "  rate_at = CASE WHEN" + _MEASURED + " THEN EXCLUDED.ran_at ELSE coldpath_runs.rate_at END"
)
"""A job's measured rate: the rows its previous run did over the time from that run's tick to
this one's (the worker's own wall-clock progress, other jobs and waits included), averaged
over recent ticks; a gap over 15 minutes is idling, not progress, and measures nothing."""


def record_run(
    conn: psycopg.Connection[Any], report: JobReport, *, now: datetime, device_name: str
) -> None:
    """Upsert ``report`` as its job's last run (and add to the job's totals)."""
    did_work = bool(report.processed or report.failed)
    conn.execute(
        "INSERT INTO coldpath_runs (job, ran_at, device_name, processed, failed, skipped,"
        "  llm_calls, heuristic, notes, worked_at, total_processed, total_failed)"
        " VALUES (%(job)s, %(now)s, %(device)s, %(processed)s, %(failed)s, %(skipped)s,"
        "  %(llm)s, %(heuristic)s, %(notes)s, %(worked)s, %(processed)s, %(failed)s)"
        " ON CONFLICT (job) DO UPDATE SET ran_at = EXCLUDED.ran_at,"
        "  device_name = EXCLUDED.device_name, processed = EXCLUDED.processed,"
        "  failed = EXCLUDED.failed, skipped = EXCLUDED.skipped,"
        "  llm_calls = EXCLUDED.llm_calls, heuristic = EXCLUDED.heuristic,"
        "  notes = EXCLUDED.notes,"
        "  worked_at = coalesce(EXCLUDED.worked_at, coldpath_runs.worked_at),"
        "  total_processed = coldpath_runs.total_processed + EXCLUDED.processed,"
        "  total_failed = coldpath_runs.total_failed + EXCLUDED.failed," + _RATE_SQL,
        {
            "job": report.name,
            "now": now,
            "device": device_name,
            "processed": report.processed,
            "failed": report.failed,
            "skipped": report.skipped,
            "llm": report.llm_calls,
            "heuristic": report.heuristic,
            "notes": list(report.notes),
            "worked": now if did_work else None,
        },
    )


def last_runs(conn: psycopg.Connection[Any]) -> list[JobRun]:
    rows = conn.execute(
        "SELECT job, ran_at, device_name, processed, failed, skipped, llm_calls, heuristic,"
        " notes, worked_at, total_processed, total_failed, rate_per_sec, rate_at"
        " FROM coldpath_runs ORDER BY job"
    ).fetchall()
    return [
        JobRun(
            str(r[0]),
            r[1],
            r[2],
            int(r[3]),
            int(r[4]),
            int(r[5]),
            int(r[6]),
            int(r[7]),
            list(r[8]),
            r[9],
            int(r[10]),
            int(r[11]),
            r[12],
            r[13],
        )
        for r in rows
    ]
