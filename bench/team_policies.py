"""What the team's row-level security costs a search: the same pool, the same queries, the
same person's search, once through the person's own role (the policies apply) and once through
the schema's owner (policies bypassed), side by side in one run.

The pool: ``--people`` persons with ``--rows`` turns in all, spread over four projects each, a
quarter of which every person shares (``team share``). Each timed search is a person's search
through :func:`agents_memory.store.search.search_memories` with their shared view (what
``search_memory`` runs), full-text (no query vector: embedding a pool this size is another
bench's subject; the vector arm's statement is filtered by the same policies).

    python -m bench.team_policies [--rows 100000] [--people 10] [--queries 60]
"""

from __future__ import annotations

import argparse
import io
import random
import secrets
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

from agents_memory.store import team
from agents_memory.store.search import SearchFilters, SearchTuning, search_memories
from bench import common, synth

PROJECTS_EACH = 4


def build_pool(conn: psycopg.Connection[Any], rows: int, people: int, seed: int) -> list[int]:
    """``people`` persons (user ids returned) and ``rows`` turns; each shares one project."""
    rng = random.Random(seed)
    ids = [
        int(r[0])
        for r in (
            conn.execute(
                "INSERT INTO users (user_name) VALUES (%s) RETURNING user_id", (f"p{i}",)
            ).fetchone()
            for i in range(people)
        )
        if r is not None
    ]
    tags: dict[int, list[int]] = {}
    for uid in ids:
        tags[uid] = []
        for k in range(PROJECTS_EACH):
            row = conn.execute(
                "INSERT INTO project_tags (name, kind) VALUES (%s, 'project') RETURNING id",
                (f"proj-{uid}-{k}",),
            ).fetchone()
            assert row is not None
            tags[uid].append(int(row[0]))
    buffer = io.StringIO()
    for n in range(rows):
        uid = ids[n % people]
        text = synth.text(rng, n).replace("\\", " ").replace("\t", " ").replace("\n", " ")
        buffer.write(
            f"{uid}\tclaude-code\t{'user' if n % 2 else 'assistant'}\t{text}\t"
            f"{rng.choice(tags[uid])}\ts{n // 20}\t2026-{1 + n % 11:02d}-{1 + n % 27:02d}"
            f" {n % 24:02d}:00:00+00\n"
        )
    with (
        conn.cursor() as cur,
        cur.copy(
            "COPY memory (user_id, agent_platform, role, message, p_tag_id, session_id,"
            " message_at) FROM STDIN"
        ) as copy,
    ):
        copy.write(buffer.getvalue())
    for uid in ids:
        team.share(conn, uid, tags[uid][0])
    conn.execute("ANALYZE")
    return ids


def timed_searches(conn: psycopg.Connection[Any], user_id: int, queries: list[str]) -> list[float]:
    shared = team.shared_view(conn, user_id)
    filters = SearchFilters(limit=10, shared=shared)
    seconds = []
    for query in queries:
        took, _ = common.timed(
            search_memories,
            conn,
            user_id,
            query=query,
            query_vector=None,
            filters=filters,
            tuning=SearchTuning(),
        )
        conn.rollback()
        seconds.append(took)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--people", type=int, default=10)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with common.bench_db() as bench:
        url = bench.create_database(vector=False)
        with psycopg.connect(url, autocommit=True) as owner:
            ids = build_pool(owner, args.rows, args.people, args.seed)
            team.init(owner)
            password = secrets.token_urlsafe(16)
            person = ids[0]
            owner.execute("DROP ROLE IF EXISTS bench_person")
            team.add_member(owner, "bench_person", "person", password=password, user_name="p0")
        vocabulary = [w for w in synth._WORDS if len(w) > 3]
        queries = [
            " ".join(rng.sample(vocabulary, rng.choice((1, 2, 3)))) for _ in range(args.queries)
        ]
        with (
            psycopg.connect(url) as as_owner,
            psycopg.connect(
                make_conninfo(url, user="bench_person", password=password)
            ) as as_person,
        ):
            timed_searches(as_owner, person, queries[:5])  # warm both
            timed_searches(as_person, person, queries[:5])
            base = common.summary_ms(timed_searches(as_owner, person, queries))
            policed = common.summary_ms(timed_searches(as_person, person, queries))
    rows = [
        ("owner role (policies bypassed)", base["p50"], base["p95"], 1.0),
        (
            "person's role (policies on)",
            policed["p50"],
            policed["p95"],
            policed["p95"] / base["p95"],
        ),
    ]
    body = (
        common.header(common.command_line())
        + f"\nPool: {args.rows:,} turns, {args.people} people, {PROJECTS_EACH} projects each,"
        " one shared by each person; full-text searches of one person with their shared view.\n\n"
        + common.table(["searched as", "p50 ms", "p95 ms", "p95 ratio"], rows)
    )
    print(body)
    common.write_section("Team: row-level security's cost to search", body)


if __name__ == "__main__":
    main()
