"""``memory-capture status``: per platform files, rows, last capture, lag, unknown kinds,
errors; and whether the daemon runs."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.admission.project_switch import memory_off
from agents_memory.capture.daemon import running_pid
from agents_memory.capture.discovery import Catalog, Unreadable
from agents_memory.config import Settings
from agents_memory.recall.prompt_report import prompts_today
from agents_memory.store import database
from agents_memory.store import tags as tag_store
from agents_memory.store.capture import cursors as cursor_store
from agents_memory.store.capture.pause import active_pauses, pause_sentence
from agents_memory.store.health import rows_per_platform
from agents_memory.store.search import find_user_id


@dataclass(slots=True)
class PlatformStatus:
    files_on_disk: int = 0
    files_tracked: int = 0
    rows: int = 0
    last_capture_at: datetime | None = None
    lag_bytes: int = 0
    """Bytes written to transcripts that are not captured yet (this device)."""
    files_behind: int = 0
    issues: int = 0
    last_issue: str | None = None
    repaired: int = 0
    """Records kept after their invalid UTF-8 was replaced by U+FFFD."""
    unknown_kinds: dict[str, int] = field(default_factory=dict)
    stored_apart: int = 0
    """Rows whose client id another session's turn holds: stored apart under a session-scoped
    key (a proxy or a local model server reusing ``msg_1``), never written over the other."""


@dataclass(slots=True)
class CaptureStatus:
    device: str
    daemon_pid: int | None
    database: str
    platforms: dict[str, PlatformStatus] = field(default_factory=dict)
    installed: dict[str, list[str]] = field(default_factory=dict)
    """Per client (and ``systemd``): our hook, MCP and service entries found on disk."""
    coldpath: dict[str, Any] | None = None
    """Backlog, last run and per-job counts, LLM use (``coldpath.status``)."""
    problems: list[str] = field(default_factory=list)
    unreadable: list[dict[str, str]] = field(default_factory=list)
    """Transcripts and directories this user cannot read: ``path``, ``reason``, ``platform``
    (each also a problem)."""
    paused: str | None = None
    """``memory capture is paused (…)`` while a pause holds on this device."""
    paused_projects: list[str] = field(default_factory=list)
    """Projects paused in the tag registry (``tags set NAME --paused``): not captured."""
    bad_records: list[dict[str, Any]] = field(default_factory=list)
    """Transcripts with records capture skipped: ``path``, ``platform``, ``count``,
    ``last_issue`` (why the last one was skipped); each also a problem."""
    project_opted_out: str | None = None
    """The opt-out marker (``.agents-memory/no-memory``) of the project of the directory
    ``status`` ran in, when it has one: that project is not captured nor recalled."""
    prompts: dict[str, Any] | None = None
    """Per-prompt recall today: prompts recalled for, how many got memories, the newest of
    those (:func:`agents_memory.recall.prompt_report.prompts_today`)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def paused_project_names(conn: psycopg.Connection[Any]) -> list[str]:
    """The paused projects' names (their aliases are paused with them)."""
    return sorted(t.name for t in tag_store.paused_project_tags(conn) if t.alias_of is None)


def untrusted_hooks(installed: dict[str, list[str]]) -> list[str]:
    """Codex skips hooks it has not trusted, silently: ours present in ``hooks.json`` without
    their trust entries in ``config.toml`` is a problem."""
    codex = installed.get("codex-cli", [])
    hooks = any("hooks.json" in entry for entry in codex)
    if not hooks or any(entry.endswith(": hook trust") for entry in codex):
        return []
    return [
        "codex-cli: Codex has not trusted our hooks (it skips untrusted hooks without a word, "
        "so sessions get no brief): run `memory-capture install --platform codex-cli` with "
        "`codex` on PATH, or approve them in Codex"
    ]


def capture_status(
    settings: Settings, catalog: Catalog, pid_file: Path, *, cwd: Path | None = None
) -> CaptureStatus:
    """The status; ``cwd``: the directory whose project's opt-out is shown."""
    status = CaptureStatus(
        device=settings.device_name, daemon_pid=running_pid(pid_file), database="?"
    )
    marker = memory_off(cwd) if cwd is not None else None
    status.project_opted_out = str(marker) if marker else None
    status.platforms = {adapter.name: PlatformStatus() for adapter in catalog.adapters}
    from agents_memory.install.installer import installed_entries

    status.installed = installed_entries(catalog.home)
    status.problems.extend(untrusted_hooks(status.installed))
    on_disk = _files_on_disk(status, catalog)
    try:
        db = database.locate_database(settings)
        status.database = db.description
        with database.connect(db, connect_timeout=5) as conn:
            tracked = cursor_store.list_cursors(conn, settings.device_name)
            from agents_memory.coldpath.status import coldpath_status

            status.coldpath = coldpath_status(conn, settings).as_dict()
            rows = rows_per_platform(conn, settings.device_name)
            status.paused = pause_sentence(active_pauses(conn, settings.device_name))
            status.paused_projects = paused_project_names(conn)
            status.prompts = _prompts(conn, settings)
    except Exception as exc:  # status must explain, not crash
        status.problems.append(f"database: {exc}")
        return status
    for cursor in tracked:
        item = status.platforms.setdefault(cursor.platform, PlatformStatus())
        item.files_tracked += 1
        item.issues += cursor.issues
        item.repaired += cursor.repaired
        item.last_issue = cursor.last_issue or item.last_issue
        if cursor.last_capture_at and (
            item.last_capture_at is None or cursor.last_capture_at > item.last_capture_at
        ):
            item.last_capture_at = cursor.last_capture_at
        kinds = Counter(item.unknown_kinds)
        kinds.update(cursor.unknown_kinds)
        item.unknown_kinds = dict(kinds)
        size = on_disk.get(cursor.path)
        if size is not None and size > cursor.offset:
            item.lag_bytes += size - cursor.offset
            item.files_behind += 1
    _name_bad_records(status, tracked)
    _set_rows(status, rows)
    if status.daemon_pid is None:
        status.problems.append(
            "the capture daemon is not running: start it with `memory-capture start` "
            "(or `memory-capture install` for the service)"
        )
    return status


def _files_on_disk(status: CaptureStatus, catalog: Catalog) -> dict[str, int]:
    """Each transcript's size by path, counted per client; an unreadable one is a problem."""
    on_disk: dict[str, int] = {}
    unreadable: list[Unreadable] = []
    for path, adapter in catalog.transcripts(unreadable=unreadable):
        status.platforms[adapter.name].files_on_disk += 1
        try:
            on_disk[str(path)] = path.stat().st_size
        except OSError:
            continue
    for lost in unreadable:
        status.unreadable.append(
            {"path": str(lost.path), "reason": lost.reason, "platform": lost.platform}
        )
        status.problems.append(f"{lost.platform}: {lost}")
    return on_disk


def _prompts(conn: psycopg.Connection[Any], settings: Settings) -> dict[str, Any] | None:
    """Per-prompt recall today for the settings' user (``None`` before the user exists)."""
    user_id = find_user_id(conn, settings.user_name)
    return prompts_today(conn, user_id) if user_id is not None else None


def _set_rows(status: CaptureStatus, rows: dict[str, tuple[int, int]]) -> None:
    """Each client's stored rows, and those stored apart under a session-scoped key."""
    for name, (count, apart) in rows.items():
        item = status.platforms.setdefault(str(name), PlatformStatus())
        item.rows, item.stored_apart = count, apart


def _name_bad_records(status: CaptureStatus, tracked: list[cursor_store.Cursor]) -> None:
    """Each file with skipped records, by name, with how many and why the last one was."""
    for cursor in sorted(tracked, key=lambda c: c.path):
        if not cursor.issues:
            continue
        why = cursor.last_issue or "no reason kept"
        status.bad_records.append(
            {
                "path": cursor.path,
                "platform": cursor.platform,
                "count": cursor.issues,
                "last_issue": why,
            }
        )
        records = "record" if cursor.issues == 1 else "records"
        status.problems.append(
            f"{cursor.platform}: {cursor.path}: {cursor.issues} bad {records} skipped (last: {why})"
        )
