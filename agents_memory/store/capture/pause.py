"""Capture pauses: per device and platform (``*``: every platform), until a moment or until
resumed. The capture pipeline asks :func:`paused_until` in the transaction of every batch."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg.rows import class_row

from agents_memory.store.capture import MINE

ALL_PLATFORMS: Final = "*"


@dataclass(frozen=True, slots=True)
class Pause:
    device_name: str
    platform: str
    """A platform name, or :data:`ALL_PLATFORMS`."""
    until: datetime | None
    """When it ends by itself (``None``: when resumed)."""


def set_pause(
    conn: psycopg.Connection[Any], device: str, platform: str, until: datetime | None
) -> Pause:
    """Pause ``platform`` on ``device`` (replacing a pause already there)."""
    conn.execute(
        "INSERT INTO capture_pauses (device_name, platform, until) VALUES (%s, %s, %s)"
        " ON CONFLICT (device_name, platform, user_id) DO UPDATE SET until = EXCLUDED.until,"
        "  created_at = now()",
        (device, platform, until),
    )
    return Pause(device, platform, until)


def clear_pauses(conn: psycopg.Connection[Any], device: str, platform: str | None) -> int:
    """End the pause of ``platform`` (``None``: every pause) on ``device``; how many ended
    (expired ones are cleared too and not counted)."""
    cur = conn.execute(
        f"DELETE FROM capture_pauses WHERE device_name = %s AND user_id {MINE}"
        " AND (%s::text IS NULL OR platform = %s)"
        " RETURNING until IS NULL OR until > now()",
        (device, platform, platform),
    )
    return sum(1 for row in cur.fetchall() if row[0])


def active_pauses(conn: psycopg.Connection[Any], device: str) -> list[Pause]:
    """The pauses in force on ``device`` now (expired ones are left out)."""
    with conn.cursor(row_factory=class_row(Pause)) as cur:
        cur.execute(
            "SELECT device_name, platform, until FROM capture_pauses"
            f" WHERE device_name = %s AND user_id {MINE} AND (until IS NULL OR until > now())"
            " ORDER BY platform",
            (device,),
        )
        return cur.fetchall()


def paused_until(
    conn: psycopg.Connection[Any], device: str, platform: str
) -> tuple[bool, datetime | None]:
    """Whether ``platform`` is paused on ``device`` now, and until when (``None``: until
    resumed; the longest of a platform pause and an all-platforms one)."""
    rows = conn.execute(
        "SELECT until FROM capture_pauses WHERE device_name = %s AND platform IN (%s, %s)"
        f" AND user_id {MINE} AND (until IS NULL OR until > now())",
        (device, platform, ALL_PLATFORMS),
    ).fetchall()
    if not rows:
        return False, None
    ends = [row[0] for row in rows]
    return True, None if any(end is None for end in ends) else max(ends)


def pause_sentence(pauses: list[Pause], platform: str | None = None) -> str | None:
    """One line saying capture is paused (for ``platform``, or any platform when ``None``),
    or ``None`` when it is not: what the brief and ``status`` show."""
    relevant = [p for p in pauses if platform is None or p.platform in (platform, ALL_PLATFORMS)]
    if not relevant:
        return None
    parts = []
    for pause in relevant:
        who = "every platform" if pause.platform == ALL_PLATFORMS else pause.platform
        when = (
            f"until {pause.until.astimezone().strftime('%Y-%m-%d %H:%M %Z')}"
            if pause.until
            else "until resumed"
        )
        parts.append(f"{who} {when}")
    return "memory capture is paused (" + "; ".join(parts) + ")"
