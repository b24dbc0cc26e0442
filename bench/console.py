"""The web console's page render times at 10k and 1M turns: the timeline's first page, a
search and a session page, each as a whole HTTP request (guard, page, templates) against the
store query alone.

Run: ``python -m bench.console [--rows 10000 1000000] [--write]`` (``--write`` replaces the
"Console render times" section of bench/RESULTS.md). Rows are synthetic (100-turn sessions
over five clients, words from a small vocabulary), loaded with one INSERT … SELECT.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from starlette.testclient import TestClient

from agents_memory.capture.discovery import Catalog
from agents_memory.console.app import create_app
from agents_memory.console.build import open_console
from agents_memory.console.security import Guard
from agents_memory.store.owner import console as console_store
from agents_memory.store.owner.console import TimelineFilters
from agents_memory.store.search import SearchFilters, SearchTuning, search_memories
from bench import common

REPEAT = 15
VOCABULARY = (
    "deploy release branch migration schema index vacuum pgvector embedding tagger brief session"
    " capture daemon cursor tombstone export import console timeline search pause resume profile"
    " librarian cluster summary alias project rust python typescript docker"
)
WORDS = tuple(VOCABULARY.split())
QUERY = "vacuum tombstone"


def load(url: str, rows: int) -> tuple[str, str]:
    """``rows`` synthetic turns for user ``bench``; one session's platform and id."""
    import psycopg

    with psycopg.connect(url) as conn:
        user = conn.execute(
            "INSERT INTO users (user_name) VALUES ('bench') RETURNING user_id"
        ).fetchone()
        assert user
        conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message, session_id, device_name,"
            " agent_model, message_at, tag_processed)"
            " SELECT %(u)s, (ARRAY['claude-code','codex-cli','gemini-cli','grok','antigravity'])"
            "[1 + (n / 100) %% 5], CASE WHEN n %% 2 = 0 THEN 'user' ELSE 'assistant' END,"
            " (SELECT string_agg((%(w)s::text[])[1 + ((n * 7 + k * 13) %% %(nw)s)], ' ')"
            "  FROM generate_series(1, 40) k) || ' turn ' || n,"
            " 's-' || (n / 100), 'bench-device', 'model-' || (n %% 3),"
            " now() - make_interval(secs => %(rows)s - n), true"
            " FROM generate_series(1, %(rows)s) n",
            {"u": user[0], "w": list(WORDS), "nw": len(WORDS), "rows": rows},
        )
        conn.execute("ANALYZE memory")
        block = (rows // 2) // 100
        platforms = ("claude-code", "codex-cli", "gemini-cli", "grok", "antigravity")
        return platforms[block % 5], f"s-{block}"


def median_ms(fn: Callable[[], Any]) -> float:
    fn()  # warm the caches and the plan
    times = []
    for _ in range(REPEAT):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def measure(rows: int) -> list[tuple[str, str, str, str]]:
    """Long because it is the whole run for one size: load, open, time six things."""
    with common.bench_db() as bench:
        url = bench.create_database("bench", vector=False)
        started = time.perf_counter()
        platform, session = load(url, rows)
        print(f"loaded {rows:,} turns in {time.perf_counter() - started:.0f} s", flush=True)
        settings = bench.settings(embedding_backend="none")
        console = open_console(settings, Catalog([], bench.home), bench.base / "none.pid")
        guard = Guard(port=8765)
        try:
            with TestClient(create_app(console, guard), base_url="http://127.0.0.1:8765") as client:
                client.get(f"/login?token={guard.login_token}")
                with console.state.pool.connection() as conn:
                    uid = console.user_id
                    baseline = {
                        "timeline first page": median_ms(
                            lambda: console_store.timeline_page(
                                conn, uid, TimelineFilters(), before=None, limit=50
                            )
                        ),
                        "search": median_ms(
                            lambda: search_memories(
                                conn,
                                uid,
                                query=QUERY,
                                query_vector=None,
                                filters=SearchFilters(limit=20),
                                tuning=SearchTuning(),
                            )
                        ),
                        "session page": median_ms(
                            lambda: console_store.session_turns(conn, uid, platform, session)
                        ),
                    }
                pages = {
                    "timeline first page": "/timeline",
                    "search": f"/search?q={QUERY.replace(' ', '+')}",
                    "session page": f"/session?platform={platform}&id={session}",
                }
                out = []
                for name, path in pages.items():
                    assert client.get(path).status_code == 200, path
                    page = median_ms(lambda path=path: client.get(path))
                    out.append((f"{rows:,}", name, f"{page:.1f}", f"{baseline[name]:.1f}"))
                return out
        finally:
            console.state.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 1_000_000])
    parser.add_argument("--write", action="store_true", help="Write bench/RESULTS.md.")
    args = parser.parse_args()
    header = common.header(common.command_line())
    found = [row for rows in args.rows for row in measure(rows)]
    table = common.table(("turns", "page", "page ms (median)", "store query ms (median)"), found)
    body = (
        f"{header}\nWhole HTTP request through the guard and the templates (Starlette's test "
        f"client, {REPEAT} runs after one warm-up) against the store call alone. Full-text "
        f"search (no embedding backend); search for {QUERY!r}, 20 hits; a 100-turn session.\n\n"
        f"{table}\n"
    )
    print(body)
    if args.write:
        common.write_section("Console render times", body)


if __name__ == "__main__":
    main()
