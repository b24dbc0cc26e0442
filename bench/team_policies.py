"""What the team's row-level security costs a search: the same pool, the same queries, the
same person's search, once through the person's own role (the policies apply) and once through
the schema's owner (policies bypassed), interleaved query by query in one run, so a loaded
machine slows both sides alike.

The pool: ``--people`` persons with ``--rows`` turns in all, spread over four projects each, one
of which every person shares (``team share``). It is written with ``COPY`` in chunks, the turns
table's secondary indexes dropped during the load and built after it (what a 1M-row pool needs
to be made in minutes). The team is set up by the product's own ``team init`` (which marks the
search operators LEAKPROOF on this superuser-run server) and ``team add``. Each timed search is
a person's search through :func:`agents_memory.store.search.search_memories` with their shared
view (what ``search_memory`` runs), full-text (no query vector: embedding a pool this size is
another bench's subject; the vector arm's statement is filtered by the same policies).

``--keep DIR`` keeps the cluster in DIR and reuses a pool already built there (migrations are
still applied, so a new one is measured on the same rows); ``--explain`` prints one query's
``EXPLAIN (ANALYZE, BUFFERS)`` as each role.

    python -m bench.team_policies [--rows 100000] [--people 10] [--queries 60] [--keep DIR]
"""

from __future__ import annotations

import argparse
import io
import random
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from agents_memory.ops import team as team_ops
from agents_memory.store import migrate, team
from agents_memory.store.search import SearchFilters, SearchTuning, search_memories
from bench import common, synth

PROJECTS_EACH = 4
CHUNK = 50_000
READY = "team_policies pool ready"
ROLE = "bench_person"


def _people(conn: psycopg.Connection[Any], people: int) -> tuple[list[int], dict[int, list[int]]]:
    ids: list[int] = []
    tags: dict[int, list[int]] = {}
    for i in range(people):
        row = conn.execute(
            "INSERT INTO users (user_name) VALUES (%s) RETURNING user_id", (f"p{i}",)
        ).fetchone()
        assert row is not None
        uid = int(row[0])
        ids.append(uid)
        tags[uid] = []
        for k in range(PROJECTS_EACH):
            tag = conn.execute(
                "INSERT INTO project_tags (name, kind) VALUES (%s, 'project') RETURNING id",
                (f"proj-{uid}-{k}",),
            ).fetchone()
            assert tag is not None
            tags[uid].append(int(tag[0]))
    return ids, tags


def _chunks(
    rows: int, ids: list[int], tags: dict[int, list[int]], rng: random.Random
) -> Iterator[str]:
    buffer = io.StringIO()
    for n in range(rows):
        uid = ids[n % len(ids)]
        text = synth.text(rng, n).replace("\\", " ").replace("\t", " ").replace("\n", " ")
        buffer.write(
            f"{uid}\tclaude-code\t{'user' if n % 2 else 'assistant'}\t{text}\t"
            f"{rng.choice(tags[uid])}\ts{n // 20}\t2026-{1 + n % 11:02d}-{1 + n % 27:02d}"
            f" {n % 24:02d}:00:00+00\n"
        )
        if (n + 1) % CHUNK == 0:
            yield buffer.getvalue()
            buffer = io.StringIO()
    if buffer.tell():
        yield buffer.getvalue()


def build_pool(conn: psycopg.Connection[Any], rows: int, people: int, seed: int) -> list[int]:
    """``people`` persons (user ids returned) and ``rows`` turns; each shares one project."""
    rng = random.Random(seed)
    ids, tags = _people(conn, people)
    indexes = conn.execute(
        "SELECT i.indexname, i.indexdef FROM pg_indexes i"
        " JOIN pg_class c ON c.relname = i.indexname AND c.relkind = 'i'"
        " JOIN pg_index x ON x.indexrelid = c.oid"
        " WHERE i.tablename = 'memory' AND i.schemaname = current_schema()"
        " AND NOT x.indisprimary AND NOT x.indisunique"
    ).fetchall()
    for name, _ in indexes:
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    with (
        conn.cursor() as cur,
        cur.copy(
            "COPY memory (user_id, agent_platform, role, message, p_tag_id, session_id,"
            " message_at) FROM STDIN"
        ) as copy,
    ):
        for chunk in _chunks(rows, ids, tags, rng):
            copy.write(chunk)
    conn.execute("SET maintenance_work_mem = '512MB'")
    for _, definition in indexes:
        conn.execute(str(definition).encode())
    for uid in ids:
        team.share(conn, uid, tags[uid][0])
    conn.execute("VACUUM ANALYZE")
    conn.execute(
        sql.SQL("COMMENT ON DATABASE {} IS {}").format(
            sql.Identifier(_database(conn)), sql.Literal(f"{READY} {rows} {people} {seed}")
        )
    )
    return ids


def _database(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT current_database()").fetchone()
    assert row is not None
    return str(row[0])


def _ready(bench: common.BenchDB, dbname: str, marker: str) -> bool:
    with psycopg.connect(bench.info.conninfo("postgres"), autocommit=True) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            (dbname,),
        ).fetchone()
    return row is not None and row[0] == marker


_EXPLAIN = {
    "session_preload_libraries": "auto_explain",
    "auto_explain.log_min_duration": "0",
    "auto_explain.log_analyze": "on",
    "auto_explain.log_buffers": "on",
    "auto_explain.log_level": "warning",
}
"""``--explain``: each statement's plan with its run, sent to the client as a warning (the
search lowers ``client_min_messages`` to warnings; a member may not run ``LOAD``, so the
superuser sets these on both roles)."""


def _pool(bench: common.BenchDB, args: argparse.Namespace) -> tuple[str, int, str]:
    """The pool's URL (built, or reused from ``--keep``), the measured person and its role's
    password (the role made afresh each run)."""
    dbname = f"team_{args.rows}_{args.people}_{args.seed}"
    if _ready(bench, dbname, f"{READY} {args.rows} {args.people} {args.seed}"):
        print(f"reusing the pool {dbname} in {bench.base}", flush=True)
        url = bench.url(dbname)
        with psycopg.connect(url, autocommit=True) as conn:
            migrate.migrate(conn)
    else:
        url = bench.create_database(dbname, vector=False)
        with psycopg.connect(url, autocommit=True) as conn:
            took, _ = common.timed(build_pool, conn, args.rows, args.people, args.seed)
        print(f"built {args.rows:,} turns in {took:.0f} s", flush=True)
    password = secrets.token_urlsafe(16)
    with psycopg.connect(url, autocommit=True) as owner:
        ready = team_ops.init(owner)
        if ready.admin_statements:
            raise SystemExit(f"search operators not LEAKPROOF: {ready.admin_statements}")
        owner.execute("DELETE FROM team_members WHERE db_role = %s", (ROLE,))
        owner.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(ROLE)))
        team.add_member(owner, ROLE, "person", password=password, user_name="p0")
        row = owner.execute(
            "SELECT user_id FROM team_members WHERE db_role = %s", (ROLE,)
        ).fetchone()
        assert row is not None
        owner_role = owner.execute("SELECT current_user").fetchone()
        assert owner_role is not None
        for role in (ROLE, str(owner_role[0])):
            for key, value in _EXPLAIN.items():
                setting = (
                    sql.SQL("SET {} = {}").format(sql.SQL(key), sql.Literal(value))
                    if args.explain
                    else sql.SQL("RESET {}").format(sql.SQL(key))
                )
                owner.execute(sql.SQL("ALTER ROLE {} ").format(sql.Identifier(role)) + setting)
    return url, int(row[0]), password


def _search(conn: psycopg.Connection[Any], user_id: int, query: str) -> float:
    filters = SearchFilters(limit=10, shared=team.shared_view(conn, user_id))
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
    return took


def _duration(plan: str) -> float:
    """The run time auto_explain reports first in ``plan`` (``duration: 12.3 ms``)."""
    found = re.match(r"duration: ([0-9.]+) ms", plan)
    return float(found.group(1)) if found else 0.0


def _collector(into: list[str]) -> Any:
    def collect(diagnostic: psycopg.errors.Diagnostic) -> None:
        into.append(diagnostic.message_primary or "")

    return collect


def _explain(url: str, password: str, person: int, query: str) -> None:
    for name, conninfo in (
        ("owner", url),
        ("person", make_conninfo(url, user=ROLE, password=password)),
    ):
        plans: list[str] = []
        with psycopg.connect(conninfo) as conn:
            conn.add_notice_handler(_collector(plans))
            _search(conn, person, query)
        print(f"--- {name}: the search's slowest statement ---")
        print(max(plans, key=_duration) if plans else "(none)")


def measure(
    url: str, password: str, person: int, queries: list[str]
) -> tuple[list[float], list[float]]:
    """Each query as the owner and as the person, in alternating order, after a warm-up."""
    base: list[float] = []
    policed: list[float] = []
    with (
        psycopg.connect(url) as as_owner,
        psycopg.connect(make_conninfo(url, user=ROLE, password=password)) as as_person,
    ):
        for query in queries[:5]:
            _search(as_owner, person, query)
            _search(as_person, person, query)
        for n, query in enumerate(queries):
            if n % 2:
                policed.append(_search(as_person, person, query))
                base.append(_search(as_owner, person, query))
            else:
                base.append(_search(as_owner, person, query))
                policed.append(_search(as_person, person, query))
    return base, policed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--people", type=int, default=10)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    vocabulary = [w for w in synth._WORDS if len(w) > 3]
    queries = [" ".join(rng.sample(vocabulary, rng.choice((1, 2, 3)))) for _ in range(args.queries)]
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    with common.bench_db(keep=args.keep) as bench:
        url, person, password = _pool(bench, args)
        if args.explain:
            _explain(url, password, person, queries[0])
            return
        head = common.header(common.command_line())  # the machine and load at the start
        started = common.load_avg()
        base_s, policed_s = measure(url, password, person, queries)
        ended = common.load_avg()
    base, policed = common.summary_ms(base_s), common.summary_ms(policed_s)
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
        head + f"\nPool: {args.rows:,} turns, {args.people} people, {PROJECTS_EACH} projects each,"
        " one shared by each person; full-text searches of one person with their shared view,"
        f" {args.queries} queries, the two roles interleaved query by query."
        f" Load average (1/5 min) while measuring: {started} at start, {ended} at the end.\n\n"
        + common.table(["searched as", "p50 ms", "p95 ms", "p95 ratio"], rows)
    )
    print(body)
    if not args.no_write:
        common.write_section("Team: row-level security's cost to search", body)


if __name__ == "__main__":
    main()
