"""What ``mcp-agents-memory search`` and the capture daemon say to each other over the brief
socket, kept free of heavy imports (no database driver, no numpy): the command builds its
line before it has imported the search it falls back on.

The line is ``{"search": SearchRequest.to_wire(), "now": ISO, "identity": {…}}``; the daemon
(:mod:`agents_memory.recall.search_service`) answers ``{"notes": [...], "result":
SearchResult.as_dict()}``, or ``{"refused": message}`` for a request it cannot take (a date it
cannot read, a project that is no tag): the command then says so without searching itself.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

from agents_memory.config import Settings
from agents_memory.recall.search_request import SearchRequest


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


def search_line(settings: Settings, request: SearchRequest, now: datetime) -> bytes:
    """The request line for ``request`` asked at ``now``."""
    line = {
        "search": request.to_wire(),
        "now": now.isoformat(),
        "identity": search_identity(settings),
    }
    return json.dumps(line, ensure_ascii=False).encode("utf-8")
