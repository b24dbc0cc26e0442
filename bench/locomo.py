"""LoCoMo retrieval through the product (benchmarks.md §4; SPEC §12: evidence recall@10 ≥ 0.78
on categories 1-4), with BM25 (B1) and dense-only (B2) side by side.

    python -m bench.locomo --data PATH/locomo10.json [--variants default,recency-off,...]

§4.2 input: each conversation's sessions become Claude Code transcripts (speaker_a → user,
speaker_b → assistant, text ``"<speaker>: <text> [image: <caption>]"``, ts = session start +
30 s x turn index) under a temp HOME, imported by the product's ``backfill()`` (what
``memory-capture backfill`` runs; in process, to spare ten process starts) with one user per
conversation (the scope). Vectors are filled with the product's embedder (``embed_passages`` →
``to_halfvec`` → ``set_embedding``; cached across runs outside the repo) over the text the Cold
Path embeds: each stored message after the end of the turn before it in its session
(``agents_memory.store.passages``). §4.3: every question
goes verbatim through ``search_memories`` (k = 50, query embedded by the product's embedder).
The product has no ``now`` parameter: searches run at the real clock, years after LoCoMo's dates.

B1 is the reference BM25 of §4.5. Without ``snowballstemmer`` installed, its per-question output
is read from ``derived/baseline_top10_bm25_stop_stem.jsonl`` beside the data (top 10 and the
rank of the first gold id): metrics beyond k = 10 are then n/a. B2 is cosine over the same
vectors (numpy), no lexical arm, no recency.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.embeddings import to_halfvec
from agents_memory.store.knowledge import set_embedding
from agents_memory.store.passages import PREVIOUS_SQL, passage_text
from agents_memory.store.search import SearchFilters, SearchTuning, find_user_id, search_memories
from bench import common, embed_cache, locomo_data
from bench.locomo_report import Ranked, mean, report, score

# --- input: transcripts and import ---------------------------------------------------------


def _record(turn: locomo_data.Turn, session: str, parent: str | None) -> tuple[str, str]:
    uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{turn.sample_id}/{turn.dia_id}"))
    ts = turn.ts.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    base = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": f"/locomo/{turn.sample_id}",
        "sessionId": session,
        "version": "2.1.332",
        "uuid": uid,
        "timestamp": ts,
    }
    rec: dict[str, Any]
    if turn.role == "user":
        rec = {**base, "type": "user", "message": {"role": "user", "content": turn.text}}
    else:
        rec = {
            **base,
            "type": "assistant",
            "message": {
                "model": "locomo-speaker-b",
                "id": f"msg_{uid[:8]}",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": turn.text}],
            },
        }
    return json.dumps(rec, ensure_ascii=False) + "\n", uid


def write_transcripts(home: Path, conv: locomo_data.Conversation) -> dict[tuple[str, str], str]:
    """One Claude Code file per session; returns (session id, ISO ts) → dia_id."""
    keys: dict[tuple[str, str], str] = {}
    by_session: dict[int, list[locomo_data.Turn]] = {}
    for t in conv.turns:
        by_session.setdefault(t.session, []).append(t)
    project = home / ".claude/projects" / f"-locomo-{conv.sample_id}"
    project.mkdir(parents=True, exist_ok=True)
    for n, turns in by_session.items():
        session = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{conv.sample_id}/S{n}"))
        parent, lines = None, []
        for t in turns:
            line, parent = _record(t, session, parent)
            lines.append(line)
            keys[(session, t.ts.isoformat())] = t.dia_id
        (project / f"{session}.jsonl").write_text("".join(lines), encoding="utf-8")
    return keys


@dataclass
class Corpus:
    user_id: int
    ids: list[int]
    """memory ids in conversation turn order"""
    dia: dict[int, str]
    """memory id → dia_id"""


def import_all(
    db: common.BenchDB,
    convs: Sequence[locomo_data.Conversation],
    turn_vecs: Any,
    dbname: str,
    *,
    pooled: bool = False,
) -> tuple[dict[str, Corpus], dict[str, float]]:
    url = db.create_database(dbname)
    timings = {"backfill_s": 0.0, "vectors_s": 0.0}
    offsets, at = {}, 0
    for c in convs:
        offsets[c.sample_id] = at
        at += len(c.turns)
    corpora: dict[str, Corpus] = {}
    for conv in convs:
        home = db.base / f"home-{dbname}-{conv.sample_id}"
        keys = write_transcripts(home, conv)
        user = "locomo-pooled" if pooled else f"locomo-{conv.sample_id}"
        settings = db.settings(dbname, user_name=user, embedding_backend="none")
        started = time.perf_counter()
        report = backfill(settings, Catalog(all_adapters(), home))
        timings["backfill_s"] += time.perf_counter() - started
        if report.stored != len(conv.turns):
            print(f"  {conv.sample_id}: stored {report.stored} of {len(conv.turns)} turns")
        with psycopg.connect(url) as conn:
            register_vector(conn)
            uid = find_user_id(conn, user)
            assert uid is not None
            rows = conn.execute(
                "SELECT m.id, m.session_id, m.message_at, m.message, "
                + PREVIOUS_SQL
                + " FROM memory m WHERE m.user_id = %s AND m.session_id = ANY(%s)",
                (uid, sorted({s for s, _ in keys})),
            ).fetchall()
            dia = {}
            order = {t.dia_id: i for i, t in enumerate(conv.turns)}
            expected = embed_cache.passages(conv)
            started = time.perf_counter()
            changed, vecs, redo = 0, {}, {}
            for mid, session, at_, message, previous in rows:
                d = keys[(session, at_.astimezone(UTC).isoformat())]
                dia[int(mid)] = d
                i = order[d]
                changed += message != conv.turns[i].text
                # the product's rule (what the Cold Path embeds), not the bench's own text
                passage = passage_text(message, previous)
                if turn_vecs is None:
                    continue
                if passage == expected[i]:
                    vecs[int(mid)] = turn_vecs[offsets[conv.sample_id] + i]
                else:
                    redo[int(mid)] = passage
            if redo:
                fresh = embed_cache.embed(list(redo.values()), "passage", db.base / "cache")
                vecs.update(zip(redo, fresh, strict=True))
            for mid, vec in vecs.items():
                set_embedding(conn, mid, to_halfvec(np.asarray(vec)), common.MODEL)
            conn.commit()
            timings["vectors_s"] += time.perf_counter() - started
            timings["changed_texts"] = timings.get("changed_texts", 0) + changed
        ids = sorted(dia, key=lambda m: order[dia[m]])
        if len(ids) != len(conv.turns):
            print(f"  {conv.sample_id}: {len(ids)} rows for {len(conv.turns)} turns")
        if pooled:
            prev = corpora.get("*")
            merged = dict(prev.dia) if prev else {}
            merged.update(dia)
            corpora["*"] = Corpus(uid, [*(prev.ids if prev else []), *ids], merged)
        else:
            corpora[conv.sample_id] = Corpus(uid, ids, dia)
    return corpora, timings


# --- retrievers ------------------------------------------------------------------------------


def b1_from_file(path: Path) -> dict[str, Ranked]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        out[rec["qid"]] = Ranked(rec["top10"], rec.get("first_rank"), depth=10)
    return out


def b2_dense(
    convs: Sequence[locomo_data.Conversation], turn_vecs: Any, q_vecs: Any
) -> dict[str, Ranked]:
    out, at, qi = {}, 0, 0
    for c in convs:
        block = turn_vecs[at : at + len(c.turns)]
        at += len(c.turns)
        for q in c.questions:
            sims = block @ q_vecs[qi]
            qi += 1
            order = np.argsort(-sims, kind="stable")[:50]
            out[q.qid] = Ranked([c.turns[i].dia_id for i in order])
    return out


def rrf(a: dict[str, Ranked], b: dict[str, Ranked], k: int = 60) -> dict[str, Ranked]:
    out = {}
    for qid, ra in a.items():
        score: dict[str, float] = {}
        for r in (ra, b[qid]):
            for rank, d in enumerate(r.ids, 1):
                score[d] = score.get(d, 0.0) + 1 / (k + rank)
        out[qid] = Ranked(sorted(score, key=lambda d: -score[d])[:50], depth=min(ra.depth, 50))
    return out


def product(
    db: common.BenchDB,
    dbname: str,
    convs: Sequence[locomo_data.Conversation],
    corpora: dict[str, Corpus],
    q_vecs: Any,
    tuning: SearchTuning,
    *,
    use_vector: bool = True,
    use_text: bool = True,
) -> tuple[dict[str, Ranked], list[float]]:
    """Every question through ``search_memories``; returns rankings and latencies."""
    out, times, qi = {}, [], 0
    with psycopg.connect(db.url(dbname)) as conn:
        register_vector(conn)
        for c in convs:
            corpus = corpora.get(c.sample_id) or corpora["*"]
            for q in c.questions:
                vec = q_vecs[qi] if use_vector and q_vecs is not None else None
                qi += 1
                started = time.perf_counter()
                res = search_memories(
                    conn,
                    corpus.user_id,
                    query=q.question if use_text else " ",
                    query_vector=vec,
                    filters=SearchFilters(limit=50),
                    tuning=tuning,
                )
                conn.commit()
                times.append(time.perf_counter() - started)
                ids, seen = [], set()
                for h in res.hits:
                    d = corpus.dia.get(h.id)
                    if d and d not in seen:
                        ids.append(d)
                        seen.add(d)
                out[q.qid] = Ranked(ids)
    return out, times


def main() -> None:
    parser = argparse.ArgumentParser(description="LoCoMo retrieval through the product")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=common.DEFAULT_CACHE)
    parser.add_argument(
        "--no-vectors",
        action="store_true",
        help="import without vectors and run the full-text path only (no embedding needed)",
    )
    parser.add_argument(
        "--variants",
        default="default,lexical-only,vector-only,fusion-plain",
    )
    args = parser.parse_args()
    start_header = common.header(common.command_line())
    if locomo_data.sha256(args.data) != locomo_data.EXPECTED_SHA256:
        print("warning: the data file's sha256 differs from benchmarks.md §2")
    if args.no_vectors:
        convs = locomo_data.load(args.data)
        turn_vecs = q_vecs = None
        if not all(v.startswith("lexical-") for v in args.variants.split(",")):
            args.variants = "lexical-only"
    else:
        convs, turn_vecs, q_vecs = embed_cache.locomo_vectors(args.data, args.cache)
    questions = {q.qid: q for c in convs for q in c.questions}
    b1_path = args.data.parent / "derived" / "baseline_top10_bm25_stop_stem.jsonl"
    systems: dict[str, dict[str, Ranked]] = {"B1 BM25 (reference output)": b1_from_file(b1_path)}
    if turn_vecs is not None:
        systems["B2 dense-only (product embedder)"] = b2_dense(convs, turn_vecs, q_vecs)
    latencies: dict[str, list[float]] = {}
    info: dict[str, Any] = {}
    base = SearchTuning()
    plain = replace(base, neighbour_weight=0.0, session_weight=0.0, date_weight=0.0)
    variants: dict[str, tuple[SearchTuning, dict[str, bool]]] = {
        "default": (base, {}),
        "fixed-weights": (replace(base, arm_weighting=False, kept_slots=(0, 0)), {}),
        "no-kept-slots": (replace(base, kept_slots=(0, 0)), {}),
        "vector-z-0-4": (replace(base, vector_z=(0.0, 4.0)), {}),
        "neutral-0.2": (replace(base, arm_confidence_neutral=0.2), {}),
        "floor-0.5": (replace(base, arm_confidence_floor=0.5), {}),
        "dated-vector-1": (replace(base, dated_vector_confidence=1.0), {}),
        "recency-off": (replace(base, recency_halflife_days=1e9), {}),
        "pool-400": (replace(base, candidate_factor=8, min_candidates=400), {}),
        "lexical-only": (base, {"use_vector": False}),
        "vector-only": (replace(base, fts_scan_rows=0), {}),
        "bm25-plain": (plain, {"use_vector": False}),
        "vector-plain": (replace(plain, fts_scan_rows=0), {}),
        "fusion-plain": (plain, {}),
        "no-neighbours": (replace(base, neighbour_weight=0.0), {}),
        "no-session": (replace(base, session_weight=0.0), {}),
        "no-date": (replace(base, date_weight=0.0), {}),
        "slack-date-0.5": (replace(base, slack_date_share=0.5), {}),
        "rrf-10": (replace(base, rrf_k=10.0), {}),
        "rrf-60": (replace(base, rrf_k=60.0), {}),
        "no-floor": (replace(base, lexical_floor=0.0), {}),
        "lexical-w0.4": (replace(base, lexical_weight=0.4), {}),
        "lexical-w0.6": (replace(base, lexical_weight=0.6), {}),
        "neighbours-0.8": (replace(base, neighbour_weight=0.8), {}),
        "neighbours-span1": (replace(base, neighbour_span=1), {}),
        "session-0.2": (replace(base, session_weight=0.2), {}),
        "stats-100": (replace(base, stats_rows=100), {}),
        "no-rare-rule": (replace(base, rare_share=-1.0), {}),
        "no-date-arm": (replace(base, date_candidates=0, dated_recency_off=False), {}),
        "no-project": (replace(base, project_weight=0.0), {}),
        "mmr-0.7": (replace(base, mmr_lambda=0.7), {}),
        "mmr-0.9": (replace(base, mmr_lambda=0.9), {}),
        "no-importance": (replace(base, importance_weight=0.0), {}),
        "lexical-no-rare-rule": (replace(base, rare_share=-1.0), {"use_vector": False}),
        "lexical-no-date-arm": (
            replace(base, date_candidates=0, dated_recency_off=False),
            {"use_vector": False},
        ),
    }
    with common.bench_db() as db:
        started = time.perf_counter()
        corpora, timings = import_all(db, convs, turn_vecs, "locomo")
        info.update(timings, import_s=time.perf_counter() - started)
        print(f"imported: {info}", flush=True)
        for name in args.variants.split(","):
            if name == "pooled":
                pooled, _t = import_all(db, convs, turn_vecs, "locomo_pooled", pooled=True)
                ranked, times = product(db, "locomo_pooled", convs, pooled, q_vecs, base)
            elif name in variants:
                tuning, flags = variants[name]
                ranked, times = product(db, "locomo", convs, corpora, q_vecs, tuning, **flags)
            else:
                raise SystemExit(f"unknown variant {name}")
            systems[f"system: {name}"] = ranked
            latencies[name] = times
            s = score(convs, ranked)
            head = [m for qid, m in s.items() if questions[qid].category < 5]
            print(
                f"{name}: EvRec@10 {mean(head, 'EvRec@10'):.3f} Hit@10 {mean(head, 'Hit@10'):.3f}"
                f" MRR {mean(head, 'MRR'):.3f} (p50 {1000 * np.median(times):.0f} ms)",
                flush=True,
            )
        versions = common.pg_versions(db.url("locomo"))
    report(start_header, versions, info, convs, questions, systems, latencies)


if __name__ == "__main__":
    main()
