"""Text built from memory rows, and what becomes of it when their text changes or goes.

Built from rows: tag summaries (their ids in ``source_ids``), the profiles the librarian distils
from user turns (:mod:`agents_memory.store.owner.profile_sources`), the evidence and rationale of
tag
alias suggestions, the vectors of the rows *and of the turn after each in its session* (made
from the end of the turn before, :mod:`agents_memory.store.passages`), and the search's copy of
the common words (``search_lexemes``).

:func:`update_derived` is the one implementation behind both ways text leaves the pool, called
in the caller's transaction while the rows are still there:

* **rewritten** (``rewrite`` given: ``doctor --secrets --fix``): the same function is applied to
  the summaries made from the rows, the profiles and their history, and the suggestions'
  rationale; rows whose message changed and their session successors lose their vectors.
* **gone** (``rewrite`` is ``None``: ``forget``): a summary all of whose sources go is dropped,
  the others lose those ids and are marked ``stale`` (returned, so the caller rebuilds their text
  from what is left); a profile field built from any of the rows is emptied, with the history
  entries that may hold their text, and the librarian builds it again from the turns left;
  suggestions lose them as evidence and their rationale; the successors lose their vectors.

Then, after its write, the caller calls :func:`settle_search_words`: the table's statistics are
counted again and ``search_lexemes`` copied from them, so a word that was only in the old text
is nowhere in the search's bookkeeping either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.rows import class_row

from agents_memory.store.owner.profile_sources import (
    TextRewrite,
    drop_profiles_built_from,
    rewrite_profiles,
)
from agents_memory.store.search.lexemes import analyze_memory, refresh_search_lexemes

__all__ = ["DerivedOutcome", "StaleSummary", "TextRewrite", "settle_search_words", "update_derived"]


@dataclass(frozen=True, slots=True)
class StaleSummary:
    """A tag summary that lost some of its sources: ``source_ids`` are the ones left."""

    id: int
    source_ids: list[int]


@dataclass(slots=True)
class DerivedOutcome:
    """What :func:`update_derived` did (or, on a dry run, would do)."""

    summaries_dropped: int = 0
    stale_summaries: list[StaleSummary] = field(default_factory=list)
    summaries_rewritten: int = 0
    profile_fields_dropped: list[str] = field(default_factory=list)
    """Fields emptied because they were built from gone rows; the librarian builds them again."""
    profile_history_removed: int = 0
    profile_texts: int = 0
    """Current profile fields (core and sub) rewritten."""
    profile_history_entries: int = 0
    suggestions: int = 0
    """Tag suggestions whose evidence or rationale changed."""
    embeddings_cleared: int = 0
    """Vectors dropped so the embedder makes them again (0 on a dry run: not known then)."""
    stale_sessions: list[tuple[int, str, str]] = field(default_factory=list)
    """Sessions (user, platform, session id) whose summary was made from gone rows: marked
    stale; the caller writes it again from the turns left (or drops it)."""
    session_summaries_rewritten: int = 0

    @property
    def profile_rebuild(self) -> bool:
        return bool(self.profile_fields_dropped)


def update_derived(
    conn: psycopg.Connection[Any],
    memory_ids: Sequence[int],
    *,
    rewrite: TextRewrite | None,
    changed_ids: Sequence[int] | None = None,
    summary_ids: Sequence[int] = (),
    user_ids: Sequence[int] = (),
    session_summary_ids: Sequence[int] = (),
    dry_run: bool = False,
) -> DerivedOutcome:
    """Deal with the text built from rows ``memory_ids`` (still present): rewritten with
    ``rewrite``, or gone when it is ``None``. ``changed_ids``: the rows whose message changed
    (their vectors go; default all of ``memory_ids``); ``summary_ids`` and ``user_ids``: more
    summaries and users' profiles to rewrite; ``session_summary_ids``: more session summaries
    to rewrite (besides those of the rows' sessions)."""
    ids = sorted(set(memory_ids))
    changed = ids if changed_ids is None else sorted(set(changed_ids))
    outcome = DerivedOutcome()
    owners = [
        int(r[0])
        for r in conn.execute(
            "SELECT DISTINCT user_id FROM memory WHERE id = ANY(%s) ORDER BY 1", (ids,)
        ).fetchall()
    ]
    lock = "" if dry_run else " FOR UPDATE"
    if rewrite is None:
        _summaries_gone(conn, ids, outcome)
        outcome.stale_sessions = session_summaries_of(conn, ids, mark_stale=True)
        outcome.suggestions = _suggestions_gone(conn, ids)
        for owner in owners:
            dropped, removed = drop_profiles_built_from(conn, owner, ids)
            outcome.profile_fields_dropped += dropped
            outcome.profile_history_removed += removed
            if dropped:
                conn.execute(
                    "UPDATE users SET librarian_last_run_at = NULL,"
                    " librarian_msg_count_at_run = NULL WHERE user_id = %s",
                    (owner,),
                )
    else:
        outcome.summaries_rewritten = _rewrite_summaries(
            conn, rewrite, ids, summary_ids, lock, dry_run
        )
        outcome.profile_texts, outcome.profile_history_entries = rewrite_profiles(
            conn, rewrite, sorted({*owners, *user_ids}), lock, dry_run
        )
        outcome.suggestions = _rewrite_rationales(conn, rewrite, ids, lock, dry_run)
        outcome.session_summaries_rewritten = rewrite_session_summaries(
            conn, rewrite, ids, session_summary_ids, lock, dry_run
        )
    if not dry_run:
        outcome.embeddings_cleared = _clear_vectors(conn, changed, own=rewrite is not None)
    return outcome


def settle_search_words(conn: psycopg.Connection[Any]) -> None:
    """After text went or changed (committed): count the table's statistics again and copy the
    common words from them, so none is left from the old text. The caller commits."""
    analyze_memory(conn)
    refresh_search_lexemes(conn, force=True)


# --- tag summaries -----------------------------------------------------------------------------
def _summaries_gone(conn: psycopg.Connection[Any], ids: list[int], outcome: DerivedOutcome) -> None:
    dropped = conn.execute(
        "DELETE FROM tag_summaries WHERE source_ids <@ %s::bigint[] AND source_ids && %s::bigint[]",
        (ids, ids),
    )
    outcome.summaries_dropped = dropped.rowcount
    with conn.cursor(row_factory=class_row(StaleSummary)) as cur:
        cur.execute(
            "UPDATE tag_summaries SET stale = true, source_ids = ARRAY("
            "  SELECT s FROM unnest(source_ids) AS s WHERE s <> ALL(%s::bigint[]) ORDER BY s)"
            " WHERE source_ids && %s::bigint[] RETURNING id, source_ids",
            (ids, ids),
        )
        outcome.stale_summaries = cur.fetchall()


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


# --- session summaries ---------------------------------------------------------------------
_SESSIONS_OF = (
    "FROM session_summaries s WHERE EXISTS (SELECT 1 FROM memory m WHERE m.id = ANY(%s)"
    " AND m.user_id = s.user_id AND m.agent_platform = s.agent_platform"
    " AND m.session_id = s.session_id)"
)


def session_summaries_of(
    conn: psycopg.Connection[Any], ids: list[int], *, mark_stale: bool
) -> list[tuple[int, str, str]]:
    """The sessions (user, platform, session id) of rows ``ids`` that have a summary; with
    ``mark_stale`` their summaries are marked stale."""
    if mark_stale:
        rows = conn.execute(
            "UPDATE session_summaries SET stale = true WHERE id IN (SELECT s.id "
            + _SESSIONS_OF
            + ") RETURNING user_id, agent_platform, session_id",
            (ids,),
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT s.user_id, s.agent_platform, s.session_id " + _SESSIONS_OF, (ids,)
        ).fetchall()
    return sorted((int(r[0]), str(r[1]), str(r[2])) for r in rows)


def rewrite_session_summaries(
    conn: psycopg.Connection[Any],
    rewrite: TextRewrite,
    ids: list[int],
    summary_ids: Sequence[int],
    lock: str,
    dry_run: bool,
) -> int:
    """``rewrite`` applied to the title, summary and search words of the summaries of the
    rows' sessions (and of ``summary_ids``); how many changed."""
    rows = conn.execute(
        "SELECT s.id, s.title, s.summary, s.terms " + _SESSIONS_OF + " OR s.id = ANY(%s)"
        " ORDER BY s.id" + lock,
        (ids, list(summary_ids)),
    ).fetchall()
    updates = []
    for summary_id, *texts in rows:
        new = [rewrite(text) for text in texts]
        if new != texts:
            updates.append((*new, int(summary_id)))
    if updates and not dry_run:
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE session_summaries SET title = %s, summary = %s, terms = %s WHERE id = %s",
                updates,
            )
    return len(updates)


# --- tag suggestions ---------------------------------------------------------------------------
def _suggestions_gone(conn: psycopg.Connection[Any], ids: list[int]) -> int:
    """The rows leave the suggestions' evidence, and a rationale written from them goes. A
    new-tag suggestion (not confirmed: a confirmed one is a project tag now) proposed only for
    these rows goes with its name; one with other sources loses these and its rationale."""
    dropped = conn.execute(
        "DELETE FROM project_tag_new_suggestions WHERE status <> 'confirmed'"
        " AND source_ids <@ %(ids)s::bigint[]",
        {"ids": ids},
    ).rowcount
    kept = conn.execute(
        "UPDATE project_tag_new_suggestions SET rationale = NULL,"
        " source_ids = ARRAY(SELECT s FROM unnest(source_ids) AS s"
        "   WHERE s <> ALL(%(ids)s::bigint[]))"
        " WHERE source_ids && %(ids)s::bigint[]",
        {"ids": ids},
    ).rowcount
    cur = conn.execute(
        "UPDATE project_tag_alias_suggestions SET rationale = NULL,"
        " evidence_memory_ids = ARRAY(SELECT s FROM unnest(evidence_memory_ids) AS s"
        "   WHERE s <> ALL(%(ids)s::bigint[])),"
        " conflict_memory_ids = ARRAY(SELECT s FROM unnest(conflict_memory_ids) AS s"
        "   WHERE s <> ALL(%(ids)s::bigint[]))"
        " WHERE evidence_memory_ids && %(ids)s::bigint[]"
        "  OR conflict_memory_ids && %(ids)s::bigint[]",
        {"ids": ids},
    )
    return dropped + kept + cur.rowcount


def _rewrite_rationales(
    conn: psycopg.Connection[Any], rewrite: TextRewrite, ids: list[int], lock: str, dry_run: bool
) -> int:
    rows = conn.execute(
        "SELECT id, rationale FROM project_tag_alias_suggestions WHERE rationale IS NOT NULL"
        " AND (evidence_memory_ids && %(ids)s::bigint[]"
        "  OR conflict_memory_ids && %(ids)s::bigint[])"
        " ORDER BY id" + lock,
        {"ids": ids},
    ).fetchall()
    updates = [(new, int(i)) for i, old in rows if (new := rewrite(old)) != old]
    if updates and not dry_run:
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE project_tag_alias_suggestions SET rationale = %s WHERE id = %s", updates
            )
    return len(updates)


# --- vectors -----------------------------------------------------------------------------------
_NEXT_IN_SESSION = (
    "SELECT n.id FROM memory m CROSS JOIN LATERAL ("
    " SELECT n.id FROM memory n WHERE m.session_id IS NOT NULL"
    " AND n.agent_platform = m.agent_platform AND n.session_id = m.session_id"
    " AND n.user_id = m.user_id AND (n.message_at, n.id) > (m.message_at, m.id)"
    " ORDER BY n.message_at, n.id LIMIT 1) n WHERE m.id = ANY(%(ids)s)"
)
"""The turn after each of rows ``%(ids)s`` in its session: its vector read their end."""


def _clear_vectors(conn: psycopg.Connection[Any], ids: list[int], *, own: bool) -> int:
    """Drop the vectors made from rows ``ids``'s old text (the next turns' and, with ``own``,
    theirs), so the embedder makes them again; the number of rows whose vector went."""
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
    which = (
        "(id = ANY(%(ids)s) OR id IN (" + _NEXT_IN_SESSION + "))"
        if own
        else "(id <> ALL(%(ids)s) AND id IN (" + _NEXT_IN_SESSION + "))"
    )
    cur = conn.execute(
        "UPDATE memory SET embedding = NULL, embedding_model = NULL"
        + also_new
        + " WHERE "
        + which
        + " AND ("
        + has_vector
        + ")",
        {"ids": ids},
    )
    return cur.rowcount
