"""Coding-agent memory recall through the product (issue 24), with BM25 on the same pool.

    python -m bench.coding_recall [--variants default,...] [--cache DIR]

The set (``bench/codeset``: 5,200 turns of 40 projects in Claude Code and Codex transcripts,
120 questions of five kinds, a fixed tuning / held-out split) is written into a temp HOME and
imported by the real ``memory-capture backfill`` into a private embedded database. Vectors come
from the product's local embedder over the text the Cold Path embeds (each stored row after the
end of the turn before it, :mod:`agents_memory.store.passages`; cached, ``bench/embed_cache.py``).
Every question goes through the search service (:mod:`agents_memory.recall.search`: the request
as the tool builds it, the query's vector, limit 10) at the real clock. Nonsense and off-topic
queries measure the weak-match note; real questions measure how often it is wrongly given.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from agents_memory.embeddings import to_halfvec
from agents_memory.recall.search import prepare_search
from agents_memory.recall.search_request import SearchRequest
from agents_memory.store.knowledge import set_embedding
from agents_memory.store.passages import PREVIOUS_SQL, passage_text
from agents_memory.store.search import (
    SearchResult,
    SearchTuning,
    find_user_id,
    search_memories,
)
from agents_memory.store.search.lexemes import (
    analyze_memory,
    merge_pending_words,
    refresh_search_lexemes,
)
from bench import coding_arms, coding_latency, common, embed_cache
from bench.codeset import CodeSet, generate, write
from bench.codeset.bm25 import BM25
from bench.codeset.generate import KINDS
from bench.codeset.vectors import vectors

LIMIT = 10
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "fixed-weights": {"arm_weighting": False, "kept_slots": (0, 0)},
    "no-rarity": {"rarity_weighting": False},
    "no-kept-slots": {"kept_slots": (0, 0)},
    "vector-z-0-4": {"vector_z": (0.0, 4.0)},
    "neutral-0.2": {"arm_confidence_neutral": 0.2},
    "floor-0.5": {"arm_confidence_floor": 0.5},
    "dated-vector-1": {"dated_vector_confidence": 1.0},
    "recency-off": {"recency_halflife_days": 1e9},
    "no-neighbours": {"neighbour_weight": 0.0},
    "neighbours-0.25": {"neighbour_weight": 0.25},
    "project-1.0": {"project_weight": 1.0},
    "date-1.0": {"date_weight": 1.0},
    "slack-date-0.5": {"slack_date_share": 0.5},
    "rrf-10": {"rrf_k": 10.0},
    "rrf-60": {"rrf_k": 60.0},
    "no-session": {"session_weight": 0.0},
    "no-context": {"neighbour_weight": 0.0, "session_weight": 0.0},
    "lexical-w0.3": {"lexical_weight": 0.3},
    "lexical-w0.6": {"lexical_weight": 0.6},
    "vector-only": {"fts_scan_rows": 0},
    "mmr-0.7": {"mmr_lambda": 0.7},
    "mmr-0.9": {"mmr_lambda": 0.9},
    "no-importance": {"importance_weight": 0.0},
}


def ingest(
    db: common.BenchDB, cs: CodeSet, pv: dict[str, Any], cache: Path, backend: str = "local"
) -> dict[int, str]:
    """Write the transcripts, run ``memory-capture backfill``, set the vectors (of every row
    imported, as the Cold Path embeds every turn: the set's and any other transcripts already
    under the HOME, such as the action set of ``bench.prompt_recall``); returns memory id →
    turn key."""
    keys = write(db.home, cs)
    url = db.create_database("coding")
    capture = str(Path(sys.executable).with_name("memory-capture"))
    proc = common.run([capture, "backfill"], env=db.env("coding", EMBEDDING_BACKEND="none"))
    if proc.returncode != 0:
        raise SystemExit(f"backfill failed: {proc.stderr.strip()}")
    out: dict[int, str] = {}
    with psycopg.connect(url) as conn:
        register_vector(conn)
        rows = conn.execute(
            "SELECT m.id, m.session_id, m.message_at, m.message, " + PREVIOUS_SQL + " FROM memory m"
        ).fetchall()
        redo: dict[int, str] = {}
        for mid, session, at, message, previous in rows:
            key = keys.get((session, at.astimezone(UTC).isoformat()))
            if key is not None:
                out[int(mid)] = key
            passage = passage_text(message, previous)
            if passage in pv:
                set_embedding(conn, mid, to_halfvec(np.asarray(pv[passage])), common.MODEL)
            else:
                redo[int(mid)] = passage
        if redo and pv:
            fresh = embed_cache.embed(
                list(redo.values()), "passage", cache, log=False, backend=backend
            )
            for mid, vec in zip(redo, fresh, strict=True):
                set_embedding(conn, mid, to_halfvec(np.asarray(vec)), common.MODEL)
        conn.commit()
        analyze_memory(conn)
        refresh_search_lexemes(conn, force=True)
        merge_pending_words(conn)  # as the Cold Path does each tick
        conn.commit()
    fresh_n = len(redo) if pv else 0
    print(f"imported {len(rows)} rows ({len(out)} mapped, {fresh_n} embedded afresh)")
    return out


def summarise_sessions(db: common.BenchDB) -> None:
    """Every session's summary, as the Cold Path's session summariser writes it (no LLM)."""
    from agents_memory.coldpath.base import JobContext
    from agents_memory.coldpath.session_summarizer import SessionSummarizerJob
    from agents_memory.store.memories import ensure_user

    settings = db.settings("coding")
    with psycopg.connect(db.url("coding")) as conn:
        uid = ensure_user(conn, settings.user_name)
        conn.commit()
        ctx = JobContext(conn, settings, uid, datetime.now(UTC), None, None, 100, drain=True)
        started = time.perf_counter()
        report = SessionSummarizerJob().run(ctx)
        took = time.perf_counter() - started
    print(f"summarised {report.processed} sessions in {took:.1f} s", flush=True)


def run_queries(
    db: common.BenchDB, texts: list[str], qv: dict[str, Any], tuning: SearchTuning
) -> tuple[list[SearchResult], list[float]]:
    """Each text through the service's request and the store's search (limit 10)."""
    settings = db.settings("coding")
    results, times = [], []
    with psycopg.connect(db.url("coding")) as conn:
        uid = find_user_id(conn, settings.user_name)
        assert uid is not None
        for text in texts:
            started = time.perf_counter()
            request = prepare_search(
                SearchRequest(query=text, limit=LIMIT), device_name=None, now=datetime.now(UTC)
            )
            res = search_memories(
                conn, uid, query=request.text, query_vector=qv.get(text),
                filters=request.filters, tuning=tuning,
            )  # fmt: skip
            conn.commit()
            times.append(time.perf_counter() - started)
            results.append(res)
    return results, times


def dump(
    path: Path,
    cs: CodeSet,
    key_of: dict[int, str],
    real: list[SearchResult],
    non: list[SearchResult],
    off: list[SearchResult],
    tuning: SearchTuning,
) -> None:
    """Each hit's confidence inputs (coverage of the query, cosine) and whether it is gold."""
    lines = []
    groups = [
        *(
            (q.text, f"real-{q.half}", set(q.gold), r)
            for q, r in zip(cs.questions, real, strict=True)
        ),
        *((t, "nonsense", set(), r) for t, r in zip(cs.nonsense, non, strict=True)),
        *((t, "offtopic", set(), r) for t, r in zip(cs.offtopic, off, strict=True)),
    ]
    for text, group, gold, res in groups:
        for rank, h in enumerate(res.hits, 1):
            lines.append(json.dumps({
                "group": group, "query": text, "rank": rank, "gold": key_of.get(h.id) in gold,
                "cover": h.why.coverage,
                "sim": h.why.similarity, "z": h.why.similarity_z, "conf": h.confidence,
            }))  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def print_misses(cs: CodeSet, texts: dict[str, str], ranked: list[list[str]]) -> None:
    """The tuning half's questions whose gold is not in the top 5, with the top 3 found."""
    for q, ids in zip(cs.questions, ranked, strict=True):
        if q.half != "tuning" or any(k in q.gold for k in ids[:5]):
            continue
        rank = next((i + 1 for i, k in enumerate(ids) if k in q.gold), None)
        print(f"MISS {q.kind} rank {rank}: {q.text}\n  gold {q.gold[0]}: {texts[q.gold[0]]}")
        for k in ids[:3]:
            print(f"  got {k}: {texts[k][:100]}")


def flagged(res: SearchResult) -> bool:
    """Whether the result says its best hit is weak."""
    return bool(getattr(res, "weak", False))


def metrics(ranked: list[list[str]], golds: list[tuple[str, ...]]) -> dict[str, float]:
    n = max(1, len(ranked))
    h5 = h10 = rr = 0.0
    for ids, gold in zip(ranked, golds, strict=True):
        rank = next((i + 1 for i, k in enumerate(ids) if k in gold), None)
        h5 += rank is not None and rank <= 5
        h10 += rank is not None and rank <= 10
        rr += 1 / rank if rank else 0
    return {"Hit@5": h5 / n, "Hit@10": h10 / n, "MRR": rr / n, "n": float(len(ranked))}


def report_rows(
    cs: CodeSet, name: str, product: list[list[str]], bm25: list[list[str]]
) -> list[list[Any]]:
    rows = []
    for half in ("tuning", "heldout"):
        for kind in (*KINDS, "all"):
            idx = [
                i for i, q in enumerate(cs.questions)
                if q.half == half and kind in ("all", q.kind)
            ]  # fmt: skip
            golds = [cs.questions[i].gold for i in idx]
            p = metrics([product[i] for i in idx], golds)
            b = metrics([bm25[i] for i in idx], golds)
            ratio = p["Hit@10"] / b["Hit@10"] if b["Hit@10"] else float("nan")
            rows.append([
                name, half, kind, int(p["n"]), f"{p['Hit@5']:.3f}", f"{p['Hit@10']:.3f}",
                f"{p['MRR']:.3f}", f"{b['Hit@5']:.3f}", f"{b['Hit@10']:.3f}", f"{ratio:.2f}",
            ])  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=common.DEFAULT_CACHE)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--variants", default="default")
    parser.add_argument("--no-write", action="store_true", help="print only, keep RESULTS.md")
    parser.add_argument("--no-vectors", action="store_true", help="full-text path only")
    parser.add_argument(
        "--backend", default="local", help="local, openai or minilm (bench/minilm.py)"
    )
    parser.add_argument("--cap", type=int, help="the passages' token cap (local backend)")
    parser.add_argument("--dump", type=Path, help="write each hit's confidence inputs (JSONL)")
    parser.add_argument("--misses", action="store_true", help="print the tuning half's misses")
    parser.add_argument(
        "--sessions",
        action="store_true",
        help="summarise every session first (the session arm then has summaries to rank)",
    )
    parser.add_argument(
        "--embedded-latency",
        action="store_true",
        help="also time each question with its query embedded (search_memory's whole work)",
    )
    parser.add_argument(
        "--mcp-latency",
        action="store_true",
        help="also time search_memory end to end through MCP (bench/coding_latency.py)",
    )
    args = parser.parse_args()
    head = common.header(common.command_line())
    cs = generate(args.seed)
    pv, qv = (
        ({}, {}) if args.no_vectors else vectors(cs, args.cache, backend=args.backend, cap=args.cap)
    )
    texts = {t.key: t.text for s in cs.sessions for t in s.turns}
    bm25 = BM25(texts)
    b_ranked = [bm25.top(q.text) for q in cs.questions]
    table_rows: list[list[Any]] = []
    arm_rows: list[list[Any]] = []
    flags: list[list[Any]] = []
    latency: list[list[Any]] = []
    mcp_rows: list[list[Any]] = []
    mcp_load = ""
    with common.bench_db() as db:
        key_of = ingest(db, cs, pv, args.cache, args.backend)
        if args.sessions:
            summarise_sessions(db)
        for name in args.variants.split(","):
            tuning = replace(SearchTuning(), **VARIANTS[name])
            questions = [q.text for q in cs.questions]
            res, times = run_queries(db, questions, qv, tuning)
            ranked = [[key_of[h.id] for h in r.hits if h.id in key_of] for r in res]
            rows = report_rows(cs, name, ranked, b_ranked)
            table_rows += rows
            arms = coding_arms.arm_results(
                lambda t, v, tu: run_queries(db, t, v, tu), questions, qv, tuning, res
            )
            by_arm = {
                arm: [[key_of[h.id] for h in r.hits if h.id in key_of] for r in results]
                for arm, results in arms.items()
            }
            arm_rows += coding_arms.arms_rows(cs, name, by_arm)
            if args.embedded_latency:
                texts_all = [*questions, *cs.nonsense, *cs.offtopic]
                e = coding_arms.embedded_latency(
                    db.url("coding"), db.settings("coding").user_name, texts_all, tuning
                )
                latency.append([name, len(texts_all), f"{e['p50']:.1f}", f"{e['p95']:.1f}"])
            non, _t = run_queries(db, cs.nonsense, qv, tuning)
            off, _t = run_queries(db, cs.offtopic, qv, tuning)
            if args.dump:
                dump(args.dump.with_suffix(f".{name}.jsonl"), cs, key_of, res, non, off, tuning)
            if args.misses:
                print_misses(cs, texts, ranked)
            p = common.summary_ms(times)
            flags.append([
                name, f"{np.mean([flagged(r) for r in non]):.2f}",
                f"{np.mean([flagged(r) for r in off]):.2f}",
                f"{np.mean([flagged(r) for r in res]):.2f}", f"{p['p50']:.1f}", f"{p['p95']:.1f}",
            ])  # fmt: skip
            for r in rows:
                if r[2] == "all":
                    print(" ".join(str(x) for x in r), flush=True)
        if args.mcp_latency:
            texts_all = [*(q.text for q in cs.questions), *cs.nonsense, *cs.offtopic]
            load_before = common.load_avg()
            mcp_rows = coding_latency.mcp_latency(
                db.settings("coding"), texts_all, replace(SearchTuning(), **VARIANTS["default"])
            )
            mcp_load = f"{load_before} → {common.load_avg()}"
    headers = ["variant", "half", "kind", "n", "Hit@5", "Hit@10", "MRR", "BM25 Hit@5",
               "BM25 Hit@10", "Hit@10 / BM25"]  # fmt: skip
    fheaders = ["variant", "nonsense flagged", "off-topic flagged", "real wrongly flagged",
                "p50 ms", "p95 ms"]  # fmt: skip
    body = (
        f"{head}\n\n{cs.turns} turns, {len(cs.sessions)} sessions, 40 projects; "
        f"{len(cs.questions)} questions ({sum(q.half == 'heldout' for q in cs.questions)}"
        " held out). Latency: the search alone, query vector precomputed, ~5k rows.\n\n"
        + common.table(headers, table_rows)
        + "\n\n"
        + common.table(fheaders, flags)
        + "\n\nFused against each arm alone (bench/coding_arms.py), same run, same pool:\n\n"
        + common.table(coding_arms.ARMS_HEADERS, arm_rows)
        + "\n"
    )
    if latency:
        body += (
            "\nsearch_memory's work with the query embedded (one thread), load average "
            f"{common.load_avg()}:\n\n"
            + common.table(["variant", "queries", "p50 ms", "p95 ms"], latency)
            + "\n"
        )
    if mcp_rows:
        body += (
            "\nsearch_memory end to end through MCP (bench/coding_latency.py: the SDK's client,"
            " the local embedder, one session), beside its parts timed question by question in"
            f" the same run; load average {mcp_load}:\n\n"
            + common.table(coding_latency.HEADERS, mcp_rows)
            + "\n"
        )
    print(body)
    if not args.no_write:
        title = "Coding-agent recall (bench.coding_recall)"
        if args.backend != "local" or args.cap is not None:
            cap = "" if args.cap is None else f", cap {args.cap}"
            title = f"Coding-agent recall (bench.coding_recall, {args.backend}{cap})"
        common.write_section(title, body)


if __name__ == "__main__":
    main()
