"""Freshness: a turn appended to a transcript → found by a paraphrase through the vector arm,
while the Cold Path works through a large backlog (issue 24: p95 ≤ 5 s).

    python -m bench.freshness [--backlog 20000] [--appends 30] [--every 2]

A private database gets ``--backlog`` coding-session rows without vectors (inserted directly).
``memory-capture run`` (the real daemon) tails a temp HOME's Claude Code session, and a Cold
Path worker (``ColdPathWorker.serve`` with every registered job and the local embedder, in this
process) runs on a NOTIFY or its interval. Every ``--every`` seconds a new turn on a topic of
its own is appended; for each, the bench times (from the write):

* **stored**: its row is in the database (the hot path: capture latency);
* **embedded**: its row has a vector;
* **found**: a paraphrase of it (embedded before the append, so query embedding is not timed)
  has the row among the 10 nearest vectors (``ORDER BY embedding <=> q``): the vector arm
  alone, no words in common needed.

Variants, in one run: **no Cold Path** (capture latency without a backlog being embedded: the
hot path's baseline), **before** (the embedder job as before issue 24: oldest first, 32 rows a
batch, the model at normal priority), **now nice 0** (newest first, token-budget batches, normal
priority), **no lane** (the same at nice 10: the job before the fresh lane) and **now** (as
shipped: the same plus the fresh lane, a second model at normal priority with one thread that
embeds live turns on NOTIFY beside the ticks, :mod:`agents_memory.coldpath.fresh`). A probe
not found within ``--timeout`` seconds counts as missed. Each job's run times are printed too.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
from pgvector.psycopg import register_vector

from agents_memory.coldpath.base import Job, JobContext
from agents_memory.coldpath.embedder import EmbedderJob
from agents_memory.coldpath.registry import load_jobs
from agents_memory.coldpath.worker import ColdPathWorker
from agents_memory.embeddings import create_embedder, to_halfvec
from agents_memory.embeddings.base import Embedder
from agents_memory.store import database
from agents_memory.store.coldpath.coldqueue import JobReport
from bench import common, daemon
from bench.embed_throughput import store_pool

_WHAT = ("nightly export", "billing sync", "thumbnail worker", "search reindex", "invoice mailer")
_WHERE = ("to S3", "from the Stripe webhook", "on the staging cluster", "in the cron container")
_WHY = (
    ("the IAM role lost PutObject", "a missing write permission on the bucket"),
    ("the TLS certificate expired", "an out-of-date certificate"),
    ("the disk filled up with core dumps", "no free space left on the volume"),
    ("a timezone bug skipped the 02:00 run", "daylight saving time confusion"),
    ("the connection pool was exhausted", "running out of database connections"),
    ("a dependency upgrade broke the JSON parser", "a library bump that changed parsing"),
)


def probes(n: int) -> list[tuple[str, str]]:
    """``n`` (turn, paraphrase) pairs on distinct topics."""
    out = []
    for k in range(n):
        what, where = _WHAT[k % len(_WHAT)], _WHERE[(k // len(_WHAT)) % len(_WHERE)]
        why, said = _WHY[(k // 2) % len(_WHY)]
        turn = f"The {what} job {where} failed last night because {why}; I fixed it (case {k})."
        query = f"why did the {what} {where} break? something about {said} (case {k})"
        out.append((turn, query))
    return out


class Timed(Job):
    """A job that records how long each of its runs took (where a fresh turn's wait goes)."""

    def __init__(self, job: Job, seconds: dict[str, list[float]]) -> None:
        self.job = job
        self.name = job.name
        self.seconds = seconds.setdefault(job.name, [])

    def enabled(self, settings: Any) -> bool:
        return self.job.enabled(settings)

    def run(self, ctx: JobContext) -> JobReport:
        started = time.perf_counter()
        try:
            return self.job.run(ctx)
        finally:
            self.seconds.append(time.perf_counter() - started)


def line(session: str, text: str) -> bytes:
    record = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/proj",
        "sessionId": session,
        "version": "2.1.332",
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": str(uuid.uuid4()),
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }
    return (json.dumps(record) + "\n").encode()


def run_variant(
    db: common.BenchDB, url: str, variant: str, args: argparse.Namespace
) -> dict[str, Any]:
    settings = db.settings(embedding_backend="local", cold_path_warmup_sec=0)
    embedder = create_embedder(settings, background=variant in ("no lane", "now"))
    assert embedder is not None
    fresh = create_embedder(settings, threads=1) if variant == "now" else None
    with embedder:
        try:
            return _run_variant(db, url, settings, embedder, variant, args, fresh)
        finally:
            if fresh is not None:
                fresh.close()


def _run_variant(
    db: common.BenchDB,
    url: str,
    settings: Any,
    embedder: Embedder,
    variant: str,
    args: argparse.Namespace,
    fresh: Embedder | None,
) -> dict[str, Any]:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE memory SET embedding = NULL, embedding_model = NULL")
        conn.execute("DELETE FROM memory WHERE message LIKE 'The % job % (case %).'")
    worker = thread = None
    seconds: dict[str, list[float]] = {}
    if variant != "no Cold Path":
        jobs = load_jobs()
        if variant == "before":
            old = EmbedderJob(newest_first=False, batch_tokens=None, dedupe=False)
            jobs = [old if j.name == "embedder" else j for j in jobs]
        timed: list[Job] = [Timed(j, seconds) for j in jobs]
        worker = ColdPathWorker(settings, database.open_database(settings), jobs=timed,
                                embedder=embedder, fresh_embedder=fresh)  # fmt: skip
        thread = threading.Thread(target=worker.serve, daemon=True)
        thread.start()
    pairs = probes(args.appends)
    queries = embedder.embed_queries([q for _, q in pairs])
    session = str(uuid.uuid4())
    path = db.home / ".claude/projects/-work-proj" / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(line(session, "seed turn of the freshness session"))
    load = common.load_avg()
    stored, embedded, found = measure(url, path, session, pairs, queries, args)
    if worker is not None and thread is not None:
        worker.request_stop()
        thread.join()
        worker.close()
    return {"variant": variant, "stored": stored, "embedded": embedded, "found": found,
            "n": len(pairs), "load": load, "load_end": common.load_avg(),
            "jobs": seconds}  # fmt: skip


def measure(
    url: str, path: Any, session: str, pairs: Sequence[tuple[str, str]], queries: Any,
    args: argparse.Namespace,
) -> tuple[list[float], list[float], list[float]]:  # fmt: skip
    """Append on schedule; poll every pending probe until found or timed out."""
    written: dict[int, float] = {}
    stored: dict[int, float] = {}
    embedded: dict[int, float] = {}
    found: dict[int, float] = {}
    ids: dict[int, int] = {}
    start = time.monotonic()
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        while True:
            now = time.monotonic()
            k = len(written)
            if k < len(pairs) and now >= start + k * args.every:
                with path.open("ab") as handle:
                    handle.write(line(session, pairs[k][0]))
                    handle.flush()
                written[k] = time.monotonic()
            pending = [i for i in written if i not in found and now - written[i] < args.timeout]
            if not pending and len(written) == len(pairs):
                break
            for i in pending:
                check(conn, i, pairs[i][0], queries[i], written[i], ids, stored, embedded, found)
            time.sleep(0.05)
    return list(stored.values()), list(embedded.values()), list(found.values())


def check(
    conn: psycopg.Connection[Any], i: int, text: str, query: Any, at: float,
    ids: dict[int, int], stored: dict[int, float], embedded: dict[int, float],
    found: dict[int, float],
) -> None:  # fmt: skip
    if i not in ids:
        row = conn.execute("SELECT id FROM memory WHERE message = %s", (text,)).fetchone()
        if row is None:
            return
        ids[i] = int(row[0])
        stored[i] = time.monotonic() - at
    if i not in embedded:
        row = conn.execute(
            "SELECT embedding IS NOT NULL FROM memory WHERE id = %s", (ids[i],)
        ).fetchone()
        if not (row and row[0]):
            return
        embedded[i] = time.monotonic() - at
    top = conn.execute(
        "SELECT id FROM memory WHERE embedding IS NOT NULL ORDER BY embedding <=> %s LIMIT 10",
        (to_halfvec(query),),
    ).fetchall()
    if any(int(r[0]) == ids[i] for r in top):
        found[i] = time.monotonic() - at


def main() -> None:
    parser = argparse.ArgumentParser(description="append → found by a paraphrase (vector arm)")
    parser.add_argument("--backlog", type=int, default=20000)
    parser.add_argument("--appends", type=int, default=30)
    parser.add_argument("--every", type=float, default=2.0)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--variants", default="no Cold Path,before,now nice 0,no lane,now")
    args = parser.parse_args()
    head = common.header(common.command_line())
    results = []
    with common.bench_db() as db:
        url = db.create_database()
        with psycopg.connect(url) as conn:
            store_pool(conn, args.backlog)
        # The bench runs its own worker: the daemon must not start its Cold Path child (which
        # would take the lock first).
        with daemon.capture_daemon(db, COLD_PATH_ENABLED="false"):
            for variant in args.variants.split(","):
                print(f"{variant}: load {common.load_avg()}", flush=True)
                results.append(run_variant(db, url, variant, args))
                print(summary_row(results[-1], args.timeout), flush=True)
    report(head, results, args)


def summary_row(r: dict[str, Any], timeout: float) -> tuple[Any, ...]:
    s, e, f = (common.summary_ms(r[k]) for k in ("stored", "embedded", "found"))
    return (
        r["variant"], s["p50"], s["p95"],
        e["p50"] / 1000, e["p95"] / 1000, f["p50"] / 1000, f["p95"] / 1000,
        f"{r['n'] - len(r['found'])} / {r['n']}", f"{r['load']} → {r['load_end']}",
    )  # fmt: skip


def report(head: str, results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    table = common.table(
        ["variant", "stored p50 ms", "stored p95 ms", "embedded p50 s", "embedded p95 s",
         "found p50 s", "found p95 s", f"not found in {args.timeout:.0f} s", "load 1/5"],
        [summary_row(r, args.timeout) for r in results],
    )  # fmt: skip
    jobs = common.table(
        ["variant", "job", "runs", "p50 s", "p95 s", "max s", "total s"],
        [
            (r["variant"], name, len(secs), *(common.summary_ms(secs)[k] / 1000
             for k in ("p50", "p95", "max")), sum(secs))
            for r in results for name, secs in r.get("jobs", {}).items() if secs
        ],
    )  # fmt: skip
    body = (
        f"{head}\n{args.backlog:,} coding-session rows without vectors (the backlog), one append"
        f" every {args.every:g} s, {args.appends} appends per variant; `memory-capture run` and a"
        " Cold Path worker with every job and the local embedder (2 threads). Percentiles over"
        f" the probes found (missed ones are counted apart). Bar: found p95 ≤ 5 s.\n\n{table}\n"
        "\nEach Cold Path job's runs while the probes ran (a tick runs every job once; a fresh"
        f" turn waits for the rest of the tick under way):\n\n{jobs}\n"
    )
    print(body)
    common.write_section("Freshness (append → found by a paraphrase, backlog draining)", body)


if __name__ == "__main__":
    main()
