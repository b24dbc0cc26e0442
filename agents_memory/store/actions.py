"""Actions: the tool calls the agents made (migration 0015), all their SQL.

A row's identity is ``(user, platform, session, key)``: a client's tool-call id is unique only
within one session, so an upsert replaces only the same session's action. The capture pipeline
writes a batch's actions in the transaction that writes its turns and advances its cursor
(:func:`upsert_actions`, then :func:`complete_actions` for results whose call an earlier read
stored), so a rescan or a crash never doubles one.

Sessions are compared with ``=`` so that the indexes serve every lookup: an action without a
session (no adapter makes one) is stored once but never linked to a turn nor completed.

Each action is linked to a memory row (``memory_id``): the assistant turn that issued it when
that turn is stored (under its key or its session-scoped key; one indexed lookup). A tool-only
response has no turn of its own: its actions keep the response's key (``turn_key``) and no
link, and a reader places them by time (:func:`session_actions_between`). (Linking them to a
neighbouring turn at capture time was measured: it made a backfill 3x slower.)

Text reaches this module only admitted (:data:`AdmittedText`): the command line, the targets and
the excerpt passed the same redaction and private-span removal as turns.

Forgetting: :func:`forget_actions` deletes the actions of forgotten turns (and of a session
none of whose turns is left) with a ``forgotten`` action tombstone each (the action's identity,
no text; table ``action_tombstones``, apart from the turns' so their counts stay the turns'); a
paused capture buries the batch's actions as ``paused`` (:func:`bury_actions`). The upsert
stores none that has a tombstone (checked in its own statement: no round trip of its own).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from agents_memory.adapters._actions import LOOKING_COMMANDS
from agents_memory.store.capture.tombstones import TombstoneReason
from agents_memory.store.identity import scoped_key
from agents_memory.store.memories import AdmittedText

ActionKey = tuple[str, str | None, str]
"""An action's identity for its user: ``(platform, session_id, key)``."""


@dataclass(frozen=True, slots=True)
class NewAction:
    """An action to store (``tool`` ``None``: only the result of a call stored earlier)."""

    agent_platform: str
    session_id: str | None
    external_key: str
    tool: str | None
    kind: str
    outcome: str
    turn_key: str | None = None
    targets: tuple[AdmittedText, ...] = ()
    command: AdmittedText | None = None
    exit_code: int | None = None
    excerpt: AdmittedText | None = None
    lines_added: int | None = None
    lines_removed: int | None = None
    started_at: datetime | None = None
    duration_ms: int | None = None
    device_name: str | None = None

    @property
    def identity(self) -> ActionKey:
        """Which stored action (and action tombstone) this one is, for its user."""
        return (self.agent_platform, self.session_id, self.external_key)


@dataclass(frozen=True, slots=True)
class ActionCounts:
    inserted: int = 0
    updated: int = 0
    completed: int = 0
    """Results that completed a call stored by an earlier read."""


@dataclass(frozen=True, slots=True)
class ActionRow:
    id: int
    agent_platform: str
    session_id: str | None
    memory_id: int | None
    turn_key: str | None
    """The issuing turn's key: the linked turn's own when the row keeps none."""
    tool: str
    kind: str
    targets: list[str] | None
    command: str | None
    outcome: str
    exit_code: int | None
    excerpt: str | None
    lines_added: int | None
    lines_removed: int | None
    started_at: datetime | None
    duration_ms: int | None


ACTION_COLUMNS: Final = (
    "a.id, a.agent_platform, a.session_id, a.memory_id,"
    " coalesce(a.turn_key, (SELECT m.external_uuid FROM memory m WHERE m.id = a.memory_id))"
    " AS turn_key, a.tool, a.kind, a.targets, a.command,"
    " a.outcome, a.exit_code, a.excerpt, a.lines_added, a.lines_removed, a.started_at,"
    " a.duration_ms"
)

_UPSERT: Final = """
WITH i AS (
    SELECT i.*,
        (SELECT m.id FROM memory m WHERE m.user_id = %(user)s AND m.agent_platform = i.p
            AND m.session_id = i.s AND m.role = 'assistant'
            AND m.external_uuid IN (i.tk, i.stk) LIMIT 1) AS issuer
    FROM jsonb_to_recordset(%(rows)s::jsonb) AS i(p text, s text, k text, tk text, stk text,
        tool text, kind text, targets text[], cmd text, outcome text, code int, excerpt text,
        added int, removed int, at timestamptz, ms int, dev text)
    WHERE NOT EXISTS (SELECT 1 FROM action_tombstones t WHERE t.user_id = %(user)s
        AND t.agent_platform = i.p AND t.session_id IS NOT DISTINCT FROM i.s
        AND t.external_key = i.k)
)
INSERT INTO actions AS a (user_id, agent_platform, session_id, external_key, turn_key,
    memory_id, tool, kind, targets, command, outcome, exit_code, excerpt, lines_added,
    lines_removed, started_at, duration_ms, device_name)
SELECT %(user)s, i.p, i.s, i.k, CASE WHEN i.issuer IS NULL THEN i.tk END,
    i.issuer,
    i.tool, i.kind, nullif(i.targets, '{}'), i.cmd,
    i.outcome, i.code, i.excerpt, i.added, i.removed, i.at, i.ms, i.dev
FROM i
ON CONFLICT ON CONSTRAINT actions_identity DO UPDATE SET
    turn_key = EXCLUDED.turn_key,
    memory_id = coalesce(EXCLUDED.memory_id, a.memory_id),
    tool = EXCLUDED.tool, kind = EXCLUDED.kind, targets = EXCLUDED.targets,
    command = EXCLUDED.command,
    outcome = CASE WHEN EXCLUDED.outcome <> 'unknown' THEN EXCLUDED.outcome ELSE a.outcome END,
    exit_code = coalesce(EXCLUDED.exit_code, a.exit_code),
    excerpt = coalesce(EXCLUDED.excerpt, a.excerpt),
    lines_added = EXCLUDED.lines_added, lines_removed = EXCLUDED.lines_removed,
    started_at = coalesce(a.started_at, EXCLUDED.started_at),
    duration_ms = coalesce(EXCLUDED.duration_ms, a.duration_ms)
RETURNING (xmax = 0)
"""
"""Long because it is one SQL statement: the batch as one JSON document (one parameter: no
per-column array to encode), never an action with a tombstone (forgotten, or read while
paused), the link to the issuing turn (under its key or its session-scoped key), and the merge
of a call read again with what a later read learnt of its result."""

_PRINTS_FILES: Final = "^\\s*(\\S*/)?(" + "|".join(sorted(LOOKING_COMMANDS)) + ")(\\s|$)"
"""A command line that prints files or a listing (its output is never kept on success)."""

_COMPLETE: Final = """
UPDATE actions AS a SET
    outcome = CASE WHEN r.outcome <> 'unknown' THEN r.outcome ELSE a.outcome END,
    exit_code = coalesce(r.code, a.exit_code),
    excerpt = CASE WHEN r.outcome = 'error' OR r.code <> 0
            OR (a.kind = 'shell' AND coalesce(a.command, '') !~ %s)
        THEN coalesce(r.excerpt, a.excerpt) ELSE a.excerpt END,
    duration_ms = coalesce(r.ms, a.duration_ms)
FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::int[], %s::text[], %s::int[])
    AS r(p, s, k, outcome, code, excerpt, ms)
WHERE a.user_id = %s AND a.agent_platform = r.p AND a.session_id = r.s
    AND a.external_key = r.k
"""


def upsert_actions(
    conn: psycopg.Connection[Any], user_id: int, actions: Sequence[NewAction]
) -> ActionCounts:
    """Store ``actions`` (calls upserted, results completing stored calls) in the caller's
    transaction, after the batch's turns (so a call links to its turn)."""
    # One row per identity (the last one read wins): a statement may not upsert a row twice.
    by_slot = {(a.agent_platform, a.session_id, a.external_key): a for a in actions if a.tool}
    results = [a for a in actions if a.tool is None]
    inserted = updated = 0
    if by_slot:
        cur = conn.execute(_UPSERT, _upsert_params(user_id, list(by_slot.values())))
        fresh = [bool(row[0]) for row in cur.fetchall()]
        inserted = sum(fresh)
        updated = len(fresh) - inserted
    completed = 0
    if results:
        cur = conn.execute(
            _COMPLETE,
            (
                _PRINTS_FILES,
                [r.agent_platform for r in results],
                [r.session_id for r in results],
                [r.external_key for r in results],
                [r.outcome for r in results],
                [r.exit_code for r in results],
                [r.excerpt for r in results],
                [r.duration_ms for r in results],
                user_id,
            ),
        )
        completed = cur.rowcount
    return ActionCounts(inserted, updated, completed)


def _upsert_params(user_id: int, rows: list[NewAction]) -> dict[str, Any]:
    """The batch as one JSON document (``jsonb_to_recordset``)."""
    return {
        "user": user_id,
        "rows": Jsonb(
            [
                {
                    "p": r.agent_platform,
                    "s": r.session_id,
                    "k": r.external_key,
                    "tk": r.turn_key,
                    "stk": scoped_key(r.turn_key, r.agent_platform, r.session_id, "assistant")
                    if r.turn_key
                    else None,
                    "tool": r.tool,
                    "kind": r.kind,
                    "targets": list(r.targets),
                    "cmd": r.command,
                    "outcome": r.outcome,
                    "code": r.exit_code,
                    "excerpt": r.excerpt,
                    "added": r.lines_added,
                    "removed": r.lines_removed,
                    "at": r.started_at.isoformat() if r.started_at else None,
                    "ms": r.duration_ms,
                    "dev": r.device_name,
                }
                for r in rows
            ]
        ),
    }


def bury_actions(
    conn: psycopg.Connection[Any],
    user_id: int,
    actions: Iterable[NewAction],
    reason: TombstoneReason,
) -> int:
    """An action tombstone for each of ``actions`` (its identity, no text): capture never
    stores it again."""
    keys = {(a.agent_platform, a.session_id, a.external_key) for a in actions}
    if not keys:
        return 0
    platforms, sessions, raw = (
        list(column) for column in zip(*sorted(keys, key=repr), strict=True)
    )
    cur = conn.execute(
        "INSERT INTO action_tombstones"
        " (user_id, agent_platform, session_id, external_key, reason)"
        " SELECT %s, t.p, t.s, t.k, %s"
        " FROM unnest(%s::text[], %s::text[], %s::text[]) AS t(p, s, k)"
        " ON CONFLICT ON CONSTRAINT action_tombstones_identity DO NOTHING",
        (user_id, reason, platforms, sessions, raw),
    )
    return cur.rowcount


def forget_actions(conn: psycopg.Connection[Any], user_id: int, memory_ids: Sequence[int]) -> int:
    """Delete, with a ``forgotten`` tombstone each, the actions linked to the turns
    ``memory_ids`` and those of any session of theirs that no other turn is left in (called
    before the turns are deleted); returns how many went."""
    if not memory_ids:
        return 0
    ids = list(memory_ids)
    rows = conn.execute(
        "SELECT a.id, a.agent_platform, a.session_id, a.external_key FROM actions a"
        " WHERE a.user_id = %s AND (a.memory_id = ANY(%s) OR EXISTS ("
        "   SELECT 1 FROM memory m WHERE m.id = ANY(%s) AND m.agent_platform = a.agent_platform"
        "     AND m.session_id IS NOT DISTINCT FROM a.session_id)"
        "   AND NOT EXISTS (SELECT 1 FROM memory o WHERE o.user_id = a.user_id"
        "     AND o.agent_platform = a.agent_platform"
        "     AND o.session_id IS NOT DISTINCT FROM a.session_id AND o.id <> ALL(%s)))",
        (user_id, ids, ids, ids),
    ).fetchall()
    if not rows:
        return 0
    gone = [
        NewAction(platform, session, key, None, "other", "unknown")
        for _id, platform, session, key in rows
    ]
    bury_actions(conn, user_id, gone, "forgotten")
    cur = conn.execute("DELETE FROM actions WHERE id = ANY(%s)", ([row[0] for row in rows],))
    return cur.rowcount


def actions_of_turns(
    conn: psycopg.Connection[Any], memory_ids: Sequence[int]
) -> dict[int, list[ActionRow]]:
    """The actions linked to each of ``memory_ids``, in the order they were made."""
    if not memory_ids:
        return {}
    with conn.cursor(row_factory=class_row(ActionRow)) as cur:
        cur.execute(
            f"SELECT {ACTION_COLUMNS} FROM actions a WHERE a.memory_id = ANY(%s)"
            " ORDER BY a.started_at NULLS LAST, a.id",
            (list(memory_ids),),
        )
        found: dict[int, list[ActionRow]] = {}
        for row in cur.fetchall():
            assert row.memory_id is not None
            found.setdefault(row.memory_id, []).append(row)
        return found


def session_actions_between(
    conn: psycopg.Connection[Any],
    user_id: int,
    platform: str,
    session_id: str,
    since: datetime,
    until: datetime | None,
) -> list[ActionRow]:
    """The session's actions without a turn of their own made from ``since`` (inclusive) to
    ``until`` (exclusive; ``None``: no end), in the order they were made."""
    with conn.cursor(row_factory=class_row(ActionRow)) as cur:
        cur.execute(
            f"SELECT {ACTION_COLUMNS} FROM actions a WHERE a.user_id = %s"
            " AND a.agent_platform = %s AND a.session_id = %s AND a.memory_id IS NULL"
            " AND a.started_at >= %s AND (%s::timestamptz IS NULL OR a.started_at < %s)"
            " ORDER BY a.started_at, a.id",
            (user_id, platform, session_id, since, until, until),
        )
        return cur.fetchall()


@dataclass(frozen=True, slots=True)
class ActionQuery:
    """What :func:`find_actions` looks for: words of a path, command or error (``text``),
    and optional filters (``file`` a path or a glob with ``*`` and ``?``)."""

    text: str | None = None
    kind: str | None = None
    file: str | None = None
    outcome: str | None = None
    platform: str | None = None
    session_id: str | None = None
    limit: int = 20


_FTS: Final = "action_fts(a.tool, a.targets, a.command, a.excerpt)"
"""The indexed full-text expression of an action (migration 0015)."""


def glob_to_like(pattern: str) -> str:
    """A path, a part of one or a glob (``*``, ``?``) as a LIKE pattern (``%``, ``_``, the
    rest escaped). Without a wildcard the text may stand anywhere in the path (``reconcile``
    finds ``src/sync/reconcile.py``); a glob matches the whole path."""
    escaped = pattern.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    like = escaped.replace("*", "%").replace("?", "_")
    return like if ("*" in pattern or "?" in pattern) else f"%{like}%"


def find_actions(
    conn: psycopg.Connection[Any], user_id: int, query: ActionQuery
) -> list[ActionRow]:
    """Actions whose tool, targets, command or excerpt hold every word of ``query.text``
    (split at punctuation, unstemmed), best first, then newest; the filters narrow it."""
    where = ["a.user_id = %(user)s"]
    params: dict[str, Any] = {"user": user_id, "limit": query.limit}
    rank = ""
    if query.text and query.text.strip():
        params["text"] = query.text
        where.append(
            f"{_FTS} @@ plainto_tsquery('simple',"
            "   regexp_replace(lower(%(text)s), '[^[:alnum:]]+', ' ', 'g'))"
        )
        rank = (
            f"ts_rank({_FTS}, plainto_tsquery('simple',"
            " regexp_replace(lower(%(text)s), '[^[:alnum:]]+', ' ', 'g'))) DESC,"
        )
    for column, value in (
        ("a.kind", query.kind),
        ("a.outcome", query.outcome),
        ("a.agent_platform", query.platform),
        ("a.session_id", query.session_id),
    ):
        if value:
            key = column.removeprefix("a.")
            params[key] = value
            where.append(f"{column} = %({key})s")
    if query.file:
        params["file"] = glob_to_like(query.file)
        where.append("EXISTS (SELECT 1 FROM unnest(a.targets) t WHERE t LIKE %(file)s)")
    with conn.cursor(row_factory=class_row(ActionRow)) as cur:
        cur.execute(
            f"SELECT {ACTION_COLUMNS} FROM actions a WHERE {' AND '.join(where)}"
            f" ORDER BY {rank} a.started_at DESC NULLS LAST, a.id DESC LIMIT %(limit)s",
            params,
        )
        return cur.fetchall()


@dataclass(frozen=True, slots=True)
class SessionBytes:
    agent_platform: str
    session_id: str | None
    actions: int
    bytes: int


def bytes_per_session(conn: psycopg.Connection[Any], user_id: int) -> list[SessionBytes]:
    """The bytes the actions of each session take in their table rows (``pg_column_size``)."""
    with conn.cursor(row_factory=class_row(SessionBytes)) as cur:
        cur.execute(
            "SELECT agent_platform, session_id, count(*)::int AS actions,"
            " sum(pg_column_size(a.*))::bigint AS bytes FROM actions a WHERE user_id = %s"
            " GROUP BY agent_platform, session_id ORDER BY agent_platform, session_id",
            (user_id,),
        )
        return cur.fetchall()
