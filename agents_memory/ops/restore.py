"""``mcp-agents-memory restore``: bring an archived memory back (the service the CLI and the
web console call). Archive is the soft delete agents use (``manage_knowledge remove``) and
restore its way back; forget is the other thing, for good, and nothing restores it."""

from __future__ import annotations

from typing import Any

import psycopg

from agents_memory.errors import OwnerRequestError
from agents_memory.store.owner.archive import unarchive_memory


def restore_memory(conn: psycopg.Connection[Any], user_id: int, memory_id: int) -> None:
    """Make memory ``memory_id`` active again (committed); :class:`OwnerRequestError` for an
    unknown id or one that is not archived."""
    with conn.transaction():
        outcome = unarchive_memory(conn, user_id, memory_id)
    conn.commit()
    if outcome == "unknown":
        raise OwnerRequestError(
            f"no memory with id {memory_id}: either it never existed or it was forgotten, and "
            "forget cannot be undone (by design); only archived memories can be restored "
            "(`mcp-agents-memory search --include-archived` lists them)"
        )
    if outcome == "not-archived":
        raise OwnerRequestError(f"memory {memory_id} is not archived")
