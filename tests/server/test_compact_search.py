"""``search_memory``'s compact answer (issue 30) through the SDK's real client: one line per
hit with the id, date, client, project, kind and the words around the match, the count, and
how to read the whole; ``detail="full"`` keeps the full form; ``queries`` fuse phrasings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from tests.search.helpers import add, mem
from tests.server.mcpcall import call, error

FILLER = "We talked about many unrelated things first. " * 30
NEEDLE = "the billing tables were moved to monthly partitions by invoice_date"


def _seed(state: ServerState) -> dict[str, int]:
    now = datetime.now(UTC)
    texts = {
        "long": FILLER + NEEDLE + ". " + FILLER,
        "other": "The staging database listens on port 6543 since the migration.",
        "synonym": "Postgres connection pooling goes through pgbouncer in transaction mode.",
    }
    rows = [
        mem(text, role="assistant", session=f"s-{name}", at=now - timedelta(minutes=n))
        for n, (name, text) in enumerate(texts.items())
    ]
    with state.pool.connection() as conn:
        return dict(zip(texts, add(conn, rows), strict=True))


def _text(result: Any) -> str:
    assert not result.is_error, result.content
    text: str = result.content[0].text
    return text


def test_the_default_answer_is_one_short_line_per_hit_around_the_match(
    state: ServerState, server_settings: Settings
) -> None:
    ids = _seed(state)
    server = create_server(server_settings, state)
    result = call(server, "search_memory", {"query": "billing partitions invoice_date"})
    text = _text(result)
    lines = text.splitlines()
    assert lines[0].startswith("1 hits") or lines[0].startswith(f"{len(lines) - 2} hits")
    hit = next(line for line in lines if line.startswith(f"#{ids['long']} "))
    assert len(hit) <= 200, hit
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    assert f"#{ids['long']} {day} claude-code - turn/assistant: " in hit
    assert "partitions" in hit and "invoice_date" in hit  # around the match, not the start
    assert "unrelated things first. We talked" not in hit[: hit.index(":") + 40]
    assert "read_memory memory_id=" in lines[-1]
    data = result.structured_content
    assert data["count"] == len(data["hits"]) and data["hits"][0] == lines[1]
    assert "results" not in data and len(text) < 600


def test_detail_full_keeps_the_whole_hits(state: ServerState, server_settings: Settings) -> None:
    ids = _seed(state)
    server = create_server(server_settings, state)
    result = call(server, "search_memory", {"query": "billing partitions", "detail": "full"})
    data = result.structured_content
    hit = next(h for h in data["results"] if h["id"] == ids["long"])
    assert hit["message"].startswith("We talked") and NEEDLE in hit["message"]
    assert hit["kind"] == "turn" and "why" in hit and "hits" not in data
    assert len(result.content[0].text) > 3 * len(
        call(server, "search_memory", {"query": "billing partitions"}).content[0].text
    )


def test_queries_fuse_phrasings_and_are_bounded(
    state: ServerState, server_settings: Settings
) -> None:
    ids = _seed(state)
    server = create_server(server_settings, state)
    alone = _text(call(server, "search_memory", {"query": "pgbouncer setup"}))
    fused = _text(
        call(
            server,
            "search_memory",
            {"query": "pgbouncer setup", "queries": ["staging database port"]},
        )
    )
    assert f"#{ids['other']} " not in alone
    assert f"#{ids['synonym']} " in fused and f"#{ids['other']} " in fused
    too_many = {"query": "a", "queries": ["b", "c", "d", "e", "f"]}
    assert "queries" in error(call(server, "search_memory", too_many))
