"""The brief's task pins: the open pins for this agent, its person's own and those a teammate
addressed to them (migration ``0022_team_pins.sql``), one line each, sender named."""

from __future__ import annotations

from typing import Any, Final

import psycopg

from agents_memory.store import team
from agents_memory.store.recall import pins

SHOWN: Final = 5
TITLE_CHARS: Final = 160


def pin_lines(conn: psycopg.Connection[Any], user_id: int, platform: str) -> list[str]:
    """Lines for the open pins addressed to ``platform`` of ``user_id`` (empty: none)."""
    open_pins = pins.current(
        conn, user_id, to_agent=platform, statuses=pins.OPEN_STATUSES, limit=SHOWN
    )
    if not open_pins:
        return []
    names = (
        team.person_names(conn) if any(p.user_id not in (None, user_id) for p in open_pins) else {}
    )
    lines = [
        f"- pin {p.pin_id} from {_sender(p, user_id, names)} ({p.status}"
        + (f", {p.project}" if p.project else "")
        + f"): {_title(p.title)}"
        for p in open_pins
    ]
    lines.append("  (task_pin action=query pin=<id> for details; update it as you work)")
    return lines


def _title(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1] + "…"


def _sender(pin: pins.PinEvent, user_id: int, names: dict[int, str]) -> str:
    agent = pin.from_agent or "?"
    if pin.user_id is None or pin.user_id == user_id:
        return agent
    return f"{names.get(pin.user_id, 'a teammate')}'s {agent} (a teammate)"
