"""Every filter, and filtered vector searches that still fill the page."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import psycopg
import pytest

from agents_memory.daterange import DateRange
from agents_memory.store import migrate
from agents_memory.store.memories import ensure_user
from agents_memory.store.search import SearchFilters, SearchTuning
from bench.search_plans import explain_search

from .helpers import NOW, add, mem, messages, run, unit


def tag(conn: psycopg.Connection[Any], name: str, alias_of: int | None = None) -> int:
    row = conn.execute(
        "INSERT INTO project_tags (name, alias_of) VALUES (%s, %s) RETURNING id", (name, alias_of)
    ).fetchone()
    assert row is not None
    return int(row[0])


def set_tag(conn: psycopg.Connection[Any], memory_id: int, tag_id: int) -> None:
    conn.execute("UPDATE memory SET p_tag_id = %s WHERE id = %s", (tag_id, memory_id))
    conn.commit()


def test_p_tag_filter_follows_the_alias_chain_to_the_canonical_tag(
    conn: psycopg.Connection[Any],
) -> None:
    root = tag(conn, "agents-memory")
    middle = tag(conn, "mcp-memory", alias_of=root)
    leaf = tag(conn, "memory-server", alias_of=middle)
    other = tag(conn, "website")
    ids = add(conn, [mem(f"note {n}") for n in ("root", "middle", "leaf", "other", "none")])
    for memory_id, tag_id in zip(ids, (root, middle, leaf, other), strict=False):
        set_tag(conn, memory_id, tag_id)
    for asked in ("memory-server", "MCP-Memory", "agents-memory"):
        result = run(conn, "note", p_tag=asked)
        assert sorted(messages(result)) == ["note leaf", "note middle", "note root"]
        assert result.p_tag == "agents-memory"
        assert {h.p_tag for h in result.hits} == {"agents-memory"}
    listing = run(conn, None, p_tag="website")
    assert messages(listing) == ["note other"] and listing.used == "recency"


def test_unknown_p_tag_returns_none_with_a_note(conn: psycopg.Connection[Any]) -> None:
    add(conn, [mem("note")])
    result = run(conn, "note", p_tag="no-such-project")
    assert result.used == "none"
    assert result.hits == ()
    assert result.note and "no-such-project" in result.note


def test_date_range_filters_on_the_turns_own_time(conn: psycopg.Connection[Any]) -> None:
    add(conn, [mem(f"standup {d}", age_days=d) for d in (1, 5, 10, 20)])
    window = DateRange(NOW - timedelta(days=12), NOW - timedelta(days=3))
    assert sorted(messages(run(conn, "standup", date_range=window))) == [
        "standup 10",
        "standup 5",
    ]
    since = DateRange(NOW - timedelta(days=6), None)
    assert sorted(messages(run(conn, None, date_range=since))) == ["standup 1", "standup 5"]


def test_role_filter(conn: psycopg.Connection[Any]) -> None:
    add(conn, [mem("ask about caching", role="user"), mem("caching answer", role="assistant")])
    assert messages(run(conn, "caching", role="assistant")) == ["caching answer"]
    assert messages(run(conn, "caching", role="user")) == ["ask about caching"]


def test_platform_filter_and_star_means_every_platform(conn: psycopg.Connection[Any]) -> None:
    add(conn, [mem("build fix", platform="codex"), mem("build fix", platform="gemini-cli")])
    assert {h.agent_platform for h in run(conn, "build", agent_platform="codex").hits} == {"codex"}
    for every in ("*", None):
        result = run(conn, "build", agent_platform=every)
        assert {h.agent_platform for h in result.hits} == {"codex", "gemini-cli"}


def test_local_scope_keeps_this_device_and_pinned_rows_from_elsewhere(
    conn: psycopg.Connection[Any],
) -> None:
    add(
        conn,
        [
            mem("laptop deploy", device="laptop"),
            mem("desktop deploy", device="desktop"),
            mem("desktop pinned deploy", device="desktop", pinned=True),
            mem("legacy deploy", device=None),
        ],
    )
    local = run(conn, "deploy", device_scope="local", device_name="laptop")
    assert sorted(messages(local)) == ["desktop pinned deploy", "laptop deploy"]
    everywhere = run(conn, "deploy", device_scope="global", device_name="laptop")
    assert len(everywhere.hits) == 4
    with pytest.raises(ValueError, match="device"):
        run(conn, "deploy", device_scope="local")


def test_archived_rows_are_found_only_on_request(conn: psycopg.Connection[Any]) -> None:
    old, _live = add(conn, [mem("archived retro"), mem("live retro")])
    conn.execute("UPDATE memory SET is_active = false, archived_at = now() WHERE id = %s", (old,))
    conn.commit()
    assert messages(run(conn, "retro")) == ["live retro"]
    assert sorted(messages(run(conn, "retro", include_archived=True))) == [
        "archived retro",
        "live retro",
    ]
    assert len(run(conn, None, include_archived=True).hits) == 2


def test_users_do_not_see_each_others_rows(conn: psycopg.Connection[Any]) -> None:
    add(conn, [mem("secret plan")], user="alice")
    add(conn, [mem("public plan")], user="bob")
    assert messages(run(conn, "plan", user="bob")) == ["public plan"]


@pytest.mark.parametrize("limit", [0, 51])
def test_limit_outside_one_to_fifty_is_refused(conn: psycopg.Connection[Any], limit: int) -> None:
    with pytest.raises(ValueError, match="limit"):
        run(conn, "x", limit=limit)


@pytest.mark.parametrize("nearest_elsewhere", [20, 250])
def test_filters_never_starve_a_vector_search(
    conn: psycopg.Connection[Any], nearest_elsewhere: int
) -> None:
    """300 rows; the nearest ones belong to another platform. Filtering by platform must still
    fill the page (pgvector's iterative scan) while the HNSW index is walked."""
    query = unit((0, 1.0))
    rng = np.random.default_rng(7)
    noise = rng.normal(size=(300, 384)) / np.sqrt(384)
    raw = rng.uniform(0, 1, size=(300, 1)) * query + noise
    vectors = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    order = np.argsort(-(vectors @ query))  # nearest first
    rows = [
        mem(f"rank {rank}", platform="claude-code" if rank < nearest_elsewhere else "codex")
        for rank in range(300)
    ]
    add(conn, rows, [vectors[i] for i in order])
    conn.execute("SET enable_seqscan = off")  # walk the HNSW index even on a tiny table
    conn.execute("SET enable_sort = off")
    filters = SearchFilters(agent_platform="codex", limit=10)
    uid = ensure_user(conn, "tester")
    plan = explain_search(
        conn, uid, query="zzz", query_vector=query, filters=filters, tuning=SearchTuning()
    )
    assert "memory_embedding_hnsw" in plan
    # "zzz" matches no word, so the vector arm alone ranks; a weak search shows only a few
    # hits by default, so this one is asked to show the whole page it fills.
    result = run(
        conn, "zzz", query, tuning=SearchTuning(weak_shown=10), agent_platform="codex", limit=10
    )
    assert len(result.hits) == 10
    assert {h.agent_platform for h in result.hits} == {"codex"}
    assert [h.message for h in result.hits] == [f"rank {nearest_elsewhere + i}" for i in range(10)]


def test_without_the_vector_column_search_runs_full_text_only(
    empty_db_url: str, make_settings: Any
) -> None:
    with psycopg.connect(empty_db_url, autocommit=True) as admin:
        migrate.migrate(admin)  # no ensure_embedding_column: as on a server without pgvector
    with psycopg.connect(empty_db_url) as conn:
        uid = ensure_user(conn, "tester")
        assert uid
        add(conn, [mem("compiler warnings cleanup"), mem("weekend hike")])
        result = run(conn, "compiler", unit((0, 1.0)))
        assert result.used == "fulltext"
        assert not result.vector_used
        assert messages(result) == ["compiler warnings cleanup"]
        assert result.hits[0].why.similarity is None
        assert result.note and "full-text only" in result.note
        assert run(conn, "ompil", unit((0, 1.0))).used == "ilike"
