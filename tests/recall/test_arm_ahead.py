"""A search whose query takes every core leaves its full-text arm for after the vector (inside
the hybrid statement); one whose query leaves a core sends the arm beside it. Either way the
search finds the same. Real database; the query's vector is made on the PendingVector's own
thread, and the connection is looked at when the search first asks for it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.recall.search import PendingVector, QueryVector, prepare_search, search_on
from agents_memory.recall.search_request import SearchRequest
from agents_memory.store.search import SearchResult
from tests.conftest import TEST_DIM, TEST_MODEL
from tests.search.helpers import add, mem, unit

_ARM = "%memory_common_lexemes%"
"""Text of the full-text arm (its own statement ahead, or the hybrid statement's), in no other
statement sent before the vector."""


@pytest.fixture
def vector_settings(make_settings: Any, db_url: str, conn: psycopg.Connection[Any]) -> Settings:
    rows = [
        mem(f"{topic} note {i} about the staging deploy", session=f"s{i // 4}", age_days=i / 3)
        for i, topic in enumerate(["zeppelin", "hangar", "invoice", "mooring"] * 10)
    ]
    add(conn, rows, [unit((i % 4, 1.0), (4 + i % 3, 0.5)) for i in range(len(rows))])
    result: Settings = make_settings(
        database_url=db_url,
        embedding_backend="openai",
        embedding_model=TEST_MODEL,
        embedding_dim=TEST_DIM,
        embedding_base_url="http://127.0.0.1:9/v1",  # never asked: the vector is given
    )
    return result


class _Watched(PendingVector):
    """The real pending vector, which counts the arm's statements prepared on ``conn`` at the
    moment the search first asks for the vector (on the search's own thread)."""

    def __init__(self, conn: psycopg.Connection[Any], *, arm_ahead: bool) -> None:
        self.conn, self.at_ask = conn, -1
        super().__init__(lambda: QueryVector(unit((1, 1.0))), threads=2, arm_ahead=arm_ahead)

    def result(self) -> QueryVector:
        if self.asked is None:
            self.at_ask = _arm_statements(self.conn)
        return super().result()


def _search(
    conn: psycopg.Connection[Any], settings: Settings, *, arm_ahead: bool
) -> tuple[int, SearchResult]:
    """The search of "zeppelin hangar deploy" with its vector made beside it, and how many
    statements holding the arm the connection prepared before the search asked for the
    vector."""
    before = _arm_statements(conn)
    request = prepare_search(
        SearchRequest.build(query="zeppelin hangar deploy", limit=5),
        device_name=None,
        now=datetime.now(UTC),
    )
    pending = _Watched(conn, arm_ahead=arm_ahead)
    notes: list[str] = []
    result = search_on(conn, settings, request, pending, on_note=notes.append)
    assert notes == [] and result.vector_used and pending.asked is not None
    return pending.at_ask - before, result


def _arm_statements(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute(
        "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", (_ARM,)
    ).fetchone()
    return int(row[0]) if row else -1


def test_the_arm_waits_for_the_vector_when_the_query_takes_every_core(
    conn: psycopg.Connection[Any], vector_settings: Settings
) -> None:
    prepared_after, after = _search(conn, vector_settings, arm_ahead=False)
    prepared_ahead, ahead = _search(conn, vector_settings, arm_ahead=True)
    assert (prepared_after, prepared_ahead) == (0, 1)  # the arm ran beside the query only then
    assert after.hits and after == ahead  # the same hits, scores and confidences
