"""What per-prompt recall gave today: how many prompts were recalled for, how many got
memories, and the newest of those with their memories (bounded). The one service behind
``memory-capture status`` (and ``--json``) and the console's status page."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agents_memory.store.prompt_recalls import memory_previews, prompts_since

SHOWN = 5
PREVIEW_CHARS = 80


def start_of_today(now: datetime | None = None) -> datetime:
    """Local midnight of ``now``'s day (aware)."""
    local = (now or datetime.now()).astimezone()
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def prompts_today(
    conn: psycopg.Connection[Any], user_id: int, *, now: datetime | None = None
) -> dict[str, Any]:
    """``{"since", "prompts", "given", "recent": [{"at", "platform", "project", "best",
    "memories": [{"id", "preview"}]}]}``: at most :data:`SHOWN` recent prompts, each memory's
    first :data:`PREVIEW_CHARS` characters (a memory forgotten since is left out)."""
    since = start_of_today(now)
    day = prompts_since(conn, user_id, since, shown=SHOWN)
    ids = [i for g in day.recent for i in g.memory_ids]
    previews = memory_previews(conn, user_id, ids, PREVIEW_CHARS) if ids else {}
    recent = [
        {
            "at": g.created_at.isoformat(),
            "platform": g.agent_platform,
            "project": g.git_root.rstrip("/").rsplit("/", 1)[-1] if g.git_root else None,
            "best": round(g.best, 3) if g.best is not None else None,
            "memories": [{"id": i, "preview": previews[i]} for i in g.memory_ids if i in previews],
        }
        for g in day.recent
    ]
    return {
        "since": since.isoformat(),
        "prompts": day.prompts,
        "given": day.added,
        "recent": recent,
    }
