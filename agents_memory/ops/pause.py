"""``memory-capture pause`` / ``resume``: the service the CLI and the coming web console call.

A pause lives in the database, per device and platform (or every platform), with an optional
end. The capture pipeline asks for it in every batch's transaction: while paused it stores
nothing and moves the cursor past what was written (each such turn gets a ``paused``
tombstone), so those turns are never captured later. The brief and ``status`` say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import psycopg

from agents_memory.adapters import resolve_client
from agents_memory.errors import AdapterError, OwnerRequestError
from agents_memory.store.capture import pause as pause_store
from agents_memory.store.capture.pause import ALL_PLATFORMS, Pause


@dataclass(slots=True)
class ResumeReport:
    ended: int
    still_paused: list[Pause] = field(default_factory=list)
    """Pauses that still hold capture for the platform resumed (an all-platforms pause)."""


def pause_capture(
    conn: psycopg.Connection[Any],
    device: str,
    *,
    platform: str | None,
    duration: timedelta | None,
    now: datetime,
) -> Pause:
    """Pause capture of ``platform`` (``None``: every platform) on ``device``, for
    ``duration`` (``None``: until resumed); committed."""
    name = _platform(platform)
    until = now + duration if duration is not None else None
    with conn.transaction():
        pause = pause_store.set_pause(conn, device, name, until)
    conn.commit()
    return pause


def resume_capture(
    conn: psycopg.Connection[Any], device: str, *, platform: str | None
) -> ResumeReport:
    """End the pause of ``platform`` (``None``: every pause) on ``device``; committed."""
    name = None if platform is None else _platform(platform)
    with conn.transaction():
        ended = pause_store.clear_pauses(conn, device, name)
        left = pause_store.active_pauses(conn, device)
    conn.commit()
    still = [p for p in left if name is not None and p.platform in (name, ALL_PLATFORMS)]
    return ResumeReport(ended, still)


def describe_pause(pause: Pause, device: str) -> str:
    """What a pause did, in one line (the CLI prints it, the console shows it)."""
    return f"{pause_store.pause_sentence([pause])} on {device}"


def describe_resume(report: ResumeReport, platform: str | None) -> list[str]:
    """What a resume did, in lines (the CLI prints them, the console shows them)."""
    which = f" for {platform}" if platform else ""
    lines = [f"capture resumed{which}" if report.ended else f"capture was not paused{which}"]
    still = pause_store.pause_sentence(report.still_paused)
    if still:
        lines.append(f"still: {still} (resume without a platform ends it)")
    return lines


def capture_pauses(conn: psycopg.Connection[Any], device: str) -> list[Pause]:
    """The pauses in force on ``device`` now."""
    return pause_store.active_pauses(conn, device)


def _platform(platform: str | None) -> str:
    if platform is None or platform == ALL_PLATFORMS:
        return ALL_PLATFORMS
    try:
        return resolve_client(platform).name
    except AdapterError as exc:
        raise OwnerRequestError(str(exc)) from exc
