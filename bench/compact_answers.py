"""Tokens per ``search_memory`` answer, full hits (before issue 30) against the compact lines
(the default since), at the same Hit@10, on the coding set and on LoCoMo; and whether fusing
2-3 phrasings (``queries``) moves Hit@10.

    python -m bench.compact_answers [--sets coding,locomo] [--data PATH/locomo10.json]

Each question goes through the product's search (:func:`agents_memory.recall.search.search_user`,
limit 10, the query embedded by the product's embedder; cached) and the tool's own answer
(:func:`agents_memory.server.tools.search.answer`) in both forms. Tokens are approximated as
characters / 4 of the text a model reads. Hit@10: the gold turn's id is among the ten hits the
answer lists (read back from the answer's text: ``#id``).

Phrasings are made deterministically from the question (no LLM): ``+keywords`` adds the
question's content words alone; ``+keywords+tail`` also its last five content words. They add
no vocabulary the question lacks, so they cannot show what an LLM's synonyms would find; they
measure what fusion costs or gains on the same words.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from agents_memory.recall.search import prepare_search, search_user
from agents_memory.recall.search_request import SearchRequest
from agents_memory.server.tools.search import answer
from agents_memory.store.search import find_user_id
from agents_memory.store.search.words import WORD, content_words, stem
from bench import common, embed_cache

LIMIT = 10
PHRASINGS = ("question", "+keywords", "+keywords+tail")
_ID = re.compile(r"^#(\d+) ", re.MULTILINE)


def keywords(text: str) -> str:
    content = content_words(text)
    words = [w for w in WORD.findall(text) if stem(w.lower()) in content]
    return " ".join(words)


def phrasings(text: str, variant: str) -> tuple[str, ...]:
    kw = keywords(text)
    if variant == "question" or not kw:
        return ()
    if variant == "+keywords":
        return (kw,)
    return (kw, " ".join(kw.split()[-5:]))


def tokens(text: str) -> float:
    return len(text) / 4


Gold = Callable[[int], bool]


def measure(
    conn: psycopg.Connection[Any],
    settings: Any,
    uid: int,
    asked: Sequence[tuple[str, Gold]],
    vector_of: Callable[[str], Any],
    variants: Sequence[str] = PHRASINGS,
) -> dict[str, dict[str, float]]:
    """Per phrasing variant: Hit@10 in full and compact answers, mean tokens of each."""
    out: dict[str, dict[str, float]] = {}
    for variant in variants:
        full_t, compact_t, hit_full, hit_compact, ms = [], [], 0, 0, []
        for text, is_gold in asked:
            more = phrasings(text, variant)
            request = SearchRequest(query=text, queries=more, limit=LIMIT)
            prepared = prepare_search(request, device_name=None, now=datetime.now(UTC))
            started = time.perf_counter()
            result = search_user(
                conn, uid, prepared, vector_of(text), settings, [vector_of(m) for m in more]
            )
            conn.commit()
            ms.append(time.perf_counter() - started)
            full, _ = answer(result, request.phrasings, "full")
            compact, _ = answer(result, request.phrasings, "compact")
            full_t.append(tokens(full))
            compact_t.append(tokens(compact))
            hit_full += any(is_gold(h.id) for h in result.hits[:LIMIT])
            hit_compact += any(is_gold(int(i)) for i in _ID.findall(compact)[:LIMIT])
        n = max(1, len(asked))
        out[variant] = {
            "n": n,
            "full_tokens": float(np.mean(full_t)),
            "compact_tokens": float(np.mean(compact_t)),
            "hit_full": hit_full / n,
            "hit_compact": hit_compact / n,
            "p50_ms": 1000 * float(np.median(ms)),
        }
        print(variant, {k: round(v, 3) for k, v in out[variant].items()}, flush=True)
    return out


def _vectors(cache: Path, texts: list[str]) -> dict[str, Any]:
    uniq = sorted(set(texts))
    return dict(zip(uniq, embed_cache.embed(uniq, "query", cache, log=False), strict=True))


def coding(db: common.BenchDB, cache: Path, variants: Sequence[str]) -> dict[str, dict[str, float]]:
    from bench.codeset import generate
    from bench.codeset.vectors import vectors
    from bench.coding_recall import ingest

    cs = generate(24)
    pv, qv = vectors(cs, cache)
    key_of = ingest(db, cs, pv, cache)
    extra = [p for q in cs.questions for v in variants for p in phrasings(q.text, v)]
    qv = {**qv, **_vectors(cache, [e for e in extra if e not in qv])}
    settings = db.settings("coding")
    asked = [(q.text, _coding_gold(key_of, q.gold)) for q in cs.questions]
    with psycopg.connect(db.url("coding")) as conn:
        register_vector(conn)
        uid = find_user_id(conn, settings.user_name)
        assert uid is not None
        return measure(conn, settings, uid, asked, qv.get, variants)


def _coding_gold(key_of: dict[int, str], gold: tuple[str, ...]) -> Gold:
    return lambda mid: key_of.get(mid) in gold


def locomo(
    db: common.BenchDB, cache: Path, data: Path, variants: Sequence[str]
) -> dict[str, dict[str, float]]:
    from bench.locomo import import_all

    convs, turn_vecs, q_vecs = embed_cache.locomo_vectors(data, cache)
    corpora, _timings = import_all(db, convs, turn_vecs, "locomo")
    qv = {q.question: q_vecs[i] for i, q in enumerate(q for c in convs for q in c.questions)}
    extra = [
        p for c in convs for q in c.questions for v in variants for p in phrasings(q.question, v)
    ]
    qv = {**qv, **_vectors(cache, [e for e in extra if e not in qv])}
    totals: dict[str, dict[str, float]] = {}
    with psycopg.connect(db.url("locomo")) as conn:
        register_vector(conn)
        for c in convs:
            corpus = corpora[c.sample_id]
            settings = db.settings("locomo", user_name=f"locomo-{c.sample_id}")
            asked = [
                (q.question, _locomo_gold(corpus.dia, q.gold))
                for q in c.questions
                if q.category < 5
            ]
            part = measure(conn, settings, corpus.user_id, asked, qv.get, variants)
            for variant, m in part.items():
                t = totals.setdefault(variant, dict.fromkeys(m, 0.0))
                for k, v in m.items():
                    t[k] += v * (m["n"] if k != "n" else 1)
    for t in totals.values():
        n = t["n"]
        for k in t:
            if k != "n":
                t[k] /= n
    return totals


def _locomo_gold(dia: dict[int, str], gold: tuple[str, ...]) -> Gold:
    return lambda mid: dia.get(mid) in gold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="coding,locomo")
    parser.add_argument("--cache", type=Path, default=common.DEFAULT_CACHE)
    parser.add_argument(
        "--data", type=Path, default=Path("/work/shared/bench-data/locomo/locomo10.json")
    )
    parser.add_argument("--phrasings", default=",".join(PHRASINGS), help="variants to run")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    head = common.header(common.command_line())
    rows: list[list[Any]] = []
    with common.bench_db() as db:
        for name in args.sets.split(","):
            variants = args.phrasings.split(",")
            found = (
                coding(db, args.cache, variants)
                if name == "coding"
                else locomo(db, args.cache, args.data, variants)
            )
            for variant, m in found.items():
                rows.append([
                    name, variant, int(m["n"]), f"{m['hit_full']:.3f}", f"{m['hit_compact']:.3f}",
                    f"{m['full_tokens']:.0f}", f"{m['compact_tokens']:.0f}",
                    f"{m['full_tokens'] / m['compact_tokens']:.1f}x", f"{m['p50_ms']:.1f}",
                ])  # fmt: skip
    headers = ["set", "phrasings", "questions", "Hit@10 full", "Hit@10 compact",
               "tokens full", "tokens compact", "fewer", "search p50 ms"]  # fmt: skip
    body = (
        f"{head}\n\nTokens = characters / 4 of the answer a model reads (limit 10). Full: the"
        ' hits whole as before issue 30 (`detail="full"`); compact: one line per hit (the'
        " default). Phrasings: deterministic (see the module), not an LLM's.\n\n"
        + common.table(headers, rows)
        + "\n"
    )
    print(body)
    if not args.no_write:
        common.write_section("Compact search answers (bench.compact_answers)", body)


if __name__ == "__main__":
    main()
