"""``bench.prompt_recall --scale N``: the pool grown to ``N`` rows and ``recall_for_prompt``
timed with each prompt embedded by the product's local model (threads per call by load), beside
the plain search (``search_memory``'s work: the query embedded, one search, limit 10), prompt by
prompt, in the same run on the same pool."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

import psycopg

from agents_memory.embeddings import LOCAL_DIM, LOCAL_MODEL
from agents_memory.embeddings.local import LocalEmbedder
from agents_memory.recall.prompt_recall import recall_for_prompt
from agents_memory.recall.search import QueryVector
from agents_memory.store.database import EmbeddingSpec
from agents_memory.store.search import SearchFilters, SearchTuning, search_memories
from agents_memory.store.search.lexemes import (
    analyze_memory,
    merge_pending_words,
    refresh_search_lexemes,
)
from agents_memory.store.search.scope import find_user_id
from bench import common
from bench.codeset.prompts import Prompt

_SKIP = {"id", "fts", "external_uuid", "session_id", "message_at", "created_at", "updated_at"}


def grow(url: str, rows: int) -> int:
    """Copies of the pool's turns (in new sessions, each copy a year earlier than the one
    before, same text and vectors) until the table holds ``rows``; returns the count."""
    with psycopg.connect(url) as conn:
        cols = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'memory'"
                " AND is_generated = 'NEVER' ORDER BY ordinal_position"
            ).fetchall()
            if r[0] not in _SKIP
        ]
        base, top = conn.execute("SELECT count(*), max(id) FROM memory").fetchone()  # type: ignore[misc]
        have, copy = base, 1
        names = ", ".join(cols)
        while have < rows:
            take = min(base, rows - have)
            conn.execute(
                f"INSERT INTO memory ({names}, session_id, message_at) SELECT {names},"
                " md5(session_id || %s), message_at - make_interval(days => 365 * %s)"
                " FROM (SELECT * FROM memory WHERE id <= %s ORDER BY id LIMIT %s) m",
                (str(copy), copy, top, take),
            )
            have += take
            copy += 1
        conn.commit()
        analyze_memory(conn)
        refresh_search_lexemes(conn, force=True)
        merge_pending_words(conn)  # as the Cold Path does each tick
        conn.commit()
        return int(conn.execute("SELECT count(*) FROM memory").fetchone()[0])  # type: ignore[index]


def scale_latency(
    db: common.BenchDB, ps: Sequence[Prompt], roots: dict[str, str], rows: int, tuning: SearchTuning
) -> str:
    """Grow the pool, time both, interleaved; the section's text."""
    total = grow(db.url("coding"), rows)
    settings = db.settings("coding")
    model = LocalEmbedder(EmbeddingSpec(LOCAL_MODEL, LOCAL_DIM), adaptive=True)
    model.embed_query("warm up")
    recall_s: list[float] = []
    search_s: list[float] = []
    silent = 0
    with psycopg.connect(db.url("coding")) as conn:
        uid = find_user_id(conn, settings.user_name)
        assert uid is not None
        for p in list(ps)[:2]:  # warm the plans and caches
            _plain(conn, uid, model, p.text, tuning)
        for p in ps:
            event = {"prompt": p.text, "cwd": roots[p.project], "session_id": str(uuid.uuid4())}
            started = time.perf_counter()
            got = recall_for_prompt(
                conn, settings, uid, "claude-code", event,
                vector=lambda t: QueryVector(model.embed_query(t)), record=True, tuning=tuning,
            )  # fmt: skip
            conn.commit()
            recall_s.append(time.perf_counter() - started)
            silent += not got.text
            started = time.perf_counter()
            _plain(conn, uid, model, p.text, tuning)
            search_s.append(time.perf_counter() - started)
    model.close()
    r, s = common.summary_ms(recall_s), common.summary_ms(search_s)
    return (
        f"\nAt {total:,} rows (the pool's turns copied into earlier sessions), every prompt"
        f" ({len(ps)}) embedded by the local model on one thread, interleaved, load average"
        f" {common.load_avg()}; `recall_for_prompt` records each outcome (one insert, a"
        f" commit); {silent} of {len(ps)} silent:\n\n"
        + common.table(
            ["work", "p50 ms", "p95 ms", "max ms"],
            [
                [
                    "recall_for_prompt (embed, project then everywhere, record)",
                    f"{r['p50']:.1f}",
                    f"{r['p95']:.1f}",
                    f"{r['max']:.1f}",
                ],
                [
                    "plain search (embed, one search, limit 10)",
                    f"{s['p50']:.1f}",
                    f"{s['p95']:.1f}",
                    f"{s['max']:.1f}",
                ],
            ],
        )
        + "\n"
    )


def _plain(
    conn: psycopg.Connection[Any], uid: int, model: LocalEmbedder, text: str, tuning: SearchTuning
) -> None:
    search_memories(
        conn, uid, query=text, query_vector=model.embed_query(text),
        filters=SearchFilters(limit=10), tuning=tuning,
    )  # fmt: skip
    conn.commit()
