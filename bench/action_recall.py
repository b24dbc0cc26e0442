"""Questions whose answer lives only in an action (issue 28), through the product's search,
with plain BM25 over the same texts beside it.

    python -m bench.action_recall [--sessions 160] [--variants default,turns-only]
                                  [--vectors] [--no-write]

The set (:mod:`bench.actionset`: coding sessions in Claude Code's and Codex CLI's real
formats, one question each, tuning / held-out halves) is written into a temp HOME and read by
the real backfill (the real adapters, admission and capture path) into a private embedded
database. Each question goes through the search service (the request as ``search_memory``
builds it, limit 10; full text only unless ``--vectors``, which embeds the turns and the
questions with the product's local embedder). Two readings of a hit:

* **shown**: the answering action is listed in one of the first k hits (``actions``), so the
  agent reads the answer in the search's answer;
* **turn**: the turn the answering action belongs to is one of the first k hits (its
  ``read_memory`` lists the action).

BM25 (``bench.codeset.bm25``, k1 1.2, b 0.75, no stemming) ranks every stored turn with the
text of its actions appended (the "an action's text counts for its turn" alternative, full
text only); its hit is the turn reading.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.embeddings import to_halfvec
from agents_memory.recall.search import prepare_search
from agents_memory.recall.search_request import SearchRequest
from agents_memory.store.actions import bytes_per_session
from agents_memory.store.knowledge import set_embedding
from agents_memory.store.passages import PREVIOUS_SQL, passage_text
from agents_memory.store.search import SearchResult, SearchTuning, find_user_id, search_memories
from agents_memory.store.search.actions import actions_of, owner_turns
from agents_memory.store.search.lexemes import (
    analyze_memory,
    merge_pending_words,
    refresh_search_lexemes,
)
from bench import common, embed_cache
from bench.actionset import QUESTION_KINDS, Session, generate, write
from bench.codeset.bm25 import BM25

LIMIT = 10
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "turns-only": {"action_fusion": "off"},
    "no-session-boost": {"action_session_weight": 0.0},
    "action-w1": {"action_weight": 1.0},
    "action-w2": {"action_weight": 2.0},
    "rrf-k20": {"action_rrf_k": 20},
}


def ingest(db: common.BenchDB, sessions: list[Session]) -> tuple[str, float, int]:
    """Write the transcripts, run the real backfill in this process; (url, seconds, bytes)."""
    size = write(db.home, sessions)
    url = db.create_database("actions")
    settings = db.settings("actions", embedding_backend="none")
    started = time.perf_counter()
    report = backfill(settings, Catalog(all_adapters(), db.home))
    took = time.perf_counter() - started
    print(f"backfill: {report}")
    with psycopg.connect(url) as conn:
        analyze_memory(conn)
        refresh_search_lexemes(conn, force=True)
        merge_pending_words(conn)  # as the Cold Path does each tick
        conn.commit()
    return url, took, size


def golds(conn: psycopg.Connection[Any], sessions: list[Session]) -> dict[str, tuple[int, int]]:
    """Question text -> (the answering action's id, its turn)."""
    keys = {(s.id, s.question.gold): s.question.text for s in sessions if s.question}
    rows = conn.execute(
        "SELECT id, session_id, external_key FROM actions WHERE (session_id, external_key)"
        " IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
        ([k[0] for k in keys], [k[1] for k in keys]),
    ).fetchall()
    found = {keys[(str(s), str(k))]: int(i) for i, s, k in rows}
    owners = owner_turns(conn, list(found.values()))
    missing = len(keys) - len(found)
    if missing:
        print(f"warning: {missing} answering actions were not stored")
    return {q: (a, owners[a]) for q, a in found.items() if a in owners}


def embed(conn: psycopg.Connection[Any], texts: list[str], cache: Path) -> dict[str, Any]:
    """Vectors for every stored turn (as the Cold Path embeds it) and for ``texts``."""
    register_vector(conn)
    rows = conn.execute(f"SELECT m.id, m.message, {PREVIOUS_SQL} FROM memory m").fetchall()
    passages = [passage_text(message, previous) for _id, message, previous in rows]
    vectors = embed_cache.embed(passages, "passage", cache, log=False)
    for (mid, _m, _p), vec in zip(rows, vectors, strict=True):
        set_embedding(conn, mid, to_halfvec(np.asarray(vec)), common.MODEL)
    conn.commit()
    return dict(zip(texts, embed_cache.embed(texts, "query", cache, log=False), strict=True))


def run(
    conn: psycopg.Connection[Any],
    texts: list[str],
    qv: dict[str, Any],
    tuning: SearchTuning,
    user: str = "bench",
) -> tuple[list[SearchResult], list[float]]:
    """Each text through the service's request and the store's search (limit 10)."""
    uid = find_user_id(conn, user)
    assert uid is not None
    out, times = [], []
    for text in texts:
        started = time.perf_counter()
        asked = prepare_search(
            SearchRequest(query=text, limit=LIMIT), device_name=None, now=datetime.now(UTC)
        )
        out.append(
            search_memories(
                conn,
                uid,
                query=asked.text,
                query_vector=qv.get(text),
                filters=asked.filters,
                tuning=tuning,
            )
        )
        conn.commit()
        times.append(time.perf_counter() - started)
    return out, times


def bm25_ranking(conn: psycopg.Connection[Any], texts: list[str]) -> list[list[int]]:
    """Plain BM25 over each turn's text with its actions' text appended."""
    rows = conn.execute("SELECT id, user_id, message FROM memory").fetchall()
    acted = actions_of(conn, int(rows[0][1]), [int(r[0]) for r in rows], per_turn=1000)
    docs = {
        str(i): message + " " + " ".join(a.text() for a in acted.get(int(i), ()))
        for i, _u, message in rows
    }
    index = BM25(docs)
    return [[int(k) for k in index.top(text, LIMIT)] for text in texts]


def hit(ranked: list[int], gold: int, k: int) -> bool:
    return gold in ranked[:k]


def rows_for(
    name: str,
    sessions: list[Session],
    gold: dict[str, tuple[int, int]],
    shown: dict[str, list[set[int]]],
    turns: dict[str, list[int]],
) -> list[list[Any]]:
    """Per half and kind: n, shown Hit@5/10, turn Hit@5/10."""
    out = []
    for half in ("tuning", "held-out"):
        for kind in (*QUESTION_KINDS, "all"):
            qs = [
                s.question for s in sessions
                if s.question and s.question.text in gold
                and s.question.held_out == (half == "held-out") and kind in ("all", s.question.kind)
            ]  # fmt: skip
            if not qs:
                continue
            n = len(qs)
            figures = []
            for k in (5, 10):
                figures.append(
                    sum(any(gold[q.text][0] in a for a in shown[q.text][:k]) for q in qs) / n
                )
            for k in (5, 10):
                figures.append(sum(hit(turns[q.text], gold[q.text][1], k) for q in qs) / n)
            out.append([name, half, kind, n, *(f"{f:.3f}" for f in figures)])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=160)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", default="default,turns-only")
    parser.add_argument("--vectors", action="store_true", help="embed turns and questions")
    parser.add_argument("--cache", type=Path, default=common.DEFAULT_CACHE)
    parser.add_argument("--no-write", action="store_true", help="print only, keep RESULTS.md")
    parser.add_argument("--misses", action="store_true", help="print the tuning half's misses")
    args = parser.parse_args()
    head = common.header(common.command_line())
    sessions = generate(args.sessions, args.seed)
    texts = [s.question.text for s in sessions if s.question]
    table: list[list[Any]] = []
    latency: list[str] = []
    with common.bench_db() as db:
        url, took, size = ingest(db, sessions)
        with psycopg.connect(url) as conn:
            gold = golds(conn, sessions)
            qv = embed(conn, texts, args.cache) if args.vectors else {}
            counts = conn.execute(
                "SELECT (SELECT count(*) FROM memory), (SELECT count(*) FROM actions),"
                " (SELECT count(*) FROM actions WHERE memory_id IS NULL)"
            ).fetchone()
            uid = find_user_id(conn, "bench")
            assert uid is not None
            stored = sum(s.bytes for s in bytes_per_session(conn, uid))
            b_ranked = dict(zip(texts, bm25_ranking(conn, texts), strict=True))
            no_shown: dict[str, list[set[int]]] = {t: [] for t in texts}
            table += rows_for("plain BM25 (turn + its actions)", sessions, gold, no_shown, b_ranked)
            for name in args.variants.split(","):
                tuning = replace(SearchTuning(), **VARIANTS[name])
                results, times = run(conn, texts, qv, tuning)
                by_text = dict(zip(texts, results, strict=True))
                shown = {t: [{a.id for a in h.actions} for h in r.hits] for t, r in by_text.items()}
                turns = {t: [h.id for h in r.hits] for t, r in zip(texts, results, strict=True)}
                table += rows_for(f"search_memory: {name}", sessions, gold, shown, turns)
                ms = common.summary_ms(times)
                latency.append(f"{name}: p50 {ms['p50']:.1f} ms, p95 {ms['p95']:.1f} ms")
                if args.misses and name == "default":
                    _misses(sessions, gold, by_text)
    assert counts is not None
    text = "\n".join([
        head,
        f"{len(sessions)} sessions ({sum(s.platform == 'claude-code' for s in sessions)} Claude"
        f" Code, {sum(s.platform == 'codex-cli' for s in sessions)} Codex CLI), {size:,} bytes of"
        f" transcripts; backfill stored {counts[0]:,} turns and {counts[1]:,} actions"
        f" ({counts[2]:,} of tool-only responses) in {took:.1f} s; {len(gold)} questions"
        f" ({'with' if args.vectors else 'without'} vectors). The actions' rows take"
        f" {stored:,} bytes (`pg_column_size`), {100 * stored / max(1, size):.1f} % of the"
        " transcripts' bytes (issue 28's bound: 5 %).",
        "",
        common.table(
            ["ranking", "half", "kind", "n", "shown@5", "shown@10", "turn@5", "turn@10"], table
        ),
        "",
        "Search time per question: " + "; ".join(latency) + ".",
    ])  # fmt: skip
    print(text)
    if not args.no_write:
        common.write_section("Action recall (bench.action_recall)", text)


def _misses(
    sessions: list[Session], gold: dict[str, tuple[int, int]], results: dict[str, SearchResult]
) -> None:
    for s in sessions:
        if s.question is None or s.question.held_out or s.question.text not in gold:
            continue
        r = results[s.question.text]
        action, _turn = gold[s.question.text]
        if not any(action in {a.id for a in h.actions} for h in r.hits[:5]):
            print(f"MISS [{s.question.kind}] {s.question.text}")
            for h in r.hits[:5]:
                print("   ", h.id, h.why.arms, [a.as_dict()["line"][:90] for a in h.actions])


if __name__ == "__main__":
    main()
