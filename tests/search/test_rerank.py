"""The last step of the ranking (:mod:`agents_memory.store.search.rerank`) on a real pool: off
by default (the page is the statement's), diversity gives the places of an error pasted in
many sessions to other matches, importance lifts a turn remembered on purpose and given to
sessions before, each within its bound."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import psycopg
import pytest

from agents_memory.store.search import SearchTuning
from agents_memory.store.search.rerank import active, importance, jaccard

from .helpers import add, mem, run

ERROR = "TypeError: Cannot read properties of undefined (reading 'rateTable') at loadTaxRates"
WRAPPERS = ("hit this again:", "CI fails with", "same as yesterday?", "after the rebase:",
            "staging logs show", "on my laptop too:")  # fmt: skip
OTHERS = (
    "Fixed loadTaxRates: it awaits the config loader, rateTable defaults to an empty table.",
    "Root cause: loadTaxRates read rateTable before the loader ran on a cold start.",
    "Added a test that calls loadTaxRates cold and checks rateTable is undefined no more.",
    "Decision: loadTaxRates keeps rateTable in memory only, the undefined case is logged.",
)


def _pool(conn: psycopg.Connection[Any]) -> list[int]:
    rows = [mem(f"{w}\n{ERROR}", session=f"s{n}") for n, w in enumerate(WRAPPERS)]
    rows += [mem(text, role="assistant", session="fix") for text in OTHERS]
    return add(conn, rows)


def test_off_by_default_and_diversity_gives_duplicates_places_away(
    conn: psycopg.Connection[Any],
) -> None:
    ids = _pool(conn)
    dupes = set(ids[: len(WRAPPERS)])
    assert not active(SearchTuning(importance_weight=0.0)) and active(SearchTuning())
    plain = run(conn, ERROR, limit=5)
    assert sum(h.id in dupes for h in plain.hits) == 5  # the page is the pasted error

    diverse = run(conn, ERROR, limit=5, tuning=SearchTuning(mmr_lambda=0.3))
    kept = [h.id for h in diverse.hits]
    assert len(kept) == 5 and sum(i in dupes for i in kept) < 5
    assert kept[0] == plain.hits[0].id  # the best match keeps its place
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == 1 / 3
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_importance_lifts_a_remembered_and_recalled_turn_within_its_bound(
    conn: psycopg.Connection[Any],
) -> None:
    ids = _pool(conn)
    off = SearchTuning(importance_weight=0.0)
    plain = [h.id for h in run(conn, "loadTaxRates rateTable fix", limit=9, tuning=off).hits]
    last = plain[-1]
    conn.execute("UPDATE memory SET source = 'manage_knowledge' WHERE id = %s", (last,))
    uid = conn.execute("SELECT user_id FROM memory WHERE id = %s", (ids[0],)).fetchone()
    conn.execute(
        "INSERT INTO prompt_recalls (user_id, agent_platform, kind, outcome, memory_ids)"
        " SELECT %s, 'claude-code', 'prompt', 'added', ARRAY[%s::bigint]"
        " FROM generate_series(1, 8)",
        (uid[0] if uid else None, last),
    )
    conn.commit()
    tuning = SearchTuning()  # importance on by default
    lifted = [h.id for h in run(conn, "loadTaxRates rateTable fix", limit=9, tuning=tuning).hits]
    assert sorted(lifted) == sorted(plain)  # the same page, reordered
    assert lifted.index(last) < plain.index(last)
    back = replace(tuning, importance_weight=0.0)
    assert [h.id for h in run(conn, "loadTaxRates rateTable fix", limit=9, tuning=back).hits] == (
        plain
    )
    assert importance(conn, [last, ids[0]]) == {last: pytest.approx(0.5), ids[0]: 0.0}  # 1/3 + 1/6
    conn.execute("UPDATE memory SET is_pinned = true WHERE id = %s", (last,))
    assert importance(conn, [last]) == {last: pytest.approx(1.0)}  # capped: 1 + w times at most
