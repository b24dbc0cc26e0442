"""``search_memory``'s latency end to end through MCP on the coding set's pool (issue 36), with
where the time goes measured in the same run, question by question.

The server is the product's (:func:`agents_memory.server.app.create_server` over
:func:`agents_memory.recall.state.open_state`, the local embedder held as the server holds it),
called through the MCP SDK's real client (in-process transport, one session, as a coding agent
keeps it). For each question, interleaved: the tool call (``search_memory`` with the question,
limit 10: the query embedded, searched, the result built and serialised, and checked by the
client against the tool's output schema, as the SDK's client does), that check alone again, the
query embedded alone by the same embedder, and the store's search alone with that vector, with
this tuning and with the fixed weights of before issue 36 (the baseline). Then the search
without MCP (the query embedded on a thread while the statements that need no vector are
sent), in rotating order: as session 15 ran it (the full-text arm in that first round trip, a
core left to it by the embedder: one thread), the arm ahead with the embedder's two threads
whenever the machine looks free (session 16's way), and the arm after the vector in the one
hybrid statement (``SearchTuning.fulltext_ahead`` off), two threads whenever free: what the
tool's own choice (:meth:`~agents_memory.embeddings.local.LocalEmbedder.plan_query`, the arm
ahead only when the query leaves it a core) mostly comes to on this pool on two cores.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from typing import Any

import anyio
from mcp import Client
from mcp.types import Implementation

from agents_memory.config import Settings
from agents_memory.recall.search import PendingVector, embed_query, prepare_search
from agents_memory.recall.search_request import SearchRequest
from agents_memory.recall.state import ServerState, open_state
from agents_memory.server.app import create_server
from agents_memory.store.search import SearchTuning, search_memories
from bench import common

COLUMNS = (
    "MCP search_memory",
    "the client's output-schema check (in the call)",
    "query embedded alone",
    "search alone",
    "search alone, fixed weights",
    "search, query embedded meanwhile on one thread (session 15)",
    "same, two embedding threads when free",
    "same, full-text arm after the vector, two threads when free",
)
HEADERS = ["what is timed", "queries", "p50 ms", "p95 ms", "p99 ms"]


def mcp_latency(settings: Settings, texts: list[str], tuning: SearchTuning) -> list[list[Any]]:
    """Rows of :data:`HEADERS`, one per :data:`COLUMNS`."""
    state = open_state(settings)
    try:
        seconds = anyio.run(_timed, state, settings, texts, tuning)
    finally:
        state.close()
    rows = []
    for name in COLUMNS:
        p = common.summary_ms(seconds[name])
        rows.append([name, len(seconds[name]), f"{p['p50']:.1f}", f"{p['p95']:.1f}",
                     f"{p['p99']:.1f}"])  # fmt: skip
    return rows


async def _timed(
    state: ServerState, settings: Settings, texts: list[str], tuning: SearchTuning
) -> dict[str, list[float]]:
    seconds: dict[str, list[float]] = {name: [] for name in COLUMNS}
    fixed = replace(tuning, arm_weighting=False, kept_slots=(0, 0))
    server = create_server(settings, state)
    embedder = state.embedder()
    assert embedder is not None, "the local embedder is needed"
    async with Client(server, client_info=Implementation(name="bench", version="1")) as client:
        await client.call_tool("search_memory", {"query": "warm up"})
        for text in texts:
            started = time.perf_counter()
            result = await client.call_tool("search_memory", {"query": text, "limit": 10})
            seconds[COLUMNS[0]].append(time.perf_counter() - started)
            assert not result.is_error, result.content
            started = time.perf_counter()
            await client.session.validate_tool_result("search_memory", result)
            seconds[COLUMNS[1]].append(time.perf_counter() - started)
            started = time.perf_counter()
            vector = embedder.embed_queries([text])[0]
            seconds[COLUMNS[2]].append(time.perf_counter() - started)
            for name, variant in ((COLUMNS[3], tuning), (COLUMNS[4], fixed)):
                seconds[name].append(_search_alone(state, text, vector, variant))
            ways = [
                (COLUMNS[5], tuning, 1),
                (COLUMNS[6], tuning, 0),
                (COLUMNS[7], replace(tuning, fulltext_ahead=False), 0),
            ]
            turn = len(seconds[COLUMNS[5]]) % len(ways)
            for name, variant, spare in ways[turn:] + ways[:turn]:
                seconds[name].append(_search_embedded(state, text, variant, spare))
    return seconds


def _search_embedded(state: ServerState, text: str, tuning: SearchTuning, spare: int) -> float:
    """The store's search of ``text`` as the tool runs it: the query embedded on a thread
    (:class:`~agents_memory.recall.search.PendingVector`, ``spare`` cores left to the search's
    statements) while the statements that need no vector are sent (seconds)."""
    request = prepare_search(
        SearchRequest.build(query=text, limit=10), device_name=None, now=datetime.now(UTC)
    )
    embedder = state.embedder()
    with state.pool.connection() as conn:
        started = time.perf_counter()
        if embedder is not None:
            embedder.expect_query(spare)
        pending = PendingVector(partial(embed_query, embedder, request.text))
        search_memories(
            conn, state.user_id, query=request.text, query_vector=pending.vector,
            filters=request.filters, tuning=tuning,
        )  # fmt: skip
        return time.perf_counter() - started


def _search_alone(state: ServerState, text: str, vector: Any, tuning: SearchTuning) -> float:
    """The store's search of ``text`` with its vector already made (seconds)."""
    request = prepare_search(
        SearchRequest.build(query=text, limit=10), device_name=None, now=datetime.now(UTC)
    )
    with state.pool.connection() as conn:
        started = time.perf_counter()
        search_memories(
            conn, state.user_id, query=request.text, query_vector=vector,
            filters=request.filters, tuning=tuning,
        )  # fmt: skip
        return time.perf_counter() - started
