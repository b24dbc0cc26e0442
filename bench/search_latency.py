"""Search latency at 10k / 100k / 1M rows (SPEC §12: p95 ≤ 50 ms at 1M without query
embedding), against seed A's strategy on the same database.

    python -m bench.search_latency --data PATH/locomo10.json [--sizes 10000,100000,1000000]
                                   [--queries 1000] [--embed-queries 300] [--keep DIR]
                                   [--clients 4] [--client-queries 250] [--cold-queries 100]

``--keep DIR`` keeps the cluster and its loaded databases in DIR and reuses them on the next
run (loading 1M rows takes ~25 min, most of it the HNSW build); the loading figures are then
those of the run that built them.

Corpus: LoCoMo replay with perturbation (``bench/replay.py``, benchmarks.md §4.6), one user,
one searchable scope; vectors by replay (the ~6k turns embedded once by the product's embedder,
perturbed copies ``normalise(v + ε)``, sigma = 0.0247). Loaded by binary COPY with the secondary
indexes dropped, then the indexes are built (HNSW as the product defines it) with a high
``maintenance_work_mem``. Queries: the LoCoMo questions shuffled (seed 0) and cycled; warm:
one untimed pass over all of them first, then timed at k = 10, client-side wall clock around
the call. After the timing, the ids each question found give its Hit@10 and evidence recall at
this scale, against the same questions in each conversation's own scope (the needle check);
then concurrent clients and the first searches after a restart (``bench/search_scale.py``).

Seed A's strategy (the baseline): ``ORDER BY embedding <=> q LIMIT 10``, then
``message ILIKE '%query%'`` when the best similarity is below 0.3.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

import numpy as np
import psycopg
from pgvector import HalfVector
from pgvector.psycopg import register_vector

from agents_memory.config import load_settings
from agents_memory.embeddings import create_embedder
from agents_memory.store import migrate
from agents_memory.store.search import SearchFilters, SearchTuning
from agents_memory.store.search.lexemes import (
    analyze_memory,
    merge_pending_words,
    refresh_search_lexemes,
)
from bench import common, embed_cache, locomo_data, replay, search_plans, search_scale

_SECONDARY = (
    "memory_embedding_hnsw",
    "memory_fts",
    "memory_user_active_time",
    "memory_d_tag",
    "memory_session",
    "memory_untagged",
    "memory_unembedded",
    "memory_pinned",
    "memory_p_tag",
)


def _index_defs(conn: psycopg.Connection[Any]) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memory'"
        " AND indexname = ANY(%s)",
        (list(_SECONDARY),),
    ).fetchall()
    return [(str(n), str(d)) for n, d in rows]


def load(
    db: common.BenchDB,
    dbname: str,
    convs: Any,
    vecs: Any,
    size: int,
    *,
    per_conversation: bool = False,
) -> dict[str, Any]:
    """A database with ``size`` replayed rows, one user (or, with ``per_conversation``, a user
    per conversation scope, listed under ``users``); returns timings and sizes."""
    db.create_database(dbname)
    started = time.perf_counter()
    data = list(replay.rows(convs, size))
    idx = np.fromiter((r.vector_index for r in data), dtype=np.int64, count=len(data))
    reps = np.fromiter(
        (
            0 if "|" not in r.source_id else int(r.source_id[1 : r.source_id.index("|")])
            for r in data
        ),
        dtype=np.int64,
        count=len(data),
    )
    vectors = replay.replay_vectors(vecs, idx, reps).astype(np.float16)
    synth_s = time.perf_counter() - started
    texts = [r.text for r in data]
    dup = 1 - len(set(texts)) / len(texts)
    with psycopg.connect(db.url(dbname), autocommit=True) as conn:
        register_vector(conn)
        users: dict[str, int] = {}
        for scope in sorted({r.scope for r in data}) if per_conversation else ["bench"]:
            uid = conn.execute(
                "INSERT INTO users (user_name) VALUES (%s) RETURNING user_id", (scope,)
            ).fetchone()
            users[scope] = int(uid[0])  # type: ignore[index]
        user_id = users.get("bench", 0)
        defs = _index_defs(conn)
        for name, _d in defs:
            conn.execute(f"DROP INDEX {name}")
        started = time.perf_counter()
        with conn.cursor().copy(
            "COPY memory (user_id, agent_platform, role, message, external_uuid, session_id,"
            " message_at, embedding, embedding_model, tag_processed) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(
                [
                    "int8",
                    "text",
                    "text",
                    "text",
                    "text",
                    "text",
                    "timestamptz",
                    "halfvec",
                    "text",
                    "bool",
                ]
            )
            for r, v in zip(data, vectors, strict=True):
                copy.write_row(
                    (
                        users[r.scope] if per_conversation else user_id,
                        "claude-code",
                        r.role,
                        r.text,
                        f"{r.scope}|{r.source_id}",
                        r.scope,
                        r.ts,
                        HalfVector(v),
                        common.MODEL,
                        True,
                    )
                )
        copy_s = time.perf_counter() - started
        conn.execute("SET maintenance_work_mem = '4GB'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        timings: dict[str, float] = {}
        for name, definition in defs:
            started = time.perf_counter()
            conn.execute(definition)
            timings[name] = time.perf_counter() - started
        started = time.perf_counter()
        conn.execute("VACUUM ANALYZE memory")
        vacuum_s = time.perf_counter() - started
        disk = conn.execute("SELECT pg_total_relation_size('memory')").fetchone()
    return {
        "user_id": user_id,
        "users": users,
        "synth_s": synth_s,
        "copy_s": copy_s,
        "hnsw_s": timings.get("memory_embedding_hnsw", 0.0),
        "other_index_s": sum(v for k, v in timings.items() if k != "memory_embedding_hnsw"),
        "vacuum_s": vacuum_s,
        "disk_mb": int(disk[0]) / 1e6 if disk else 0.0,
        "dup": dup,
    }


def _kept(db: common.BenchDB, name: str, keep: common.Path | None) -> dict[str, Any] | None:
    """The loading figures of database ``name`` kept by an earlier run, or ``None``."""
    meta = keep / f"{name}.json" if keep is not None else None
    if meta is None or not meta.exists():
        return None
    with psycopg.connect(db.url("postgres"), autocommit=True) as admin:
        found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    if found is None:
        return None
    info: dict[str, Any] = json.loads(meta.read_text(encoding="utf-8"))
    print(f"reusing {name} kept in {keep}", flush=True)
    return info


def _copy_statistics(db: common.BenchDB, name: str) -> None:
    """What the Cold Path does after ANALYZE: copy the common words for the search and merge
    the full-text index's pending list (see ``store/search/lexemes.py``). A database kept by an
    earlier version is migrated first and analysed again when that changed its schema."""
    with psycopg.connect(db.url(name), autocommit=True) as conn:
        if migrate.migrate(conn):
            started = time.perf_counter()
            analyze_memory(conn)
            print(f"  {name}: migrated, ANALYZE {time.perf_counter() - started:.1f} s", flush=True)
        with conn.transaction():
            copied = refresh_search_lexemes(conn, force=True)
            merge_pending_words(conn)  # as the Cold Path does each tick
    print(f"  {name}: {copied:,} common words copied for the search", flush=True)


def measure(
    conn: psycopg.Connection[Any],
    user_id: int,
    questions: list[tuple[locomo_data.Question, Any]],
    n: int,
    *,
    system: str,
    embedder: Any,
    warmup: int,
) -> tuple[list[float], str, list[tuple[locomo_data.Question, list[int]]]]:
    """Timed calls after ``warmup`` untimed ones; returns latencies, the slowest query and each
    timed question with the ids it found."""
    times: list[float] = []
    found: list[tuple[locomo_data.Question, list[int]]] = []
    slowest = ("", 0.0)
    for i in range(warmup + n):
        q, cached = questions[i % len(questions)]
        started = time.perf_counter()
        vec = embedder.embed_query(q.question) if embedder is not None else cached
        ids = search_scale.search_ids(conn, system, user_id, q.question, vec)
        elapsed = time.perf_counter() - started
        if i >= warmup:
            times.append(elapsed)
            found.append((q, ids))
            if elapsed > slowest[1]:
                slowest = (q.question, elapsed)
    return times, slowest[0], found


def _reference(
    db: common.BenchDB, convs: Any, turn_vecs: Any, timed: list[tuple[locomo_data.Question, Any]]
) -> dict[str, search_scale.Quality]:
    """The needle check's reference: the same questions over replica 0 alone, each in its own
    conversation's scope."""
    own = load(
        db, "own_scope", convs, turn_vecs, sum(len(c.turns) for c in convs), per_conversation=True
    )
    with psycopg.connect(db.url("own_scope")) as conn:
        register_vector(conn)
        return search_scale.per_conversation(conn, own["users"], timed)


def main() -> None:
    parser = argparse.ArgumentParser(description="search latency vs seed A")
    parser.add_argument("--data", type=common.Path, required=True)
    parser.add_argument("--cache", type=common.Path, default=common.DEFAULT_CACHE)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--embed-queries", type=int, default=300)
    parser.add_argument(
        "--random-vectors",
        action="store_true",
        help="random unit vectors instead of the cached LoCoMo embeddings (a stand-in when they"
        " are not computed yet; HNSW on random data is a pessimistic case)",
    )
    parser.add_argument("--query-threads", type=int, help="fixed (default: per call by load)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients (0 = none)")
    parser.add_argument(
        "--client-queries", type=int, default=250, help="searches per concurrent client"
    )
    parser.add_argument(
        "--cold-queries", type=int, default=100, help="searches after a restart (0 = none)"
    )
    parser.add_argument(
        "--keep",
        type=common.Path,
        help="keep the cluster and the loaded databases in this directory and reuse them",
    )
    args = parser.parse_args()
    start_header = common.header(common.command_line())
    if args.random_vectors:
        convs = locomo_data.load(args.data)
        rng = np.random.default_rng(0)
        turn_vecs = rng.normal(size=(sum(len(c.turns) for c in convs), common.DIM))
        q_vecs = rng.normal(size=(sum(len(c.questions) for c in convs), common.DIM))
        turn_vecs /= np.linalg.norm(turn_vecs, axis=1, keepdims=True)
        q_vecs /= np.linalg.norm(q_vecs, axis=1, keepdims=True)
    else:
        convs, turn_vecs, q_vecs = embed_cache.locomo_vectors(args.data, args.cache)
    questions = [(q, q_vecs[i]) for i, q in enumerate(x for c in convs for x in c.questions)]
    random.Random(0).shuffle(questions)
    settings = load_settings(env_file=args.cache / "absent.env", embedding_backend="local")
    embedder = create_embedder(settings, threads=args.query_threads, queries=not args.query_threads)
    assert embedder is not None
    embedder.embed_query("warm up the model")
    lat_rows, load_rows, explains, quality, extra = [], [], [], [], []
    timed = [x for x in questions[: args.queries] if x[0].category in (1, 2, 3, 4)]
    with common.bench_db(keep=args.keep) as db:
        versions = common.pg_versions(db.create_database("probe"))
        reference = _reference(db, convs, turn_vecs, timed)
        quality += [search_scale.quality_row("own scope", k, v, None) for k, v in reference.items()]
        print(f"  quality {quality}", flush=True)
        for size in [int(s) for s in args.sizes.split(",") if s]:
            name = f"s{size}"
            info = _kept(db, name, args.keep)
            if info is None:
                info = load(db, name, convs, turn_vecs, size)
                info["load"] = common.load_avg()
                if args.keep is not None:
                    (args.keep / f"{name}.json").write_text(json.dumps(info), encoding="utf-8")
            _copy_statistics(db, name)
            load_rows.append(
                (
                    size,
                    info["synth_s"],
                    info["copy_s"],
                    size / info["copy_s"],
                    info["hnsw_s"],
                    info["other_index_s"],
                    info["vacuum_s"],
                    f"{info['disk_mb']:,.0f} MB",
                    f"{100 * info['dup']:.2f} %",
                    info["load"] + (" (kept from an earlier run)" if args.keep else ""),
                )
            )
            print(f"loaded {size:,}: {load_rows[-1]}", flush=True)
            with psycopg.connect(db.url(name)) as conn:
                register_vector(conn)
                for system in ("product", "seed A"):
                    for embed, n in ((False, args.queries), (True, args.embed_queries)):
                        load_avg = common.load_avg()
                        times, slow, found = measure(
                            conn,
                            info["user_id"],
                            questions,
                            n,
                            system=system,
                            embedder=embedder if embed else None,
                            # Warm (benchmarks.md §4.6): one full pass first; the runs with
                            # query embedding follow on a warm database.
                            warmup=20 if embed else len(questions),
                        )
                        s = common.summary_ms(times)
                        lat_rows.append(
                            (
                                size,
                                system,
                                "yes" if embed else "no",
                                s["n"],
                                s["p50"],
                                s["p95"],
                                s["p99"],
                                s["mean"],
                                s["max"],
                                load_avg,
                            )
                        )
                        print(f"  {lat_rows[-1]}", flush=True)
                        if not embed:
                            q = search_scale.quality(conn, found)
                            quality.append(
                                search_scale.quality_row(size, system, q, reference[system])
                            )
                            print(f"  quality {quality[-1]}", flush=True)
                        if system == "product" and not embed:
                            vec = next(v for q, v in questions if q.question == slow)
                            plan = search_plans.explain_search(
                                conn,
                                info["user_id"],
                                query=slow,
                                query_vector=vec,
                                filters=SearchFilters(limit=10),
                                tuning=SearchTuning(),
                            )
                            conn.commit()
                            explains.append((size, slow, plan))
            extra += search_scale.informational(db, name, info["user_id"], size, questions, args)
            if args.keep is None:
                with psycopg.connect(db.url("postgres"), autocommit=True) as admin:
                    admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    embedder.close()
    ratios = []
    by = {(r[0], r[1], r[2]): r for r in lat_rows}
    for (size, system, embed), r in by.items():
        if system == "product":
            base = by[(size, "seed A", embed)]
            ratios.append((size, embed, r[5], base[5], r[5] / base[5]))
    body = "\n".join(
        [
            start_header,
            versions
            + (
                "; **vectors: random unit vectors** (the LoCoMo embeddings were not ready)"
                if args.random_vectors
                else ""
            )
            + "; HNSW as the product defines it (m 16, ef_construction 64, halfvec"
            " cosine, partial on embedding IS NOT NULL), product tuning: iterative scan"
            " relaxed_order, ef_search 100, pool 40. Vectors by replay (sigma 0.0247), query"
            " embedding by the product's local embedder (multilingual-e5-small q4, in process,"
            f" {args.query_threads} thread(s)). Bar: p95 ≤ 50 ms at 1M without query embedding.",
            "",
            "Latency (ms), 1 client, warm:",
            "",
            common.table(
                (
                    "rows",
                    "system",
                    "query embedding",
                    "n",
                    "p50",
                    "p95",
                    "p99",
                    "mean",
                    "max",
                    "load 1/5",
                ),
                lat_rows,
            ),
            "",
            "p95 ratio product / seed A:",
            "",
            common.table(("rows", "query embedding", "product p95", "seed A p95", "ratio"), ratios),
            "",
            "Retrieval at this scale (the needle check; categories 1-4, each timed question"
            " once, no query embedding): Hit@10 and evidence recall@10 against the original"
            " turns (replica 0, the only rows with the names the questions use) and recall"
            " against any replica of an evidence turn; every conversation shares one scope."
            " The reference (own scope) asks the same questions of replica 0 alone with each"
            " conversation its own user, as bench.locomo does; the drop is its Hit@10 minus"
            " this size's.",
            "",
            common.table(search_scale.QUALITY_HEADERS, quality),
            "",
            f"Informational (§4.6), no query embedding: {args.clients} concurrent clients"
            f" ({args.client_queries} searches each, own connections, after the warm runs; QPS"
            " = searches / wall time), and the first"
            f" {args.cold_queries} searches after a server restart: at once (PostgreSQL's cache"
            " empty, the embedded server reading back what it held in the background), and"
            " once it has read it back (autoprewarm; the time it took from the restart); the"
            " operating system's page cache is not dropped. Latency in ms:",
            "",
            common.table(search_scale.LOAD_HEADERS, extra),
            "",
            "Loading (s):",
            "",
            common.table(
                (
                    "rows",
                    "synthesis",
                    "binary COPY",
                    "COPY rows/s",
                    "HNSW build",
                    "other indexes",
                    "VACUUM ANALYZE",
                    "disk (table+indexes)",
                    "dup texts",
                    "load 1/5",
                ),
                load_rows,
            ),
            "",
            *[
                f"Plan of the slowest product query at {size:,} rows (no embedding),"
                f" {q!r}:\n\n```\n{p}\n```\n"
                for size, q, p in explains[-1:]
            ],
        ]
    )
    print(body)
    common.write_section("Search latency", body)


if __name__ == "__main__":
    main()
