"""``memory-capture backfill``: import existing history, with progress and a summary.

Safe while the daemon runs: both go through the same per-file cursor lock and idempotent keys.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from agents_memory.capture.discovery import Catalog
from agents_memory.capture.pipeline import FileOutcome, Ingestor
from agents_memory.config import Settings
from agents_memory.store import database
from agents_memory.store.memories import ensure_user
from agents_memory.store.vectors import vector_status


@dataclass(slots=True)
class PlatformTotals:
    files: int = 0
    inserted: int = 0
    updated: int = 0
    skipped: int = 0
    dropped: int = 0
    issues: int = 0
    bytes_read: int = 0
    unknown: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class BackfillReport:
    platforms: dict[str, PlatformTotals] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def stored(self) -> int:
        return sum(p.inserted + p.updated for p in self.platforms.values())

    @property
    def turns_seen(self) -> int:
        return sum(p.inserted + p.updated + p.skipped for p in self.platforms.values())

    def add(self, outcome: FileOutcome) -> None:
        totals = self.platforms.setdefault(outcome.platform, PlatformTotals())
        totals.files += 1
        totals.inserted += outcome.inserted
        totals.updated += outcome.updated
        totals.skipped += outcome.skipped
        totals.dropped += outcome.dropped
        totals.issues += outcome.issues
        totals.bytes_read += outcome.bytes_read
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
    files = sorted(catalog.transcripts(since), key=lambda item: _mtime(item[0]))
    db = database.open_database(settings)
    report = BackfillReport()
    started = time.perf_counter()
    with database.connect(db) as conn:
        user_id = ensure_user(conn, settings.user_name)
        has_vector = vector_status(conn).enabled
        conn.commit()
        ingestor = Ingestor(settings, user_id=user_id, has_vector=has_vector, home=catalog.home)
        for done, (path, adapter) in enumerate(files, start=1):
            try:
                report.add(ingestor.ingest_file(conn, path, adapter, final=True))
            except OSError:
                report.platforms.setdefault(adapter.name, PlatformTotals()).issues += 1
            if progress is not None:
                progress(path, done, len(files))
    report.seconds = time.perf_counter() - started
    return report


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
