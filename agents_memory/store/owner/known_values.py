"""The values the console's filters offer: the projects on record, and the models and devices
seen in the user's recent turns (a bounded look, so a million rows cost what ten thousand do)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import psycopg

RECENT_TURNS: Final = 20_000
"""How many of the newest turns the models and devices are read from."""
MAX_VALUES: Final = 200


@dataclass(frozen=True, slots=True)
class KnownValues:
    projects: list[str]
    """Canonical project names (aliases left out), by name."""
    models: list[str]
    """Models (a subagent's own first), most recently used first."""
    devices: list[str]
    """Device names, most recently used first."""


def known_values(conn: psycopg.Connection[Any], user_id: int) -> KnownValues:
    projects = conn.execute(
        "SELECT name FROM project_tags WHERE alias_of IS NULL ORDER BY name LIMIT %s",
        (MAX_VALUES,),
    ).fetchall()
    recent = (
        "SELECT message_at, coalesce(subagent_model, agent_model) AS model, device_name"
        " FROM memory WHERE user_id = %s AND is_active ORDER BY message_at DESC LIMIT %s"
    )
    models = conn.execute(
        f"SELECT model FROM ({recent}) r WHERE model IS NOT NULL"
        " GROUP BY model ORDER BY max(message_at) DESC LIMIT %s",
        (user_id, RECENT_TURNS, MAX_VALUES),
    ).fetchall()
    devices = conn.execute(
        f"SELECT device_name FROM ({recent}) r WHERE device_name IS NOT NULL"
        " GROUP BY device_name ORDER BY max(message_at) DESC LIMIT %s",
        (user_id, RECENT_TURNS, MAX_VALUES),
    ).fetchall()
    return KnownValues(
        projects=[str(r[0]) for r in projects],
        models=[str(r[0]) for r in models],
        devices=[str(r[0]) for r in devices],
    )
