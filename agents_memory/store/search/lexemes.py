"""The words ANALYZE found common in the whole table, kept where a search can look them up.

A search in a scope bigger than its sample reads the rows of its rare words through the GIN
index (:mod:`agents_memory.store.search.statement`). A word the sample (the newest rows) lacks is
rare unless ANALYZE counted it among the most common elements of ``memory.fts``; reading those
from ``pg_stats`` inside every search costs milliseconds, so the Cold Path copies them into
``search_lexemes`` whenever they change (:func:`refresh_search_lexemes`).

The full-text index takes new rows into its pending list (GIN's fast update) and merges them
into the index only when the list outgrows ``gin_pending_list_limit`` (4 MB) or when autovacuum
runs; until then every lookup of a word through the index also reads the whole list, row by
row. On the coding set's 5,200 turns just imported (all of them pending) that doubled a
search's time. The Cold Path merges it on each tick (:func:`merge_pending_words`), so a search
reads at most about a minute of new turns that way.
"""

from __future__ import annotations

from typing import Any

import psycopg

from agents_memory.store import meta

STATS_KEY = "search.lexemes.stats"
"""``meta``: a digest of the statistics the table was last copied from."""

_DIGEST = (
    "SELECT md5(s.most_common_elems::text || s.most_common_elem_freqs::text"
    " || (SELECT reltuples FROM pg_class WHERE oid = 'memory'::regclass)::text)"
    " FROM pg_stats s WHERE s.schemaname = current_schema() AND s.tablename = 'memory'"
    " AND s.attname = 'fts'"
)


def copied_before(conn: psycopg.Connection[Any]) -> bool:
    """Whether the common words were ever copied into this database."""
    return meta.get(conn, STATS_KEY) is not None


def analyze_memory(conn: psycopg.Connection[Any]) -> None:
    """Count the table's statistics now (autovacuum does it after enough new rows; a database
    upgraded to the raised statistics target needs it once)."""
    conn.execute("ANALYZE memory")


GROWN_ROWS = 50
GROWN_SHARE = 0.1
"""A table that gained more than ``GROWN_ROWS`` + ``GROWN_SHARE`` of its counted rows is counted
again (autovacuum's own rule, :func:`analyze_grown`)."""


def analyze_grown(conn: psycopg.Connection[Any], added: dict[str, int]) -> list[str]:
    """ANALYZE each of ``memory`` / ``actions`` (the keys of ``added``) that gained, by
    ``added``'s count, what autovacuum would count it again for, and return their names.

    A bulk import (a backfill) ends with it: autovacuum would do the same, but up to a minute
    later, and the first searches meanwhile are planned for the tables as they were before (an
    import into a new database: no statistics at all). Measured on 10,000 imported turns with
    1,570 actions, the actions arm scanned every action in the user's index for 12 ms instead
    of reading its words' matches through the full-text index in under 1 ms. The caller
    commits."""
    counted = dict(
        conn.execute(
            "SELECT c.relname, c.reltuples FROM pg_class c WHERE c.oid IN"
            " (to_regclass('memory'), to_regclass('actions'))"
        ).fetchall()
    )
    analysed = []
    for table in ("memory", "actions"):
        if table not in counted or added.get(table, 0) <= 0:
            continue
        before = max(float(counted[table]), 0.0)  # -1: never counted
        if counted[table] < 0 or added[table] > GROWN_ROWS + GROWN_SHARE * before:
            conn.execute(f"ANALYZE {table}")
            analysed.append(table)
    return analysed


def merge_pending_words(conn: psycopg.Connection[Any]) -> int:
    """Merge the full-text index's pending list into the index; returns how many of its pages
    were merged (0 when it was empty, or when this role does not own the index and may not).
    The caller commits."""
    row = conn.execute(
        "SELECT gin_clean_pending_list(c.oid) FROM pg_class c"
        " WHERE c.oid = to_regclass('memory_fts') AND pg_has_role(c.relowner, 'USAGE')"
    ).fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


def refresh_search_lexemes(conn: psycopg.Connection[Any], *, force: bool = False) -> int | None:
    """Copy the common lexemes from the table's statistics when they changed since the last
    copy (or ``force``); returns how many were copied, ``None`` when nothing changed. The
    caller commits."""
    row = conn.execute(_DIGEST).fetchone()
    digest = str(row[0]) if row and row[0] is not None else ""
    if not force and meta.get(conn, STATS_KEY) == digest:
        return None
    conn.execute("LOCK TABLE search_lexemes IN EXCLUSIVE MODE")
    conn.execute("DELETE FROM search_lexemes")
    copied = conn.execute(
        "INSERT INTO search_lexemes (term, est_rows)"
        " SELECT quote_literal(c.lexeme), max(c.est_rows) FROM memory_common_lexemes(0) c"
        " GROUP BY 1"
    ).rowcount
    meta.put(conn, STATS_KEY, digest)
    return max(copied, 0)
