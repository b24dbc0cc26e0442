"""What ``mcp-agents-memory search`` and the capture daemon say to each other over the brief
socket, kept free of heavy imports (no database driver, no numpy): the command builds its
line before it has imported the search it falls back on.

The line is ``{"search": {…the arguments of search_request…}, "now": ISO, "identity": {…}}``;
the daemon (:mod:`agents_memory.recall.search_service`) answers ``{"notes": [...], "result":
SearchResult.as_dict()}``.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from agents_memory.config import Settings

ARGUMENTS = (
    "query",
    "p_tag",
    "date_range",
    "role",
    "agent_platform",
    "device_scope",
    "limit",
    "include_archived",
)
"""The keyword arguments of :func:`~agents_memory.recall.search.search_request` a caller
sends; the device and the clock are the request's own."""


def search_identity(settings: Settings) -> dict[str, str]:
    """What must be equal for another process (the capture daemon) to answer this process's
    search: the same database, user, device, embedding model and ranking knobs. The server's
    settings are hashed (a password never goes over the socket)."""
    server = "|".join(
        str(part)
        for part in (
            settings.database_url,
            settings.db_host,
            settings.db_port,
            settings.db_user,
            settings.db_pass,
            settings.db_name,
            settings.db_ssl,
        )
    )
    external = bool(settings.database_url or settings.db_host)
    return {
        "database": hashlib.sha256(server.encode()).hexdigest()
        if external
        else str(settings.data_dir),
        "user": settings.user_name,
        "device": settings.device_name,
        "embedding": f"{settings.embedding_backend} {settings.embedding_model or ''} "
        f"{settings.embedding_base_url or ''}",
        "tuning": f"{settings.search_recency_halflife_days} {settings.search_fallback_threshold}",
    }


def search_line(settings: Settings, arguments: dict[str, Any], now: datetime) -> bytes:
    """The request line for ``arguments`` (keys from :data:`ARGUMENTS`) asked at ``now``."""
    unknown = set(arguments) - set(ARGUMENTS)
    if unknown:
        raise ValueError(f"not search arguments: {sorted(unknown)}")
    line = {"search": arguments, "now": now.isoformat(), "identity": search_identity(settings)}
    return json.dumps(line, ensure_ascii=False).encode("utf-8")
