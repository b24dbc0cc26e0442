"""Every place memory text lives, read in full and rewritten in place.

A memory's text is in more places than ``memory.message``:

* ``memory.message`` and ``memory.raw_message`` (the client's envelope);
* ``memory_history.old_message``: the text before each edit;
* ``tag_summaries.summary``: summaries written from rows (their ids in ``source_ids``);
* ``users.core_profile`` / ``users.sub_profile`` and ``profile_history`` (old and new values):
  profiles the librarian distils from the pool, and notes people add;
* ``memory.embedding`` (and ``embedding_new`` during a reembed): vectors made from the text of
  a row *and of the turn before it* in its session (:mod:`agents_memory.store.passages`).

:func:`rewrite_texts` applies one text function to all of them for a set of rows, in one
transaction, writing only what changes: ``doctor --secrets --fix`` re-redacts with it, and
``forget`` will remove text with it. A row whose message changed loses its vector, and so does
the next turn of its session (its vector was made from the end of the old text), so the Cold
Path embedder makes them again from the new text. Nothing is copied to a history table: the old
text is what must go.

The readers (:func:`memory_texts`, :func:`summary_texts`, :func:`profile_texts`) page through
the same places by id, for scans such as ``doctor --secrets``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from agents_memory.store.memories import AdmittedText

TextRewrite = Callable[[str], AdmittedText]
"""New text for old; returns its argument unchanged when there is nothing to change."""


@dataclass(frozen=True, slots=True)
class RewriteCounts:
    """What :func:`rewrite_texts` changed (or, on a dry run, would change)."""

    memory_ids: list[int] = field(default_factory=list)
    """Rows whose message, raw text or history changed."""
    messages: int = 0
    raw_messages: int = 0
    history_entries: int = 0
    summaries: int = 0
    profile_texts: int = 0
    """Current profile fields (core and sub) that changed."""
    profile_history_entries: int = 0
    embeddings_cleared: int = 0
    """Vectors dropped so the embedder makes them again (0 on a dry run: not known then)."""

    @property
    def rows(self) -> int:
        return len(self.memory_ids)

    @property
    def total(self) -> int:
        """Every text changed, in every place."""
        return (
            self.messages
            + self.raw_messages
            + self.history_entries
            + self.summaries
            + self.profile_texts
            + self.profile_history_entries
        )


# --- reading -----------------------------------------------------------------------------------
def memory_texts(
    conn: psycopg.Connection[Any], *, batch: int = 500
) -> Iterator[tuple[int, list[str]]]:
    """``(memory id, [message, raw message, old messages…])`` for every row, by id."""
    last = 0
    while True:
        rows = conn.execute(
            "SELECT m.id, m.message, m.raw_message,"
            " ARRAY(SELECT h.old_message FROM memory_history h WHERE h.memory_id = m.id)"
            " FROM memory m WHERE m.id > %s ORDER BY m.id LIMIT %s",
            (last, batch),
        ).fetchall()
        for memory_id, message, raw, history in rows:
            yield int(memory_id), [message, *([raw] if raw else []), *history]
        if len(rows) < batch:
            return
        last = int(rows[-1][0])


def summary_texts(conn: psycopg.Connection[Any], *, batch: int = 500) -> Iterator[tuple[int, str]]:
    """``(summary id, summary)`` for every tag summary, by id."""
    last = 0
    while True:
        rows = conn.execute(
            "SELECT id, summary FROM tag_summaries WHERE id > %s ORDER BY id LIMIT %s",
            (last, batch),
        ).fetchall()
        yield from ((int(i), str(s)) for i, s in rows)
        if len(rows) < batch:
            return
        last = int(rows[-1][0])


def profile_texts(conn: psycopg.Connection[Any]) -> Iterator[tuple[int, list[str]]]:
    """``(user id, [core profile, sub profile, history values…])`` for every user."""
    rows = conn.execute(
        "SELECT u.user_id, ARRAY[u.core_profile, u.sub_profile]"
        " || ARRAY(SELECT v FROM profile_history p, LATERAL (VALUES (p.old_value), (p.new_value))"
        "          AS t(v) WHERE p.user_id = u.user_id)"
        " FROM users u ORDER BY u.user_id"
    ).fetchall()
    for user_id, texts in rows:
        yield int(user_id), [t for t in texts if t]


# --- rewriting ---------------------------------------------------------------------------------
def rewrite_texts(
    conn: psycopg.Connection[Any],
    rewrite: TextRewrite,
    *,
    memory_ids: Sequence[int],
    summary_ids: Sequence[int] = (),
    user_ids: Sequence[int] = (),
    dry_run: bool = False,
) -> RewriteCounts:
    """Apply ``rewrite`` to every text of rows ``memory_ids``: message, raw text, history, the
    tag summaries made from them (plus ``summary_ids``), and the profiles and profile history
    of their users (plus ``user_ids``); in one transaction, writing only texts that change.

    ``dry_run``: count what would change and write nothing."""
    ids = sorted(set(memory_ids))
    with conn.transaction():
        lock = "" if dry_run else " FOR UPDATE"
        messages, raws = _rewrite_memories(conn, rewrite, ids, lock, dry_run)
        history_ids = _rewrite_history(conn, rewrite, ids, lock, dry_run)
        summaries = _rewrite_summaries(conn, rewrite, ids, summary_ids, lock, dry_run)
        profiles, profile_history = _rewrite_profiles(conn, rewrite, ids, user_ids, lock, dry_run)
        cleared = 0 if dry_run else _clear_vectors(conn, messages)
    touched = sorted(set(messages) | set(raws) | set(history_ids))
    return RewriteCounts(
        memory_ids=touched,
        messages=len(messages),
        raw_messages=len(raws),
        history_entries=sum(history_ids.values()),
        summaries=summaries,
        profile_texts=profiles,
        profile_history_entries=profile_history,
        embeddings_cleared=cleared,
    )


def _rewrite_memories(
    conn: psycopg.Connection[Any], rewrite: TextRewrite, ids: list[int], lock: str, dry_run: bool
) -> tuple[list[int], list[int]]:
    """Ids whose message changed, and ids whose raw text changed."""
    rows = conn.execute(
        "SELECT id, message, raw_message FROM memory WHERE id = ANY(%s) ORDER BY id" + lock,
        (ids,),
    ).fetchall()
    messages: list[int] = []
    raws: list[int] = []
    updates: list[tuple[str, str | None, int]] = []
    for memory_id, message, raw in rows:
        new_message = rewrite(message)
        new_raw = rewrite(raw) if raw else raw
        if new_message != message:
            messages.append(int(memory_id))
        if new_raw != raw:
            raws.append(int(memory_id))
        if new_message != message or new_raw != raw:
            updates.append((new_message, new_raw, int(memory_id)))
    if updates and not dry_run:
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE memory SET message = %s, raw_message = %s WHERE id = %s", updates
            )
    return messages, raws


def _rewrite_history(
    conn: psycopg.Connection[Any], rewrite: TextRewrite, ids: list[int], lock: str, dry_run: bool
) -> dict[int, int]:
    """Memory id -> history entries changed."""
    rows = conn.execute(
        "SELECT id, memory_id, old_message FROM memory_history WHERE memory_id = ANY(%s)"
        " ORDER BY id" + lock,
        (ids,),
    ).fetchall()
    changed: dict[int, int] = {}
    updates: list[tuple[str, int]] = []
    for entry_id, memory_id, old in rows:
        new = rewrite(old)
        if new != old:
            changed[int(memory_id)] = changed.get(int(memory_id), 0) + 1
            updates.append((new, int(entry_id)))
    if updates and not dry_run:
        with conn.cursor() as cur:
            cur.executemany("UPDATE memory_history SET old_message = %s WHERE id = %s", updates)
    return changed


def _rewrite_summaries(
    conn: psycopg.Connection[Any],
    rewrite: TextRewrite,
    ids: list[int],
    summary_ids: Sequence[int],
    lock: str,
    dry_run: bool,
) -> int:
    rows = conn.execute(
        "SELECT id, summary FROM tag_summaries"
        " WHERE source_ids && %s::bigint[] OR id = ANY(%s) ORDER BY id" + lock,
        (ids, list(summary_ids)),
    ).fetchall()
    updates = [(new, int(i)) for i, old in rows if (new := rewrite(old)) != old]
    if updates and not dry_run:
        with conn.cursor() as cur:
            cur.executemany("UPDATE tag_summaries SET summary = %s WHERE id = %s", updates)
    return len(updates)


def _rewrite_profiles(
    conn: psycopg.Connection[Any],
    rewrite: TextRewrite,
    ids: list[int],
    user_ids: Sequence[int],
    lock: str,
    dry_run: bool,
) -> tuple[int, int]:
    """(profile fields changed, profile history values changed) of the rows' users and
    ``user_ids``."""
    users = conn.execute(
        "SELECT user_id, core_profile, sub_profile FROM users WHERE user_id = ANY(%s)"
        " OR user_id IN (SELECT user_id FROM memory WHERE id = ANY(%s)) ORDER BY user_id" + lock,
        (list(user_ids), ids),
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


_NEXT_IN_SESSION = (
    "SELECT n.id FROM memory m CROSS JOIN LATERAL ("
    " SELECT n.id FROM memory n WHERE m.session_id IS NOT NULL"
    " AND n.agent_platform = m.agent_platform AND n.session_id = m.session_id"
    " AND n.user_id = m.user_id AND (n.message_at, n.id) > (m.message_at, m.id)"
    " ORDER BY n.message_at, n.id LIMIT 1) n WHERE m.id = ANY(%(ids)s)"
)
"""The turn after each of rows ``%(ids)s`` in its session: its vector read their end."""


def _clear_vectors(conn: psycopg.Connection[Any], ids: list[int]) -> int:
    """Drop the vectors made from rows ``ids``'s old text (theirs and the next turns'), so the
    embedder makes them again; the number of rows whose vector went."""
    if not ids:
        return 0
    columns = {
        str(r[0])
        for r in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass('memory')"
            " AND attname IN ('embedding', 'embedding_new') AND NOT attisdropped"
        ).fetchall()
    }
    if "embedding" not in columns:
        return 0
    also_new = ", embedding_new = NULL" if "embedding_new" in columns else ""
    has_vector = "embedding IS NOT NULL" + (
        " OR embedding_new IS NOT NULL" if "embedding_new" in columns else ""
    )
    cur = conn.execute(
        "UPDATE memory SET embedding = NULL, embedding_model = NULL" + also_new + " WHERE"
        " (id = ANY(%(ids)s) OR id IN (" + _NEXT_IN_SESSION + ")) AND (" + has_vector + ")",
        {"ids": ids},
    )
    return cur.rowcount
