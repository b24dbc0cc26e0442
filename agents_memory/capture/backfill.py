"""``memory-capture backfill``: import existing history, with progress and a summary.

Safe while the daemon runs: both go through the same per-file cursor lock and idempotent keys.

Throughput: the files are read (parsed, filtered, redacted) a few regions ahead, in a thread of
their own, while the database stores the region before, so Python and the server work at the
same time instead of taking turns. A region read ahead is stored only if the file's cursor,
locked in the transaction that stores it, is still the one it was read from; otherwise (another
process moved the cursor meanwhile) it is read again there, as without the read-ahead. Commits
do not wait for the disk one by one (:func:`~agents_memory.store.capture.cursors.deferred_flush`):
one
flush at the end makes the whole import durable.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from agents_memory.adapters.base import Adapter
from agents_memory.capture.discovery import Catalog, Unreadable
from agents_memory.capture.pipeline import FileOutcome, Ingestor, RegionRead
from agents_memory.config import Settings
from agents_memory.store.capture import cursors as cursor_store
from agents_memory.store.capture.cursors import Cursor
from agents_memory.store.entry import open_user_connection
from agents_memory.store.search import lexemes


@dataclass(slots=True)
class PlatformTotals:
    files: int = 0
    inserted: int = 0
    updated: int = 0
    skipped: int = 0
    """Turns read again whose rows were already stored (idempotent keys)."""
    collisions: int = 0
    """Turns stored apart because another session's turn holds their message id."""
    already_stored: int = 0
    """Rows of these files in the store before this run: what the cursors had captured, plus
    the turns read again (a second run says all of them, and 0 new)."""
    dropped: int = 0
    issues: int = 0
    repaired: int = 0
    """Records kept after their invalid UTF-8 was replaced by U+FFFD."""
    bytes_read: int = 0
    actions: int = 0
    """Actions (tool calls) stored new or completed."""
    unknown: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class BackfillReport:
    platforms: dict[str, PlatformTotals] = field(default_factory=dict)
    seconds: float = 0.0
    unreadable: list[Unreadable] = field(default_factory=list)
    """Transcripts and directories this user could not read (not imported; run again once
    they are readable)."""

    @property
    def stored(self) -> int:
        return sum(p.inserted + p.updated for p in self.platforms.values())

    @property
    def already_stored(self) -> int:
        return sum(p.already_stored for p in self.platforms.values())

    @property
    def actions(self) -> int:
        return sum(p.actions for p in self.platforms.values())

    @property
    def turns_seen(self) -> int:
        return sum(p.inserted + p.updated + p.skipped for p in self.platforms.values())

    def add(self, outcome: FileOutcome, already_stored: int = 0) -> None:
        totals = self.platforms.setdefault(outcome.platform, PlatformTotals())
        totals.files += 1
        totals.already_stored += already_stored
        totals.inserted += outcome.inserted
        totals.updated += outcome.updated
        totals.skipped += outcome.skipped
        totals.collisions += outcome.collisions
        totals.dropped += outcome.dropped
        totals.issues += outcome.issues
        totals.repaired += outcome.repaired
        totals.bytes_read += outcome.bytes_read
        totals.actions += outcome.actions
        for kind, count in outcome.unknown.items():
            totals.unknown[kind] = totals.unknown.get(kind, 0) + count


Progress = Callable[[Path, int, int], None]
"""Called after each file with (path, files done, files total)."""


def backfill(
    settings: Settings,
    catalog: Catalog,
    *,
    since: datetime | None = None,
    progress: Progress | None = None,
) -> BackfillReport:
    """Read every transcript (modified since ``since``) to its end."""
    report = BackfillReport()
    found = catalog.transcripts(since, unreadable=report.unreadable)
    files = sorted(found, key=lambda item: _mtime(item[0]))
    started = time.perf_counter()
    with open_user_connection(settings, prepare=True) as opened:
        conn = opened.conn
        cursors = {c.path: c for c in cursor_store.list_cursors(conn, settings.device_name)}
        conn.commit()
        ingestor = Ingestor(
            settings, user_id=opened.user_id, has_vector=opened.has_vector, home=catalog.home
        )
        with cursor_store.deferred_flush(conn), _ReadAhead(ingestor, files, cursors) as ahead:
            for done, (path, adapter) in enumerate(files, start=1):
                try:
                    outcome = ingestor.ingest_file(
                        conn, path, adapter, final=True, ahead=ahead.regions(path)
                    )
                    prior = cursors.get(str(path))
                    report.add(outcome, already_stored(prior, outcome, adapter.read_mode(path)))
                except OSError as exc:
                    report.platforms.setdefault(adapter.name, PlatformTotals()).issues += 1
                    reason = exc.strerror or str(exc)
                    report.unreadable.append(Unreadable(path, reason, adapter.name))
                if progress is not None:
                    progress(path, done, len(files))
        # the first searches after an import are planned with its rows counted
        lexemes.analyze_grown(conn, {"memory": report.stored, "actions": report.actions})
        conn.commit()
    report.seconds = time.perf_counter() - started
    return report


class _ReadAhead:
    """Reads ``files`` in order in a thread, a few regions ahead of the caller, which takes
    them with :meth:`regions` in the same order."""

    DEPTH = 2
    """Regions waiting at most (each holds up to ``tailer.CHUNK_BYTES`` of file)."""

    def __init__(
        self,
        ingestor: Ingestor,
        files: Sequence[tuple[Path, Adapter]],
        cursors: dict[str, Cursor],
    ) -> None:
        self._ingestor = ingestor
        self._files = files
        self._cursors = cursors
        self._queue: queue.Queue[tuple[Path | None, RegionRead | None]] = queue.Queue(self.DEPTH)
        self._stop = threading.Event()
        self._finished = False
        self._thread = threading.Thread(target=self._run, name="backfill-read-ahead", daemon=True)

    def __enter__(self) -> _ReadAhead:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        while self._thread.is_alive():
            with contextlib.suppress(queue.Empty):
                self._queue.get(timeout=0.05)
        self._thread.join()

    def regions(self, path: Path) -> Iterator[RegionRead]:
        """The regions of ``path`` read ahead, in file order (none if its reading failed:
        the caller then reads the file itself and meets the error there)."""
        while not self._finished:
            item_path, read = self._queue.get()
            if item_path is None:
                self._finished = True
            elif item_path == path:
                if read is None:
                    return
                yield read
            # else: what is left of a file the caller stopped taking regions of

    def _run(self) -> None:
        try:
            for path, adapter in self._files:
                self._read_file(path, adapter)
                if not self._put(path, None):
                    return
        finally:
            self._put(None, None)

    def _read_file(self, path: Path, adapter: Adapter) -> None:
        device = self._ingestor.device
        cursor = self._cursors.get(str(path)) or Cursor(adapter.name, device, str(path))
        try:
            while (read := self._ingestor.read(path, adapter, cursor, final=True)) is not None:
                if not self._put(path, read) or not read.more:
                    return
                cursor = read.advanced(cursor)
        except Exception:  # noqa: S110 - read again (and reported) by the caller
            pass

    def _put(self, path: Path | None, read: RegionRead | None) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put((path, read), timeout=0.1)
            except queue.Full:
                continue
            return True
        return False


def already_stored(prior: Cursor | None, outcome: FileOutcome, mode: str) -> int:
    """How many of one file's rows were in the store before this pass: the rows its cursor
    (``prior``, as this run found it) had captured when the pass went on from there, plus the
    turns read again. A pass that read the file from its start (a new or rewritten file, or a
    client that is always read whole) sees every stored turn again: those are the count."""
    if prior is None or outcome.restarted:
        return outcome.skipped
    read_anything = outcome.inserted or outcome.updated or outcome.skipped or outcome.dropped
    if mode == "append" or not read_anything:
        return prior.rows_captured + outcome.skipped
    return outcome.skipped


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
