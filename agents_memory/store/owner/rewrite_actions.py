"""The text an action (a tool call) keeps, read in full and rewritten in place: its command
line, its targets (paths, URLs, MCP tools) and its excerpt (error lines, a command's last
lines). The actions' counterpart of :mod:`agents_memory.store.owner.rewrite`, for
``doctor --secrets``: :func:`action_texts` pages through them by id for the scan,
:func:`rewrite_actions` applies one text function (``--fix``: the turns' re-redaction) to the
actions a scan found. The full-text index over actions is an expression index, so it follows
the new text by itself; an action has no vector.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import psycopg

from agents_memory.store.owner.derived import TextRewrite


def action_texts(
    conn: psycopg.Connection[Any], *, batch: int = 1000
) -> Iterator[tuple[int, list[str]]]:
    """``(action id, [command, excerpt, targets…])`` for every action, by id (texts it has)."""
    last = 0
    while True:
        rows = conn.execute(
            "SELECT id, command, excerpt, targets FROM actions WHERE id > %s ORDER BY id LIMIT %s",
            (last, batch),
        ).fetchall()
        for action_id, command, excerpt, targets in rows:
            texts = [t for t in (command, excerpt, *(targets or ())) if t]
            yield int(action_id), texts
        if len(rows) < batch:
            return
        last = int(rows[-1][0])


def rewrite_actions(
    conn: psycopg.Connection[Any],
    rewrite: TextRewrite,
    action_ids: Sequence[int],
    *,
    dry_run: bool = False,
) -> list[int]:
    """Apply ``rewrite`` to the command, excerpt and every target of actions ``action_ids``
    (in the caller's transaction), writing only those that change; the ids changed
    (``dry_run``: that would change, nothing written)."""
    ids = sorted(set(action_ids))
    if not ids:
        return []
    lock = "" if dry_run else " FOR UPDATE"
    rows = conn.execute(
        "SELECT id, command, excerpt, targets FROM actions WHERE id = ANY(%s) ORDER BY id" + lock,
        (ids,),
    ).fetchall()
    updates: list[tuple[str | None, str | None, list[str] | None, int]] = []
    for action_id, command, excerpt, targets in rows:
        new = (
            rewrite(command) if command else command,
            rewrite(excerpt) if excerpt else excerpt,
            [rewrite(t) for t in targets] if targets else targets,
        )
        if new != (command, excerpt, targets):
            updates.append((*new, int(action_id)))
    if updates and not dry_run:
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE actions SET command = %s, excerpt = %s, targets = %s WHERE id = %s",
                updates,
            )
    return [u[3] for u in updates]
