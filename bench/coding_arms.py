"""The coding set per question kind: the fused search against each of its arms alone, measured
in the same run on the same pool (issue 36), and search_memory's latency with the query
embedded.

An arm alone is the product's search with the other arm off (everything else the same: the
session context, the named day and project): **full text** is the search without a query vector
(as without pgvector), **vector** is the search with ``fts_scan_rows=0``. A fusion should never
be worse than the better of its arms on a kind of question: the table prints both arms' Hit@5
and Hit@10 beside the fused, and ``lost`` counts the questions some arm alone finds in its top
10 and the fused search does not.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import psycopg

from agents_memory.embeddings import LOCAL_DIM, LOCAL_MODEL
from agents_memory.embeddings.local import LocalEmbedder
from agents_memory.recall.search import prepare_search
from agents_memory.recall.search_request import SearchRequest
from agents_memory.store.database import EmbeddingSpec
from agents_memory.store.search import SearchResult, SearchTuning, find_user_id, search_memories
from bench import common
from bench.codeset import CodeSet
from bench.codeset.generate import KINDS

ARMS = ("fused", "full text", "vector")
Runner = Callable[[list[str], dict[str, Any], SearchTuning], tuple[list[SearchResult], list[float]]]


def arm_results(
    run: Runner,
    texts: list[str],
    qv: dict[str, Any],
    tuning: SearchTuning,
    fused: list[SearchResult],
) -> dict[str, list[SearchResult]]:
    """The questions' ``fused`` results, and each searched by full text alone and by the
    vector arm alone."""
    lexical, _t = run(texts, {}, tuning)
    vector, _t = run(texts, qv, replace(tuning, fts_scan_rows=0))
    return {"fused": fused, "full text": lexical, "vector": vector}


def _rank(ids: Sequence[str], gold: Sequence[str]) -> int | None:
    return next((i + 1 for i, k in enumerate(ids) if k in gold), None)


def _hit(rank: int | None, k: int) -> bool:
    return rank is not None and rank <= k


def arms_rows(cs: CodeSet, name: str, ranked: dict[str, list[list[str]]]) -> list[list[Any]]:
    """Per half and kind: n, Hit@5 and Hit@10 of the fused search and of each arm alone, the
    better arm's Hit@10, and how many questions an arm alone finds that the fused loses."""
    rows = []
    for half in ("tuning", "heldout"):
        for kind in (*KINDS, "all"):
            idx = [
                i for i, q in enumerate(cs.questions)
                if q.half == half and kind in ("all", q.kind)
            ]  # fmt: skip
            n = max(1, len(idx))
            ranks = {
                arm: [_rank(ranked[arm][i], cs.questions[i].gold) for i in idx] for arm in ARMS
            }
            cells: list[Any] = [name, half, kind, len(idx)]
            for arm in ARMS:
                cells += [
                    f"{sum(_hit(r, 5) for r in ranks[arm]) / n:.3f}",
                    f"{sum(_hit(r, 10) for r in ranks[arm]) / n:.3f}",
                ]
            better = max(sum(_hit(r, 10) for r in ranks[arm]) for arm in ARMS[1:]) / n
            lost = sum(
                not _hit(f, 10) and (_hit(a, 10) or _hit(b, 10))
                for f, a, b in zip(ranks["fused"], ranks["full text"], ranks["vector"], strict=True)
            )
            cells += [f"{better:.3f}", lost]
            rows.append(cells)
    return rows


ARMS_HEADERS = [
    "variant", "half", "kind", "n", "fused Hit@5", "fused Hit@10", "full text Hit@5",
    "full text Hit@10", "vector Hit@5", "vector Hit@10", "better arm Hit@10", "lost",
]  # fmt: skip


def embedded_latency(
    url: str, user_name: str, texts: list[str], tuning: SearchTuning
) -> dict[str, float]:
    """What ``search_memory`` spends on a question: its query embedded by the product's local
    embedder (threads per call by load, as the server's), then the search (limit 10);
    percentiles in ms."""
    model = LocalEmbedder(EmbeddingSpec(LOCAL_MODEL, LOCAL_DIM), adaptive=True)
    model.embed_query("warm up")
    seconds = []
    with psycopg.connect(url) as conn:
        uid = find_user_id(conn, user_name)
        assert uid is not None
        for text in texts:
            started = time.perf_counter()
            request = prepare_search(
                SearchRequest.build(query=text, limit=10), device_name=None, now=datetime.now(UTC)
            )
            search_memories(
                conn, uid, query=request.text, query_vector=model.embed_query(text),
                filters=request.filters, tuning=tuning,
            )  # fmt: skip
            conn.commit()
            seconds.append(time.perf_counter() - started)
    model.close()
    return common.summary_ms(seconds)
