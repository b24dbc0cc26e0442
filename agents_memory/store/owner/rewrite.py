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
transaction, writing only what changes: ``doctor --secrets --fix`` re-redacts with it. It
rewrites the rows' own text here and hands everything built from it to
:func:`agents_memory.store.owner.derived.update_derived`, the path ``forget`` takes too (there the
text goes instead of changing). A row whose message changed loses its vector, and so does the
next turn of its session (its vector was made from the end of the old text), so the Cold Path
embedder makes them again from the new text. Nothing is copied to a history table: the old
text is what must go.

The readers (:func:`memory_texts`, :func:`summary_texts`, :func:`profile_texts`) page through
the same places by id, for scans such as ``doctor --secrets``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from agents_memory.store.owner.derived import TextRewrite, update_derived


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
    actions: int = 0
    """Actions (tool calls) whose command, targets or excerpt changed
    (:mod:`agents_memory.store.owner.rewrite_actions`)."""

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
            + self.actions
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


def session_summary_texts(
    conn: psycopg.Connection[Any], *, batch: int = 500
) -> Iterator[tuple[int, list[str]]]:
    """``(session summary id, [title, summary, search words])`` for every session summary."""
    last = 0
    while True:
        rows = conn.execute(
            "SELECT id, title, summary, terms FROM session_summaries WHERE id > %s"
            " ORDER BY id LIMIT %s",
            (last, batch),
        ).fetchall()
        yield from ((int(r[0]), [str(r[1]), str(r[2]), str(r[3])]) for r in rows)
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
    session_summary_ids: Sequence[int] = (),
    dry_run: bool = False,
) -> RewriteCounts:
    """Apply ``rewrite`` to every text of rows ``memory_ids``: message, raw text, history, the
    tag summaries made from them (plus ``summary_ids``), the summaries of their sessions (plus
    ``session_summary_ids``), and the profiles and profile history
    of their users (plus ``user_ids``); in one transaction, writing only texts that change.

    ``dry_run``: count what would change and write nothing."""
    ids = sorted(set(memory_ids))
    with conn.transaction():
        lock = "" if dry_run else " FOR UPDATE"
        messages, raws = _rewrite_memories(conn, rewrite, ids, lock, dry_run)
        history_ids = _rewrite_history(conn, rewrite, ids, lock, dry_run)
        derived = update_derived(
            conn,
            ids,
            rewrite=rewrite,
            changed_ids=messages,
            summary_ids=summary_ids,
            user_ids=user_ids,
            session_summary_ids=session_summary_ids,
            dry_run=dry_run,
        )
    touched = sorted(set(messages) | set(raws) | set(history_ids))
    return RewriteCounts(
        memory_ids=touched,
        messages=len(messages),
        raw_messages=len(raws),
        history_entries=sum(history_ids.values()),
        summaries=derived.summaries_rewritten + derived.session_summaries_rewritten,
        profile_texts=derived.profile_texts,
        profile_history_entries=derived.profile_history_entries,
        embeddings_cleared=derived.embeddings_cleared,
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
