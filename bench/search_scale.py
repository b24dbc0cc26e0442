"""The informational parts of the search-latency protocol (benchmarks.md §4.6), used by
``bench.search_latency``: retrieval quality at scale against the per-conversation scope (the
needle check), the first queries after a server restart (cold) and several concurrent clients.

Quality at scale: the ids each timed question found (categories 1-4, each question once) are
checked against its evidence turns, in the original conversation (replica 0, the only rows with
the names the questions use) and in any replica (a perturbed copy of the answer). The reference
is the same questions over replica 0 alone with each conversation its own user, as
``bench.locomo`` scopes them, in a small database loaded the same way: the drop is what the
other conversations and the perturbed replicas (up to 170 copies of each, later in time, so the
recency prior favours them) cost.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from pgvector import HalfVector
from pgvector.psycopg import register_vector

from agents_memory.store.search import SearchFilters, SearchTuning, search_memories
from bench import common, locomo_data

Question = tuple[locomo_data.Question, Any]
Found = list[tuple[locomo_data.Question, list[int]]]


@dataclass(frozen=True, slots=True)
class Quality:
    questions: int
    hit_original: float
    recall_original: float
    recall_replica: float


def seed_a(conn: psycopg.Connection[Any], user_id: int, query: str, vec: Any) -> list[Any]:
    """Seed A: nearest 10 by cosine; an ILIKE of the whole query when the best is below 0.3."""
    rows = conn.execute(
        "SELECT id, message, 1 - (embedding <=> %(q)s) AS sim FROM memory"
        " WHERE user_id = %(u)s AND is_active AND embedding IS NOT NULL"
        " ORDER BY embedding <=> %(q)s LIMIT 10",
        {"q": vec, "u": user_id},
    ).fetchall()
    if not rows or float(rows[0][2]) < 0.3:
        rows = conn.execute(
            "SELECT id, message, NULL FROM memory WHERE user_id = %s AND is_active"
            " AND message ILIKE %s ORDER BY message_at DESC LIMIT 10",
            (user_id, f"%{query}%"),
        ).fetchall()
    conn.commit()
    return rows


def search_ids(
    conn: psycopg.Connection[Any], system: str, user_id: int, question: str, vec: Any
) -> list[int]:
    """One search by ``system`` ("product" or "seed A"), top 10 ids; commits."""
    if system == "product":
        res = search_memories(
            conn,
            user_id,
            query=question,
            query_vector=vec,
            filters=SearchFilters(limit=10),
            tuning=SearchTuning(),
        )
        conn.commit()
        return [h.id for h in res.hits]
    rows = seed_a(conn, user_id, question, HalfVector(np.asarray(vec, dtype=np.float32)))
    return [int(r[0]) for r in rows]


def quality(conn: psycopg.Connection[Any], found: Found) -> Quality:
    """Hit@10 and evidence recall@10 of categories 1-4 (each question once), against the
    original turns and, for recall, against any replica of an evidence turn."""
    seen: dict[str, tuple[float, float, float]] = {}
    for q, ids in found:
        if q.category not in (1, 2, 3, 4) or q.qid in seen or not q.gold:
            continue
        rows = conn.execute(
            "SELECT external_uuid FROM memory WHERE id = ANY(%s)", (ids,)
        ).fetchall()
        original, replica = set(), set()
        for (ext,) in rows:
            scope, _, source = str(ext).partition("|")
            if scope == f"locomo/{q.sample_id}":
                original.add(source)
            if scope.endswith(f"/{q.sample_id}"):
                replica.add(source.rpartition("|")[2])
        gold = set(q.gold)
        seen[q.qid] = (
            float(bool(gold & original)),
            len(gold & original) / len(gold),
            len(gold & replica) / len(gold),
        )
    conn.commit()
    if not seen:
        return Quality(0, float("nan"), float("nan"), float("nan"))
    cols = np.array(list(seen.values()))
    return Quality(len(seen), *(float(x) for x in cols.mean(axis=0)))


def per_conversation(
    conn: psycopg.Connection[Any], users: dict[str, int], questions: Sequence[Question]
) -> dict[str, Quality]:
    """The reference: each question searched in its own conversation's scope (replica 0 only,
    ``users`` maps ``locomo/<sample_id>`` to its user), by each system."""
    out = {}
    for system in ("product", "seed A"):
        found: Found = []
        for q, vec in questions:
            uid = users[f"locomo/{q.sample_id}"]
            found.append((q, search_ids(conn, system, uid, q.question, vec)))
        out[system] = quality(conn, found)
    return out


def prewarm_seconds(url: str, started: float, quiet: float = 1.0, limit: float = 300.0) -> float:
    """Wait until the server has read its cache's listed pages back (no ``autoprewarm worker``
    for ``quiet`` seconds; it runs one worker per database, one after another) and return how
    long that took since ``started`` (``time.monotonic()`` before the restart)."""
    done_at = None
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() - started < limit:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autoprewarm worker'"
            ).fetchone()
            now = time.monotonic()
            if row is not None and row[0]:
                done_at = None
            elif done_at is None:
                done_at = now
            elif now - done_at >= quiet:
                break
            time.sleep(0.05)
    return (done_at or time.monotonic()) - started


def cold(
    restart: Callable[[], str],
    system: str,
    user_id: int,
    questions: Sequence[Question],
    n: int,
    *,
    after_prewarm: bool,
) -> tuple[list[float], float | None]:
    """The first ``n`` searches after a server restart: at once (PostgreSQL's cache empty, or
    being read back in the background), or ``after_prewarm``, once the embedded server has read
    back what its cache held (``pg_prewarm``'s autoprewarm; the seconds it took are returned).
    The operating system's page cache is not dropped (that needs root). ``restart`` restarts
    the server and returns the database's URL."""
    started = time.monotonic()
    url = restart()
    waited = prewarm_seconds(url, started) if after_prewarm else None
    times = []
    with psycopg.connect(url) as conn:
        register_vector(conn)
        for i in range(n):
            q, vec = questions[i % len(questions)]
            started = time.perf_counter()
            search_ids(conn, system, user_id, q.question, vec)
            times.append(time.perf_counter() - started)
    return times, waited


def concurrent(
    url: str,
    system: str,
    user_id: int,
    questions: Sequence[Question],
    *,
    clients: int,
    per_client: int,
) -> tuple[list[float], float]:
    """``clients`` threads, each with its own connection, run ``per_client`` searches each (client
    ``c`` starts at question ``c * per_client``) after a common start; returns every latency and
    the wall time from the start to the last answer."""
    conns = [psycopg.connect(url) for _ in range(clients)]
    for conn in conns:
        register_vector(conn)
    times: list[list[float]] = [[] for _ in range(clients)]
    errors: list[BaseException] = []
    gate = threading.Barrier(clients + 1)

    def client(c: int) -> None:
        try:
            gate.wait()
            for i in range(per_client):
                q, vec = questions[(c * per_client + i) % len(questions)]
                started = time.perf_counter()
                search_ids(conns[c], system, user_id, q.question, vec)
                times[c].append(time.perf_counter() - started)
        except BaseException as exc:  # reported below, after every thread has ended
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    gate.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    for conn in conns:
        conn.close()
    if errors:
        raise errors[0]
    return [x for xs in times for x in xs], wall


def row(
    size: int, system: str, condition: str, times: Sequence[float], wall: float | None
) -> tuple[Any, ...]:
    """A row of the informational latency table."""
    s = common.summary_ms(times)
    qps = f"{len(times) / wall:.1f}" if wall else "—"
    return (size, system, condition, s["n"], s["p50"], s["p95"], s["max"], qps, common.load_avg())


LOAD_HEADERS = ("rows", "system", "condition", "n", "p50", "p95", "max", "QPS", "load 1/5")
QUALITY_HEADERS = (
    "rows",
    "system",
    "questions",
    "Hit@10 original",
    "Hit@10 drop vs own scope",
    "EvRec@10 original",
    "EvRec@10 any replica",
)


def quality_row(size: int | str, system: str, q: Quality, ref: Quality | None) -> tuple[Any, ...]:
    drop = f"{ref.hit_original - q.hit_original:+.3f}" if ref is not None else "—"
    return (
        size,
        system,
        q.questions,
        q.hit_original,
        drop,
        q.recall_original,
        q.recall_replica,
    )


def informational(
    db: common.BenchDB,
    name: str,
    user_id: int,
    size: int,
    questions: list[tuple[locomo_data.Question, Any]],
    args: argparse.Namespace,
) -> list[tuple[Any, ...]]:
    """Concurrent clients on the warm database, then the first searches after a restart
    (``db`` restarted in place; ``args``: ``bench.search_latency``'s options)."""
    rows = []
    for system in ("product", "seed A") if args.clients > 0 else ():
        times, wall = concurrent(
            db.url(name),
            system,
            user_id,
            questions,
            clients=args.clients,
            per_client=args.client_queries,
        )
        rows.append(row(size, system, f"{args.clients} clients", times, wall))
        print(f"  {rows[-1]}", flush=True)

    def restart() -> str:
        db.server.stop()
        db.info = db.server.start()
        return db.url(name)

    for system in ("product", "seed A") if args.cold_queries > 0 else ():
        for after_prewarm in (False, True):
            times, waited = cold(
                restart, system, user_id, questions, args.cold_queries, after_prewarm=after_prewarm
            )
            condition = (
                "restart, at once"
                if waited is None
                else f"restart, cache read back ({waited:.1f} s)"
            )
            rows.append(row(size, system, condition, times, None))
            print(f"  {rows[-1]}", flush=True)
    return rows
