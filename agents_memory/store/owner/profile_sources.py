"""Where a profile's text came from, and what a change to those turns does to it.

The librarian merges the user turns it reads into the profile it had, so a field's text holds
something of every turn read since the field was last empty. ``users.<field>_sources`` is that
set of memory ids (NULL while the field has text: unknown, as for profiles written before the
provenance was kept, or imported); each ``profile_history`` entry names the turns read for that
write in ``source_ids`` (``{}`` for a person's own words, NULL: unknown).

:func:`drop_profiles_built_from` is what forgetting does to profiles: a field built from any
forgotten turn is emptied (with a ``changed_by='forget'`` history entry that holds no text, and
marks where the field started again), and the history entries that may hold text of those turns
are deleted. With unknown provenance, every user turn said before the field's last write counts
as a possible source. :func:`rewrite_profiles` is what a text rewrite (``doctor --secrets
--fix``) does to them: the same function applied to the fields and their history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg import sql

from agents_memory.store.memories import AdmittedText

TextRewrite = Callable[[str], AdmittedText]
"""New text for old; returns its argument unchanged when there is nothing to change."""

FIELDS: Final = ("core_profile", "sub_profile")
FORGET_MARK: Final = "forget"
"""``changed_by`` of the history entry a forget leaves where it emptied a field."""


@dataclass(frozen=True, slots=True)
class _Entry:
    id: int
    field: str
    changed_by: str
    source_ids: list[int] | None
    created_at: datetime


def profile_sources_update(column: str) -> sql.Composable:
    """``<column>_sources = …`` for an ``UPDATE users`` writing ``%(value)s`` to ``column``
    from the turns ``%(sources)s`` (``%(unknown)s``: from turns nobody can name)."""
    return sql.SQL(
        "{src} = CASE WHEN %(value)s::text IS NULL THEN '{{}}'::bigint[]"
        " WHEN %(unknown)s THEN NULL"
        " WHEN {col} IS NULL THEN %(sources)s::bigint[]"
        " WHEN {src} IS NULL THEN NULL"
        " ELSE ARRAY(SELECT DISTINCT s FROM unnest({src} || %(sources)s::bigint[]) AS s"
        "  ORDER BY s) END"
    ).format(col=sql.Identifier(column), src=sql.Identifier(f"{column}_sources"))


def drop_profiles_built_from(
    conn: psycopg.Connection[Any], user_id: int, ids: Sequence[int]
) -> tuple[list[str], int]:
    """Empty ``user_id``'s profile fields built from any of rows ``ids`` (still present) and
    delete the history entries that may hold their text; ``(fields emptied, entries
    deleted)``."""
    turns = conn.execute(
        "SELECT array_agg(id), min(message_at) FROM memory"
        " WHERE user_id = %s AND id = ANY(%s) AND role = 'user'",
        (user_id, list(ids)),
    ).fetchone()
    if turns is None or not turns[0]:
        return [], 0
    forgotten, earliest = {int(i) for i in turns[0]}, turns[1]
    user = conn.execute(
        "SELECT core_profile, sub_profile, core_profile_sources, sub_profile_sources"
        " FROM users WHERE user_id = %s FOR UPDATE",
        (user_id,),
    ).fetchone()
    if user is None:
        return [], 0
    history = [
        _Entry(int(r[0]), str(r[1]), str(r[2]), r[3], r[4])
        for r in conn.execute(
            "SELECT id, field, changed_by, source_ids, created_at FROM profile_history"
            " WHERE user_id = %s ORDER BY id FOR UPDATE",
            (user_id,),
        ).fetchall()
    ]
    dropped: list[str] = []
    doomed: list[int] = []
    for index, field in enumerate(FIELDS):
        entries = [e for e in history if e.field == field]
        tainted, current = _tainted(entries, forgotten, earliest)
        doomed += tainted
        value, sources = user[index], user[index + 2]
        last_write = max((e.created_at for e in entries), default=None)
        if value is None:
            continue
        if sources is not None:
            built = bool(forgotten & set(sources))
        else:  # unknown: any user turn said before the last write may have been read
            built = last_write is None or earliest <= last_write
        if built or current:
            dropped.append(field)
    if doomed:
        conn.execute("DELETE FROM profile_history WHERE id = ANY(%s)", (doomed,))
    for field in dropped:
        conn.execute(
            sql.SQL("UPDATE users SET {col} = NULL, {src} = '{{}}' WHERE user_id = %s").format(
                col=sql.Identifier(field), src=sql.Identifier(f"{field}_sources")
            ),
            (user_id,),
        )
        conn.execute(
            "INSERT INTO profile_history (user_id, field, old_value, new_value, changed_by,"
            " source_ids) VALUES (%s, %s, NULL, NULL, %s, '{}')",
            (user_id, field, FORGET_MARK),
        )
    return dropped, len(doomed)


def _tainted(
    entries: list[_Entry], forgotten: set[int], earliest: datetime
) -> tuple[list[int], bool]:
    """The entries of one field that may hold text of ``forgotten`` turns, and whether the
    field's current text (its last stretch) does. A field's text carries over from write to
    write until a forget empties it, so from the first entry that read a forgotten turn (or
    of unknown provenance, written after the earliest of them was said) to that point, every
    entry goes."""
    doomed: list[int] = []
    tainted = False
    for entry in entries:
        if entry.changed_by == FORGET_MARK:
            tainted = False
            continue
        if not tainted:
            if entry.source_ids is None:
                tainted = entry.created_at >= earliest
            else:
                tainted = bool(forgotten & set(entry.source_ids))
        if tainted:
            doomed.append(entry.id)
    return doomed, tainted


def rewrite_profiles(
    conn: psycopg.Connection[Any],
    rewrite: TextRewrite,
    user_ids: Sequence[int],
    lock: str,
    dry_run: bool,
) -> tuple[int, int]:
    """Apply ``rewrite`` to the profiles and profile history of ``user_ids``; (profile fields
    changed, profile history values changed)."""
    users = conn.execute(
        "SELECT user_id, core_profile, sub_profile FROM users WHERE user_id = ANY(%s)"
        " ORDER BY user_id" + lock,
        (list(user_ids),),
    ).fetchall()

    def new(text: str | None) -> str | None:
        return rewrite(text) if text else text

    profile_updates = [
        (new(core), new(sub), int(uid))
        for uid, core, sub in users
        if new(core) != core or new(sub) != sub
    ]
    fields = sum((new(c) != c) + (new(s) != s) for _, c, s in users)
    history = conn.execute(
        "SELECT id, old_value, new_value FROM profile_history WHERE user_id = ANY(%s)"
        " ORDER BY id" + lock,
        ([int(u[0]) for u in users],),
    ).fetchall()
    history_updates = [
        (new(old), new(value), int(i))
        for i, old, value in history
        if new(old) != old or new(value) != value
    ]
    values = sum((new(o) != o) + (new(v) != v) for _, o, v in history)
    if not dry_run:
        with conn.cursor() as cur:
            if profile_updates:
                cur.executemany(
                    "UPDATE users SET core_profile = %s, sub_profile = %s WHERE user_id = %s",
                    profile_updates,
                )
            if history_updates:
                cur.executemany(
                    "UPDATE profile_history SET old_value = %s, new_value = %s WHERE id = %s",
                    history_updates,
                )
    return fields, values
