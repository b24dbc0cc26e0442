"""The capture pipeline's part for actions (tool calls): admit them with the read (no
database), store them in the transaction that stores the read's turns and moves its cursor.

The rules are the turns': admission (:meth:`Admission.captured_action`) masks secrets and
private spans in every target, command line and excerpt and refuses an excluded project's
calls; a capture **pause** for the platform stores none of a batch's actions and buries them
(``paused`` tombstones), so a rescan after the pause never brings them in; a tombstoned action
(its session was forgotten) is refused. Stored actions are upserted on their identity
(:mod:`agents_memory.store.actions`), so every rescan, crash and retry stores each once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters.base import Action
from agents_memory.admission.admit import Admission, Refused
from agents_memory.store import actions as action_store
from agents_memory.store.actions import ActionCounts, NewAction
from agents_memory.store.capture import pause as pause_store

log = logging.getLogger(__name__)


def admitted_actions(
    admission: Admission, actions: Iterable[Action], *, device: str | None
) -> tuple[list[NewAction], int]:
    """The actions admission lets in, as rows, and how many it refused."""
    rows: list[NewAction] = []
    refused = 0
    for action in actions:
        admitted = admission.captured_action(action)
        if isinstance(admitted, Refused):
            refused += 1
            continue
        rows.append(
            NewAction(
                agent_platform=action.platform,
                session_id=action.session_id,
                external_key=action.key,
                tool=action.tool,
                kind=action.kind,
                outcome=action.outcome,
                turn_key=action.turn_key,
                targets=admitted.targets,
                command=admitted.command,
                exit_code=action.exit_code,
                excerpt=admitted.excerpt,
                lines_added=action.added,
                lines_removed=action.removed,
                started_at=action.started_at,
                duration_ms=action.duration_ms,
                device_name=device,
            )
        )
    return rows, refused


def store_actions(
    conn: psycopg.Connection[Any],
    *,
    user_id: int,
    device: str,
    platform: str,
    path: Path,
    actions: list[NewAction],
    paused: bool | None = None,
) -> ActionCounts:
    """Store a read's admitted ``actions`` in the caller's transaction (after its turns):
    nothing while capture is paused (the calls are buried instead; ``paused`` is what the
    caller already read of the pause in this transaction, ``None``: read it here), never a
    tombstoned one (the upsert skips those). A batch the server rejects for its content is
    logged and skipped, never retried forever."""
    if not actions:
        return ActionCounts()
    if paused is None:
        paused, _until = pause_store.paused_until(conn, device, platform)
    if paused:
        action_store.bury_actions(conn, user_id, [a for a in actions if a.tool], "paused")
        return ActionCounts()
    kept = actions
    try:
        with conn.transaction():
            return action_store.upsert_actions(conn, user_id, kept)
    except (psycopg.DataError, psycopg.IntegrityError, ValueError) as exc:
        if conn.broken:
            raise
        log.warning(
            "%s: could not store %d action(s): %s",
            path,
            len(kept),
            str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
        )
        return ActionCounts()
