"""The ingest pipeline for one transcript file: read past the cursor, parse, filter, redact,
store, advance the cursor — rows and cursor in one transaction — then NOTIFY the Cold Path.

What of a turn may be stored, and in what form (brief echoes, ``<private>`` spans,
``CAPTURE_EXCLUDE``, redaction), is :mod:`agents_memory.admission.admit`'s decision; the
pipeline counts its refusals as ``dropped``. Log lines carry counts, paths and offsets, never
captured text.

Two checks need the database and run in the transaction that stores a batch, so the daemon and
a backfill (its read-ahead thread has no connection) both make them: a **pause** of capture for
the platform on this device (:mod:`agents_memory.store.capture.pause`) stores nothing, records a
``paused`` tombstone per turn and still advances the cursor, so turns written while paused are
never captured later, not even by a rescan; and the **tombstoned keys** among the batch (one
query), which admission then refuses as ``forgotten``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters._jsonl import iter_lines
from agents_memory.adapters.base import Adapter, ParseResult, ReadMode, Turn
from agents_memory.admission.admit import (
    NOTHING_FORGOTTEN,
    Admission,
    Refused,
    create_admission,
)
from agents_memory.capture import tailer
from agents_memory.capture.actions import admitted_actions, store_actions
from agents_memory.capture.warnlimit import FileWarnings
from agents_memory.config import Settings
from agents_memory.errors import first_line
from agents_memory.store import tags as tag_store
from agents_memory.store.actions import NewAction
from agents_memory.store.capture import cursors as cursor_store
from agents_memory.store.capture import pause as pause_store
from agents_memory.store.capture import tombstones as tombstone_store
from agents_memory.store.capture.cursors import Cursor
from agents_memory.store.memories import (
    InsertCounts,
    NewMemory,
    insert_memories,
    notify_new_memories,
)

log = logging.getLogger(__name__)


@dataclass(slots=True)
class FileOutcome:
    """What one pass over one file did."""

    path: Path
    platform: str
    inserted: int = 0
    updated: int = 0
    skipped: int = 0
    collisions: int = 0
    """Turns whose client id another session's turn already holds: stored apart under a scoped
    key (:mod:`agents_memory.store.identity`), the other turn untouched."""
    dropped: int = 0
    """Turns filtered out (brief echoes, fully private turns, excluded projects)."""
    issues: int = 0
    repaired: int = 0
    """Records kept after their invalid UTF-8 was replaced by U+FFFD."""
    restarted: bool = False
    unknown: Counter[str] = field(default_factory=Counter)
    bytes_read: int = 0
    actions: int = 0
    """Actions (tool calls) stored new or completed (:mod:`agents_memory.capture.actions`)."""

    @property
    def stored(self) -> int:
        return self.inserted + self.updated

    def add(self, other: FileOutcome) -> None:
        self.inserted += other.inserted
        self.updated += other.updated
        self.skipped += other.skipped
        self.collisions += other.collisions
        self.dropped += other.dropped
        self.issues += other.issues
        self.repaired += other.repaired
        self.restarted = self.restarted or other.restarted
        self.unknown.update(other.unknown)
        self.bytes_read += other.bytes_read
        self.actions += other.actions


@dataclass(slots=True)
class RegionRead:
    """One region of one file read and turned into rows, without the database: what
    :meth:`Ingestor.store` writes, and the cursor it was read from (``basis``)."""

    path: Path
    mode: ReadMode
    basis: Cursor
    """The cursor the region was read from (before any restart)."""
    region: tailer.Region
    result: ParseResult
    rows: list[NewMemory]
    outcome: FileOutcome
    end: int
    """Where the cursor goes once the rows are stored."""
    tail: str | None
    """The hash of the bytes before ``end`` (the cursor's ``last_line_hash``)."""
    actions: list[NewAction] = field(default_factory=list)
    """The region's tool calls admission let in, stored with ``rows``."""

    @property
    def more(self) -> bool:
        """Whether the file may hold more after ``end`` (read it again right away)."""
        progressed = self.end > self.region.offset or self.region.restarted
        return self.mode == "append" and not self.region.at_eof and progressed

    def advanced(self, cursor: Cursor) -> Cursor:
        """``cursor`` (the one locked when storing) moved past this region."""
        base = cursor.restarted() if self.region.restarted else cursor
        return replace(
            base,
            dev=self.region.dev,
            inode=self.region.inode,
            size=self.region.size,
            offset=self.end,
            last_line_hash=self.tail,
            state=dict(self.result.state),
        )

    def read_from(self, cursor: Cursor) -> bool:
        """Whether this region was read from a cursor at the same place as ``cursor``."""
        return _read_point(self.basis) == _read_point(cursor)


def _read_point(cursor: Cursor) -> tuple[Any, ...]:
    return (
        cursor.offset,
        cursor.size,
        cursor.dev,
        cursor.inode,
        cursor.last_line_hash,
        cursor.state,
    )


class Ingestor:
    """Turns files into stored rows for one user on one device. Stateless between calls
    except for caches; :meth:`read` may run in another thread than the one that stores.
    ``admission`` defaults to the one ``settings`` ask for."""

    def __init__(
        self,
        settings: Settings,
        *,
        user_id: int,
        has_vector: bool,
        home: Path,
        admission: Admission | None = None,
    ) -> None:
        self.settings = settings
        self.user_id = user_id
        self.has_vector = has_vector
        self.home = home
        self.device = settings.device_name
        self.admission = admission or create_admission(settings, home=home)

    # --- one file -----------------------------------------------------------------------
    def ingest_file(
        self,
        conn: psycopg.Connection[Any],
        path: Path,
        adapter: Adapter,
        *,
        final: bool,
        ahead: Iterable[RegionRead] = (),
    ) -> FileOutcome:
        """Read everything new in ``path`` (in chunks, one transaction each). ``ahead`` may
        hold regions of this file already read (by :meth:`read`, from the cursor they name, in
        order): each one whose cursor is still where the file's cursor is when its transaction
        locks it is stored as it is; any other region is read again."""
        total = FileOutcome(path, adapter.name)
        pending = iter(ahead)
        while True:
            step, more = self._ingest_region(conn, path, adapter, final, next(pending, None))
            total.add(step)
            if not more:
                return total

    def _ingest_region(
        self,
        conn: psycopg.Connection[Any],
        path: Path,
        adapter: Adapter,
        final: bool,
        ahead: RegionRead | None,
    ) -> tuple[FileOutcome, bool]:
        with conn.transaction():
            cursor = cursor_store.lock_cursor(conn, adapter.name, self.device, str(path))
            if ahead is not None and ahead.read_from(cursor):
                read: RegionRead | None = ahead
            else:
                read = self.read(path, adapter, cursor, final=final)
            if read is None:
                return FileOutcome(path, adapter.name), False
            self.store(conn, read, cursor)
        return read.outcome, read.more

    def read(
        self, path: Path, adapter: Adapter, cursor: Cursor, *, final: bool
    ) -> RegionRead | None:
        """The next region of ``path`` after ``cursor``, parsed, filtered and redacted into
        rows (no database), or ``None`` when there is nothing new."""
        outcome = FileOutcome(path, adapter.name)
        mode = adapter.read_mode(path)
        region = tailer.read_region(path, cursor, mode, adapter.companions(path))
        if region is None:
            return None
        state = {} if region.restarted else cursor.state
        outcome.restarted = region.restarted
        outcome.bytes_read = len(region.data)
        if region.skipped_long_line is not None:
            outcome.issues += 1
        data = region.data
        final = final and region.at_eof
        try:
            result = adapter.parse(
                path, data, offset=region.offset, state=state, final=final, home=self.home
            )
        except Exception:
            if mode != "append":
                raise
            data = self._without_crashing_lines(path, adapter, region.offset, data, outcome)
            result = adapter.parse(
                path, data, offset=region.offset, state=state, final=final, home=self.home
            )
        if mode == "append" and result.resume_offset <= region.offset and data:
            # One held-back group fills the whole chunk: take it as it is.
            result = adapter.parse(
                path, data, offset=region.offset, state=state, final=True, home=self.home
            )
        fixed = sum(1 for issue in result.issues if issue.repaired)
        outcome.issues += len(result.issues) - fixed
        outcome.repaired += fixed
        outcome.unknown.update(result.unknown_kinds)
        rows = self.prepare(result.turns, outcome)
        actions, _refused = admitted_actions(self.admission, result.actions, device=self.device)
        end = result.resume_offset if mode == "append" else region.end
        if region.skipped_long_line is not None and not region.data:
            end = region.end
        tail = region.fingerprint or tailer.tail_hash(path, end)
        return RegionRead(path, mode, cursor, region, result, rows, outcome, end, tail, actions)

    def store(self, conn: psycopg.Connection[Any], read: RegionRead, cursor: Cursor) -> None:
        """Write ``read``'s rows and advance ``cursor`` (locked by the caller's transaction)
        past them; the counts land in ``read.outcome``."""
        path, region, result, outcome = read.path, read.region, read.result, read.outcome
        if region.restarted:
            log.info(
                "%s changed under its cursor (offset %d); reading it again from the start",
                path,
                cursor.offset,
            )
        if region.skipped_long_line is not None:
            at, length = region.skipped_long_line
            log.warning(
                "%s: skipped a %d-byte line at offset %d (longer than %d bytes)",
                path,
                length,
                at,
                tailer.MAX_LINE_BYTES,
            )
        warnings = FileWarnings(log, path)
        for issue in result.issues:
            what = "kept a repaired" if issue.repaired else "skipped a"
            warnings.warn("%s record at offset %d: %s", what, issue.offset, issue.reason)
        warnings.done()
        pause = pause_store.paused_until(conn, self.device, outcome.platform)
        rows = self._admissible(conn, read, pause)
        counts = self._insert(conn, path, rows, outcome)
        outcome.inserted, outcome.updated = counts.inserted, counts.updated
        outcome.skipped, outcome.collisions = counts.skipped, counts.collisions
        if counts.collisions:
            log.warning(
                "%s: %d turn(s) reuse a message id another session's turn holds;"
                " stored apart under a session-scoped key, the other turn untouched",
                path,
                counts.collisions,
            )
        stored = store_actions(
            conn,
            user_id=self.user_id,
            device=self.device,
            platform=outcome.platform,
            path=path,
            actions=read.actions,
            paused=pause[0],
        )
        outcome.actions = stored.inserted + stored.completed
        cursor_store.save_cursor(
            conn,
            read.advanced(cursor),
            rows=counts.inserted + counts.updated,
            unknown=result.unknown_kinds,
            issues=outcome.issues,
            last_issue=_last_issue(result.issues, region.skipped_long_line),
            repaired=outcome.repaired,
        )
        if counts.inserted or counts.updated:
            notify_new_memories(conn, counts.inserted + counts.updated)

    def _admissible(
        self, conn: psycopg.Connection[Any], read: RegionRead, pause: tuple[bool, datetime | None]
    ) -> list[NewMemory]:
        """``read``'s rows minus what the database says may not be stored now: everything
        while capture is paused (``pause``: whether it is and until when; each turn
        tombstoned as ``paused``), else the turns whose keys have a tombstone (admission
        refuses them as ``forgotten``)."""
        rows, outcome = read.rows, read.outcome
        if not rows:
            return rows
        paused, until = pause
        if paused:
            tombstone_store.bury_paused(conn, ((_turn_key(row), row.message) for row in rows))
            outcome.dropped += len(rows)
            log.info(
                "%s: capture paused for %s%s: %d turn(s) passed over",
                read.path,
                outcome.platform,
                f" until {until.isoformat()}" if until else "",
                len(rows),
            )
            return []
        forgotten = tombstone_store.forgotten_among(conn, map(_turn_key, rows))
        if forgotten:
            outcome.dropped = 0
            rows = self.prepare(read.result.turns, outcome, forgotten=forgotten)
        return self._outside_paused_projects(conn, read, rows)

    def _outside_paused_projects(
        self, conn: psycopg.Connection[Any], read: RegionRead, rows: list[NewMemory]
    ) -> list[NewMemory]:
        """``rows`` less the turns of a paused project (recognised by its git remote or
        root), which are tombstoned as ``paused`` like a paused device's, with their
        sessions' tool calls left out."""
        paused = tag_store.paused_project_tags(conn)
        if not paused or not rows:
            return rows
        kept: list[NewMemory] = []
        passed: list[NewMemory] = []
        for row in rows:
            inside = tag_store.find_tag_for_git(paused, row.git_root, row.git_remote) is not None
            (passed if inside else kept).append(row)
        if not passed:
            return rows
        tombstone_store.bury_paused(conn, ((_turn_key(row), row.message) for row in passed))
        read.outcome.dropped += len(passed)
        gone = {(r.agent_platform, r.session_id) for r in passed}
        gone -= {(r.agent_platform, r.session_id) for r in kept}
        read.actions[:] = [a for a in read.actions if (a.agent_platform, a.session_id) not in gone]
        log.info("%s: %d turn(s) of a paused project passed over", read.path, len(passed))
        return kept

    # --- records the adapter or the database cannot take ------------------------------
    def _without_crashing_lines(
        self, path: Path, adapter: Adapter, offset: int, data: bytes, outcome: FileOutcome
    ) -> bytes:
        """``data`` with every line the adapter raises on blanked out (same length, so offsets
        hold; blank lines are skipped): a record the adapter cannot take (a lone surrogate it
        cannot hash, say) is logged and skipped like malformed JSON, and the file goes on."""
        cleaned = bytearray(data)
        warnings = FileWarnings(log, path)
        for line in iter_lines(data, offset=offset):
            try:
                adapter.parse(
                    path, line.raw + b"\n", offset=line.offset, state={}, final=True, home=self.home
                )
            except Exception as exc:
                warnings.warn("skipped a record at offset %d: %r", line.offset, exc)
                outcome.issues += 1
                start = line.offset - offset
                cleaned[start : start + len(line.raw)] = b" " * len(line.raw)
        warnings.done()
        return bytes(cleaned)

    def _insert(
        self,
        conn: psycopg.Connection[Any],
        path: Path,
        rows: list[NewMemory],
        outcome: FileOutcome,
    ) -> InsertCounts:
        """Insert the batch; if the server rejects it for its content, insert row by row and
        skip (and log) the rows it rejects, so one bad turn never blocks a file forever."""
        try:
            with conn.transaction():
                return insert_memories(conn, self.user_id, rows, has_vector=self.has_vector)
        except _REJECTED_ROW:
            if conn.broken:
                raise
        counts = InsertCounts()
        warnings = FileWarnings(log, path)
        for row in rows:
            try:
                with conn.transaction():
                    counts += insert_memories(conn, self.user_id, [row], has_vector=self.has_vector)
            except _REJECTED_ROW as exc:
                if conn.broken:
                    raise
                warnings.warn(
                    "could not store turn %s: %s",
                    row.external_uuid,
                    first_line(exc),
                )
                outcome.issues += 1
        warnings.done()
        return counts

    # --- turns -> rows ------------------------------------------------------------------
    def prepare(
        self,
        turns: Iterable[Turn],
        outcome: FileOutcome,
        *,
        forgotten: frozenset[tombstone_store.TurnKey] = frozenset(),
    ) -> list[NewMemory]:
        """The rows admission lets in (its refusals count as ``outcome.dropped``);
        ``forgotten`` holds the tombstoned turns among ``turns``."""
        rows: list[NewMemory] = []
        for turn in turns:
            buried = (turn.external_uuid, turn.platform, turn.session_id, turn.role) in forgotten
            admitted = self.admission.captured_turn(
                turn, forgotten={turn.external_uuid} if buried else NOTHING_FORGOTTEN
            )
            if isinstance(admitted, Refused):
                outcome.dropped += 1
                continue
            rows.append(
                NewMemory(
                    agent_platform=turn.platform,
                    role=turn.role,
                    message=admitted.text,
                    raw_message=admitted.raw,
                    external_uuid=turn.external_uuid,
                    message_at=turn.message_at,
                    agent_model=turn.model,
                    subagent=turn.subagent,
                    subagent_model=turn.subagent_model if turn.subagent else None,
                    subagent_role=turn.subagent_role if turn.subagent else None,
                    session_id=turn.session_id,
                    cwd=turn.cwd,
                    git_root=admitted.git.root,
                    git_remote=admitted.git.remote,
                    device_name=self.device,
                    source="capture",
                )
            )
        return rows


def _turn_key(row: NewMemory) -> tombstone_store.TurnKey:
    """``row`` as a tombstone matches it."""
    return (row.external_uuid or "", row.agent_platform, row.session_id, row.role)


_REJECTED_ROW = (
    psycopg.DataError,
    psycopg.IntegrityError,
    psycopg.errors.ProgramLimitExceeded,
    ValueError,
)
"""Errors caused by a row's content (text too long for the full-text index, a character the
driver cannot encode), not by the connection: retried row by row, never as "database down"."""


def _last_issue(issues: list[Any], skipped: tuple[int, int] | None) -> str | None:
    if skipped is not None:
        return f"line at offset {skipped[0]} longer than {tailer.MAX_LINE_BYTES} bytes skipped"
    if issues:
        issue = issues[-1]
        return f"offset {issue.offset}: {issue.reason}"[:500]
    return None
