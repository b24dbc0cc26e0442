"""The actions arm of the search: the agents' tool calls found by the words of their paths,
commands and error text, each given to the turn it belongs to, and the ``kind`` / ``file``
filters.

An action's full text (migration 0015's ``action_fts``: tool, targets, command, excerpt, split
at every non-alphanumeric character, unstemmed) is searched for the query's content words, each
as a prefix of its crude stem (:func:`~agents_memory.store.search.words.action_terms`), and
scored with BM25 (a word's rarity counted over the user's actions; a long excerpt weighs each
word less). The best ``SearchTuning.action_pool`` actions go to their turn: the assistant turn
that issued it (``memory_id``), or, for a tool-only response, the turn of its exchange (the
assistant turn before it since the last user turn, else the next assistant turn, else the user
turn that asked: the rule ``read_memory`` places them by). Turns outside the search's scope
(:func:`~agents_memory.store.search.scope.filter_sql`: project, dates, client, archived) are
left out. The vector arm does not see actions (they have no vector); the fusion with the turns'
ranking is :mod:`agents_memory.store.search.memories`'.

With a ``kind`` or ``file`` filter the search keeps only the turns that made such an action
(:func:`filtered_turns`, the newest :data:`FILTER_ACTIONS` actions) and the actions arm only
such actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from agents_memory.store.actions import glob_to_like
from agents_memory.store.search.action_text import FoundAction
from agents_memory.store.search.scope import sql_literal
from agents_memory.store.search.types import SearchFilters, SearchTuning

FILTER_ACTIONS: Final = 2_000
"""A ``kind`` / ``file`` filter keeps the turns of at most this many newest matching actions."""
DF_CAP: Final = 20_000
"""A word's action count (its rarity) is counted up to this many actions."""
SCAN: Final = 5_000
"""The actions arm scores at most this many newest actions holding any of the words."""
_K1, _B = 1.2, 0.5
HINT_BONUS: Final = 1.5
"""Added to an action's score when the query's words ask for its kind ("which file did we
change" an edit, "how do we run" a shell command) or its failure ("what error")."""
_KIND_WORDS: Final = {
    "edit": ("edit", "write"),
    "chang": ("edit", "write"),
    "modif": ("edit", "write"),
    "fix": ("edit", "write"),
    "fixed": ("edit", "write"),
    "patch": ("edit", "write"),
    "updat": ("edit", "write"),
    "touch": ("edit", "write"),
    "creat": ("write", "edit"),
    "add": ("write", "edit"),
    "added": ("write", "edit"),
    "wrote": ("write", "edit"),
    "write": ("write", "edit"),
    "put": ("write", "edit"),
    "new": ("write", "edit"),
    "run": ("shell",),
    "ran": ("shell",),
    "comma": ("shell",),
    "execu": ("shell",),
    "test": ("shell",),
    "tests": ("shell",),
    "insta": ("shell",),
    "build": ("shell",),
    "read": ("read",),
    "grep": ("search",),
    "searc": ("search",),
    "fetch": ("web",),
    "url": ("web",),
    "web": ("web",),
}
"""Query stems (:func:`~agents_memory.store.search.words.action_terms`) that ask for a kind."""
_ERROR_WORDS: Final = frozenset(
    ("error", "errors", "fail", "faile", "failu", "broke", "crash", "excep", "trace", "hit")
)


def hinted(terms: Sequence[str]) -> tuple[tuple[str, ...], bool]:
    """The kinds ``terms`` ask for and whether they ask for a failure."""
    kinds = sorted({k for t in terms for k in _KIND_WORDS.get(t, ())})
    return tuple(kinds), any(t in _ERROR_WORDS for t in terms)


_FTS = sql.SQL("action_fts(a.tool, a.targets, a.command, a.excerpt)")
_COLUMNS = sql.SQL(
    "a.id, a.tool, a.kind, a.targets, a.command, a.outcome, a.exit_code, a.excerpt,"
    " a.lines_added, a.lines_removed, a.started_at"
)
_OWNER = sql.SQL(
    "coalesce(a.memory_id, CASE WHEN prev.role = 'assistant' THEN prev.id END,"
    " CASE WHEN nxt.role = 'assistant' THEN nxt.id END, prev.id, nxt.id)"
)
_PLACE = sql.SQL(
    " LEFT JOIN LATERAL (SELECT p.id, p.role FROM memory p WHERE p.user_id = a.user_id"
    "  AND p.agent_platform = a.agent_platform AND p.session_id = a.session_id"
    "  AND p.message_at <= a.started_at ORDER BY p.message_at DESC, p.id DESC LIMIT 1) prev"
    "  ON a.memory_id IS NULL"
    " LEFT JOIN LATERAL (SELECT p.id, p.role FROM memory p WHERE p.user_id = a.user_id"
    "  AND p.agent_platform = a.agent_platform AND p.session_id = a.session_id"
    "  AND p.message_at > a.started_at ORDER BY p.message_at, p.id LIMIT 1) nxt"
    "  ON a.memory_id IS NULL"
)
"""The turns around a tool-only response's action (:data:`_OWNER` picks its turn)."""


@dataclass(frozen=True, slots=True)
class ActionTurns:
    """The turns the actions arm found, best first, and the actions found for each."""

    order: tuple[int, ...] = ()
    actions: dict[int, tuple[FoundAction, ...]] | None = None
    sure: float = 0.0
    """The share of the query's words the best action holds (0-1)."""
    sessions: dict[int, tuple[str, str | None]] | None = None
    """Each turn's (platform, session)."""

    def of(self, turn: int) -> tuple[FoundAction, ...]:
        return (self.actions or {}).get(turn, ())


def action_filter(filters: SearchFilters) -> sql.Composable:
    """The ``kind`` / ``file`` conditions on an action (alias ``a``), values written in."""
    parts: list[sql.Composable] = []
    if filters.action_kind:
        parts.append(sql.SQL("a.kind = {}").format(sql_literal(filters.action_kind)))
    if filters.action_file:
        parts.append(
            sql.SQL("EXISTS (SELECT 1 FROM unnest(a.targets) t WHERE t LIKE {})").format(
                sql_literal(glob_to_like(filters.action_file))
            )
        )
    return sql.SQL(" AND ").join(parts) if parts else sql.SQL("true")


def filtered_turns(
    conn: psycopg.Connection[Any], user_id: int, filters: SearchFilters, where: sql.Composable
) -> ActionTurns:
    """The turns (in the search's scope ``where``, alias ``m``) that made an action of the
    filters' ``kind`` / ``file``, the newest first, with those actions."""
    statement = sql.SQL(
        "SELECT o.turn, m.agent_platform AS t_platform, m.session_id AS t_session, {columns},"
        " 0::float8 AS score FROM ("
        " SELECT a.id, {owner} AS turn FROM actions a {place}"
        " WHERE a.user_id = {user} AND {afilter}"
        " ORDER BY a.started_at DESC NULLS LAST, a.id DESC LIMIT {cap}) o"
        " JOIN actions a ON a.id = o.id JOIN memory m ON m.id = o.turn WHERE {where}"
        " ORDER BY m.message_at DESC, m.id DESC, a.started_at NULLS LAST, a.id"
    ).format(
        columns=_COLUMNS,
        owner=_OWNER,
        place=_PLACE,
        user=sql_literal(user_id),
        afilter=action_filter(filters),
        cap=sql.Literal(FILTER_ACTIONS),
        where=where,
    )
    return _turns(
        conn.cursor(row_factory=dict_row).execute(statement, {}, prepare=False).fetchall(), 0.0
    )


def actions_of(
    conn: psycopg.Connection[Any],
    user_id: int,
    turn_ids: Sequence[int],
    *,
    kind: str | None = None,
    per_turn: int = 50,
) -> dict[int, tuple[FoundAction, ...]]:
    """The actions each of ``turn_ids`` made (those linked to it, and those of a tool-only
    response placed in its exchange), of ``kind`` when given, in the order they were made;
    at most ``per_turn`` each."""
    if not turn_ids:
        return {}
    statement = sql.SQL(
        "SELECT o.turn, {columns}, 0::float8 AS score FROM ("
        " SELECT a.id, a.memory_id AS turn FROM actions a WHERE a.memory_id = ANY(%(ids)s)"
        " UNION ALL SELECT a.id, {owner} FROM actions a {place}"
        "  WHERE a.user_id = %(user)s AND a.memory_id IS NULL AND (a.agent_platform, a.session_id)"
        "   IN (SELECT t.agent_platform, t.session_id FROM memory t WHERE t.id = ANY(%(ids)s))"
        ") o JOIN actions a ON a.id = o.id"
        " WHERE o.turn = ANY(%(ids)s) AND (%(kind)s::text IS NULL OR a.kind = %(kind)s)"
        " ORDER BY a.started_at NULLS LAST, a.id"
    ).format(columns=_COLUMNS, owner=_OWNER, place=_PLACE)
    params = {"ids": list(turn_ids), "user": user_id, "kind": kind}
    found = _turns(conn.cursor(row_factory=dict_row).execute(statement, params).fetchall(), 0)
    return {turn: acts[:per_turn] for turn, acts in (found.actions or {}).items()}


def owner_turns(conn: psycopg.Connection[Any], action_ids: Sequence[int]) -> dict[int, int]:
    """The turn each of ``action_ids`` belongs to (its issuing turn, or its exchange's for a
    tool-only response): the turn a search gives for it."""
    statement = sql.SQL(
        "SELECT a.id, {owner} AS turn FROM actions a {place} WHERE a.id = ANY(%s)"
    ).format(owner=_OWNER, place=_PLACE)
    rows = conn.execute(statement, (list(action_ids),)).fetchall()
    return {int(i): int(t) for i, t in rows if t is not None}


def action_arm(
    conn: psycopg.Connection[Any],
    user_id: int,
    terms: Sequence[str],
    filters: SearchFilters,
    where: sql.Composable,
    tuning: SearchTuning,
) -> ActionTurns:
    """The best ``tuning.action_pool`` actions for ``terms`` (stems, matched as prefixes) of
    the filters' kind and file, grouped by the turn (in scope ``where``) each belongs to."""
    return read_action_arm(send_action_arm(conn, user_id, terms, filters, where, tuning), terms)


def send_action_arm(
    conn: psycopg.Connection[Any],
    user_id: int,
    terms: Sequence[str],
    filters: SearchFilters,
    where: sql.Composable,
    tuning: SearchTuning,
    *,
    prepare: bool = False,
) -> psycopg.Cursor[dict[str, Any]] | None:
    """Send :func:`action_arm`'s statement and return its cursor (``None``: nothing to
    search), read by :func:`read_action_arm`: in a pipeline it travels with the statements
    sent beside it. ``prepare``: kept prepared on the connection (its text holds the scope's
    values, so only for a scope that comes again: no date range), after a few runs planned
    once for any words when the server finds that no costlier (PostgreSQL's own
    ``plan_cache_mode = auto``): planning it took 1.9 ms of 2.3 on the coding pool."""
    if not terms or tuning.action_pool <= 0:
        return None
    queries = [f"'{t}':*" for t in terms]
    statement = sql.SQL(
        # Materialised: each counted once, never again per candidate (a planner without the
        # table's statistics yet once inlined df into the join: 8 s for 748 actions).
        "WITH w AS MATERIALIZED (SELECT t.q::tsquery AS q FROM unnest(%(terms)s::text[]) t(q)),"
        " df AS MATERIALIZED (SELECT w.q, (SELECT count(*) FROM (SELECT 1 FROM actions a"
        "  WHERE a.user_id = {user} AND {fts} @@ w.q LIMIT {df_cap}) c)::float8 AS n FROM w),"
        " total AS MATERIALIZED (SELECT greatest(1, (SELECT count(*) FROM (SELECT 1 FROM"
        "  actions a WHERE a.user_id = {user} LIMIT 1000000) c))::float8 AS n),"
        " cand AS MATERIALIZED (SELECT a.id, {fts} AS v FROM actions a"
        "  WHERE a.user_id = {user} AND {fts} @@ %(any)s::tsquery AND {afilter}"
        "  ORDER BY a.started_at DESC NULLS LAST, a.id DESC LIMIT {scan}),"
        " avgl AS MATERIALIZED (SELECT greatest(1, avg(length(v)))::float8 AS n FROM cand),"
        " bm25 AS (SELECT c.id, count(*) AS held, sum(ln(1 + (t.n - d.n + 0.5) / (d.n + 0.5))"
        "   * {k1p} / (1 + {k1} * (1 - {b} + {b} * length(c.v) / l.n))) AS score"
        "  FROM cand c JOIN df d ON c.v @@ d.q CROSS JOIN total t CROSS JOIN avgl l"
        "  GROUP BY c.id),"
        " scored AS (SELECT s.id, s.held, s.score"
        "  + CASE WHEN a.kind = ANY(%(kinds)s::text[]) THEN {bonus} ELSE 0 END"
        "  + CASE WHEN %(failed)s AND (a.outcome = 'error' OR a.exit_code <> 0) THEN {bonus}"
        "   ELSE 0 END AS score"
        "  FROM bm25 s JOIN actions a ON a.id = s.id ORDER BY score DESC, s.id DESC LIMIT {pool}),"
        " owned AS (SELECT s.id, s.score, s.held, {owner} AS turn FROM scored s"
        "  JOIN actions a ON a.id = s.id {place})"
        " SELECT o.turn, o.held, m.agent_platform AS t_platform, m.session_id AS t_session,"
        " {columns}, o.score FROM owned o JOIN actions a ON a.id = o.id"
        " JOIN memory m ON m.id = o.turn WHERE {where}"
        " ORDER BY o.score DESC, a.started_at DESC NULLS LAST, a.id DESC"
    ).format(
        user=sql_literal(user_id),
        fts=_FTS,
        df_cap=sql.Literal(DF_CAP),
        afilter=action_filter(filters),
        scan=sql.Literal(SCAN),
        k1p=sql.Literal(_K1 + 1),
        k1=sql.Literal(_K1),
        b=sql.Literal(_B),
        pool=sql.Literal(tuning.action_pool),
        bonus=sql.Literal(HINT_BONUS),
        owner=_OWNER,
        place=_PLACE,
        columns=_COLUMNS,
        where=where,
    )
    kinds, failed = hinted(terms)
    params = {"terms": queries, "any": " | ".join(queries), "kinds": list(kinds), "failed": failed}
    return conn.cursor(row_factory=dict_row).execute(statement, params, prepare=prepare)


def read_action_arm(
    cur: psycopg.Cursor[dict[str, Any]] | None, terms: Sequence[str]
) -> ActionTurns:
    """The turns of :func:`send_action_arm`'s cursor."""
    if cur is None:
        return ActionTurns()
    rows = cur.fetchall()
    sure = max((int(r["held"]) for r in rows), default=0) / len(terms)
    return _turns(rows, sure)


def _turns(rows: Sequence[dict[str, Any]], sure: float) -> ActionTurns:
    order: list[int] = []
    found: dict[int, list[FoundAction]] = {}
    sessions: dict[int, tuple[str, str | None]] = {}
    for row in rows:
        turn = int(row["turn"])
        if turn not in found:
            order.append(turn)
            if "t_platform" in row:
                sessions[turn] = (str(row["t_platform"]), row["t_session"])
        found.setdefault(turn, []).append(
            FoundAction(
                id=int(row["id"]),
                tool=str(row["tool"]),
                kind=str(row["kind"]),
                targets=tuple(row["targets"] or ()),
                command=row["command"],
                outcome=str(row["outcome"]),
                exit_code=row["exit_code"],
                excerpt=row["excerpt"],
                lines_added=row["lines_added"],
                lines_removed=row["lines_removed"],
                started_at=row["started_at"],
                score=round(float(row["score"]), 4),
            )
        )
    return ActionTurns(tuple(order), {k: tuple(v) for k, v in found.items()}, sure, sessions)
