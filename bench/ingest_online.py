"""Online ingest latency: one turn stored and embedded synchronously into a store that already
holds 100k rows (benchmarks.md §4.6, "Ingest throughput", item 2; no SPEC bar, informational).

    python -m bench.ingest_online --data PATH/locomo10.json [--rows 100000] [--calls 1000]
                                  [--warmup 10] [--cache DIR]

Store: ``--rows`` rows of the LoCoMo replay with perturbation, loaded exactly as
``bench.search_latency`` loads its databases (binary COPY, then the indexes, HNSW as the
product defines it, then VACUUM ANALYZE). The turns ingested are the replay rows that follow
the loaded ones, so each continues a session already in the store.

One call is what ``manage_knowledge add`` does (``server/knowledge_tools.py``: ``_add`` and
``_embed_now``), through the same product functions: ``insert_memories`` (one row,
``has_vector=True``) → ``passage_of`` (the turn with the end of the one before it in its
session) → ``embed_passages`` (multilingual-e5-small q4, in process) → ``set_embedding`` (the
UPDATE that inserts the vector into the HNSW index) → commit, on one connection, client-side
wall clock around the whole call.

Baselines, interleaved with it call by call (one step = the three, in this order, so the
machine's load falls on all three alike; ``--warmup`` untimed steps first):

* embedding only: ``embed_passages([passage])`` of the passage the call just embedded;
* database only: the next replay row (another turn, so no vector is a duplicate of one the
  HNSW index holds) through the same ``insert_memories`` → ``passage_of`` → ``set_embedding``
  → commit, with its vector embedded beforehand (untimed, batched).

The store grows by two rows per step; the row counts before and after are reported.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np
import psycopg

from agents_memory.config import load_settings
from agents_memory.embeddings import create_embedder, to_halfvec
from agents_memory.store.database import register_types
from agents_memory.store.knowledge import set_embedding
from agents_memory.store.memories import NewMemory, insert_memories
from agents_memory.store.passages import passage_of, passage_text
from bench import common, embed_cache, replay, search_latency

_DB = "online"


def _memory(row: replay.Row, tag: str) -> NewMemory:
    role: Literal["user", "assistant"] = "user" if row.role == "user" else "assistant"
    return NewMemory(
        agent_platform="claude-code",
        role=role,
        message=row.text,
        external_uuid=f"{row.scope}|{row.source_id}|{tag}",
        message_at=row.ts,
        session_id=row.scope,
        device_name="bench-device",
        source="capture",
    )


def ingest(
    conn: psycopg.Connection[Any], user_id: int, row: replay.Row, embedder: Any
) -> tuple[float, str]:
    """One synchronous ingest with embedding; returns its wall time and the passage embedded."""
    started = time.perf_counter()
    memory_id = insert_memories(conn, user_id, [_memory(row, "online")], has_vector=True).ids[0]
    passage = passage_of(conn, memory_id) or row.text
    vector = embedder.embed_passages([passage])[0]
    set_embedding(conn, memory_id, to_halfvec(vector), embedder.spec.model)
    conn.commit()
    return time.perf_counter() - started, passage


def ingest_db_only(
    conn: psycopg.Connection[Any], user_id: int, row: replay.Row, vector: Any, model: str
) -> float:
    """The same call with the vector computed beforehand: the database's share."""
    started = time.perf_counter()
    memory_id = insert_memories(conn, user_id, [_memory(row, "db")], has_vector=True).ids[0]
    passage_of(conn, memory_id)
    set_embedding(conn, memory_id, to_halfvec(vector), model)
    conn.commit()
    return time.perf_counter() - started


def embed_only(embedder: Any, passage: str) -> float:
    started = time.perf_counter()
    embedder.embed_passages([passage])
    return time.perf_counter() - started


def _count(conn: psycopg.Connection[Any], user_id: int) -> int:
    found = conn.execute("SELECT count(*) FROM memory WHERE user_id = %s", (user_id,)).fetchone()
    conn.commit()
    return int(found[0]) if found else 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description="online ingest latency: one turn stored and embedded into a loaded store"
    )
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo locomo10.json")
    parser.add_argument("--cache", type=Path, default=common.DEFAULT_CACHE)
    parser.add_argument("--rows", type=int, default=100_000, help="rows in the store first")
    parser.add_argument("--calls", type=int, default=1000, help="timed calls of each kind")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    args = parser.parse_args()
    start_header = common.header(common.command_line())
    convs, turn_vecs, _q_vecs = embed_cache.locomo_vectors(args.data, args.cache)
    steps = args.warmup + args.calls
    # The rows after the loaded ones, paired: the even one for the call with embedding (and
    # the embedding-only baseline), the odd one for the database-only baseline.
    fresh = list(replay.rows(convs, args.rows + 2 * steps))[args.rows :]
    online, db_rows = fresh[0::2], fresh[1::2]
    embedder = create_embedder(
        load_settings(env_file=args.cache / "absent.env", embedding_backend="local")
    )
    assert embedder is not None
    try:
        embedder.embed_passages(["warm up the model"])
        print(f"embedding the {len(db_rows):,} database-only turns beforehand", flush=True)
        passages = [
            passage_text(r.text, prev.text if prev.scope == r.scope else None)
            for prev, r in zip(online, db_rows, strict=True)
        ]
        db_vecs = embedder.embed_passages(passages)
        model = embedder.spec.model
        with common.bench_db() as db:
            print(f"loading {args.rows:,} replay rows (HNSW build included)", flush=True)
            info = search_latency.load(db, _DB, convs, turn_vecs, args.rows)
            print(
                f"loaded: COPY {info['copy_s']:.1f} s, HNSW {info['hnsw_s']:.1f} s,"
                f" other indexes {info['other_index_s']:.1f} s, {info['disk_mb']:,.0f} MB",
                flush=True,
            )
            url = db.url(_DB)
            versions = common.pg_versions(url)
            user_id = int(info["user_id"])
            with psycopg.connect(url) as conn:
                register_types(conn)
                hnsw = conn.execute(
                    "SELECT indexdef FROM pg_indexes WHERE indexname = 'memory_embedding_hnsw'"
                ).fetchone()
                before = _count(conn, user_id)
                load_before = common.load_avg()
                with_embed: list[float] = []
                embed_times: list[float] = []
                db_times: list[float] = []
                for i in range(steps):
                    t_full, passage = ingest(conn, user_id, online[i], embedder)
                    t_embed = embed_only(embedder, passage)
                    t_db = ingest_db_only(conn, user_id, db_rows[i], db_vecs[i], model)
                    if i >= args.warmup:
                        with_embed.append(t_full)
                        embed_times.append(t_embed)
                        db_times.append(t_db)
                    if (i + 1) % 100 == 0 or i + 1 == steps:
                        print(
                            f"  step {i + 1:,}/{steps:,}: with embedding p50"
                            f" {1000 * float(np.median(with_embed or [t_full])):.1f} ms",
                            flush=True,
                        )
                load_after = common.load_avg()
                after = _count(conn, user_id)
    finally:
        embedder.close()
    rows = []
    for name, times in (
        ("ingest with embedding", with_embed),
        ("database only (vector precomputed)", db_times),
        ("embedding only", embed_times),
    ):
        s = common.summary_ms(times)
        rows.append((name, s["n"], s["p50"], s["p95"], s["p99"], s["mean"], s["max"]))
    body = "\n".join(
        [
            start_header,
            f"{versions}; embedder multilingual-e5-small q4, in process"
            f" ({getattr(embedder, 'threads', '?')} threads); HNSW as the product defines it:"
            f" `{hnsw[0] if hnsw else '?'}` (pgvector's defaults, m = 16, ef_construction = 64)."
            " No SPEC bar: informational (benchmarks.md §4.6).",
            "",
            f"Store: {before:,} rows before the timing, {after:,} after (LoCoMo replay with"
            f" perturbation, loaded as `bench.search_latency` does); {args.calls:,} timed steps"
            f" after {args.warmup} untimed, the three measures interleaved step by step, one"
            f" connection, 1 client. Load average (1/5 min) {load_before} before the timing,"
            f" {load_after} after.",
            "",
            "Latency (ms):",
            "",
            common.table(("call", "n", "p50", "p95", "p99", "mean", "max"), rows),
            "",
            "*Ingest with embedding*: one new replay turn through the product's `insert_memories`"
            " → `passage_of` → `embed_passages` → `set_embedding` (the HNSW index update) →"
            " commit, as `manage_knowledge add` does; *database only*: the next replay turn"
            " through the same calls with its vector embedded beforehand, the database's share;"
            " *embedding only*: `embed_passages([passage])` of the passage the call before it"
            " embedded, the model's share.",
        ]
    )
    print(body)
    common.write_section("Ingest (online, single turn)", body)


if __name__ == "__main__":
    main()
