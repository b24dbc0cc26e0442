"""Session-start hook latency: process start to brief printed (SPEC §12: p95 ≤ 300 ms with a
warm database), and with the database down or hung (must print nothing within the budget).

    python -m bench.hook_latency [--runs 30] [--turns 2000]

Each run is ``memory-capture hook session-start --platform claude-code`` as a new process with
Claude Code's SessionStart JSON on stdin, timed from spawn to exit (stdout read to the end).
Baselines in the same run: ``python -c pass`` and ``python -c "import psycopg"``. Beside
them, ``mcp-agents-memory search`` as a new process, searching itself and answered by the
running capture daemon over the same socket. An ``-X importtime`` pass lists the heaviest
imports.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from bench import common, synth

PY = sys.executable
SEARCH = [str(Path(PY).with_name("mcp-agents-memory")), "search", "turn about caching"]
HOOK = [
    str(Path(PY).with_name("memory-capture")),
    "hook",
    "session-start",
    "--platform",
    "claude-code",
]


def _event(home: Path) -> str:
    return json.dumps(
        {
            "session_id": "00000000-0000-4000-8000-000000000001",
            "transcript_path": str(home / ".claude/projects/-work-proj/new.jsonl"),
            "cwd": "/work/proj",
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    )


def _time(argv: list[str], env: dict[str, str], stdin: str, runs: int) -> tuple[list[float], int]:
    """Wall times of ``runs`` processes and how many printed something."""
    times, printed = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run(
            argv, input=stdin, env=env, capture_output=True, text=True, check=False
        )
        times.append(time.perf_counter() - started)
        printed += bool(proc.stdout.strip())
    return times, printed


def _hung_server() -> tuple[socket.socket, int]:
    """A TCP listener that accepts and never answers (a hung database)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return srv, srv.getsockname()[1]


def importtime(env: dict[str, str], stdin: str) -> list[tuple[str, float]]:
    proc = subprocess.run(
        [PY, "-X", "importtime", *HOOK],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    cumulative: dict[str, float] = defaultdict(float)
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self, cum, raw = line[len("import time:") :].split("|")
        depth = (len(raw) - len(raw.lstrip()) - 1) // 2
        if depth <= 1:
            name = raw.strip()
            cumulative[name] = max(cumulative[name], int(cum) / 1000)
    return sorted(cumulative.items(), key=lambda kv: kv[1], reverse=True)[:15]


def _measure(
    label: str, argv: list[str], env: dict[str, str], stdin: str, runs: int
) -> tuple[object, ...]:
    _time(argv, env, stdin, 3)  # warm the page cache and the server
    load = common.load_avg()
    times, printed = _time(argv, env, stdin, runs)
    s = common.summary_ms(times)
    row = (label, s["n"], s["p50"], s["p95"], s["max"], printed, load)
    print(row, flush=True)
    return row


def _brief_build(settings: Settings, runs: int) -> tuple[object, ...]:
    """The brief builder alone, in process, on a warm connection (SPEC §8: < 100 ms)."""
    from agents_memory.recall.brief import BriefRequest, build_brief
    from agents_memory.store import database
    from agents_memory.store.memories import ensure_user

    request = BriefRequest(
        platform="claude-code",
        model=None,
        device=settings.device_name,
        cwd="/work/proj",
        max_chars=9500,
    )
    with database.connect(database.locate_database(settings)) as conn:
        user_id = ensure_user(conn, settings.user_name)
        build_brief(conn, settings, user_id, request)
        load = common.load_avg()
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            build_brief(conn, settings, user_id, request)
            times.append(time.perf_counter() - started)
            conn.rollback()
    s = common.summary_ms(times)
    row = (
        "brief build alone (in process, warm connection)",
        s["n"],
        s["p50"],
        s["p95"],
        s["max"],
        runs,
        load,
    )
    print(row, flush=True)
    return row


@contextmanager
def _capture_daemon(home: Path, env: dict[str, str]) -> Iterator[None]:
    """``memory-capture run`` serving briefs on its socket, for as long as the block runs."""
    proc = subprocess.Popen(
        [str(Path(PY).with_name("memory-capture")), "run"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sock = home / ".local" / "state" / "mcp-agents-memory" / "brief.sock"
    if "XDG_STATE_HOME" in env:
        sock = Path(env["XDG_STATE_HOME"]) / "mcp-agents-memory" / "brief.sock"
    deadline = time.monotonic() + 120
    try:
        while not sock.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def seed_history(db: common.BenchDB, turns: int) -> None:
    """The bench database with ``turns`` synthetic Claude Code turns, backfilled without
    vectors; the transcripts are removed so that the daemon has nothing to capture."""
    db.create_database()
    synth.write_platform(db.home, "claude-code", turns)
    backfill(db.settings(embedding_backend="none"), Catalog(all_adapters(), db.home))
    shutil.rmtree(db.home / ".claude", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="session-start hook latency")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--turns", type=int, default=2000, help="history in the database")
    args = parser.parse_args()
    start_header = common.header(common.command_line())
    rows = []
    with common.bench_db() as db:
        seed_history(db, args.turns)
        env = db.env(EMBEDDING_BACKEND="none")
        stdin = _event(db.home)
        for label, argv, e in (
            ("`python -c pass` (baseline)", [PY, "-c", "pass"], env),
            ('`python -c "import psycopg"` (baseline)', [PY, "-c", "import psycopg"], env),
            ("hook, warm database, no daemon (built in the hook)", HOOK, env),
            ("`mcp-agents-memory search`, no daemon (searches itself)", SEARCH, env),
        ):
            rows.append(_measure(label, argv, e, stdin, args.runs))
        with _capture_daemon(db.home, env):
            rows.append(
                _measure(
                    "hook, warm database, capture daemon running (installed set-up)",
                    HOOK,
                    env,
                    stdin,
                    args.runs,
                )
            )
            rows.append(
                _measure(
                    "`mcp-agents-memory search`, capture daemon running (asks it)",
                    SEARCH,
                    env,
                    "",
                    args.runs,
                )
            )
        imports = importtime(env, stdin)
        rows.append(_brief_build(db.settings(embedding_backend="none"), args.runs * 5))
        down = db.env(
            DATABASE_URL="postgresql://postgres@127.0.0.1:9/bench", EMBEDDING_BACKEND="none"
        )
        srv, port = _hung_server()
        hung = db.env(
            DATABASE_URL=f"postgresql://postgres@127.0.0.1:{port}/bench", EMBEDDING_BACKEND="none"
        )
        for label, e in (
            ("hook, database down (refused)", down),
            ("hook, database hung (accepts, never answers)", hung),
        ):
            load = common.load_avg()
            times, printed = _time(HOOK, e, stdin, max(5, args.runs // 3))
            s = common.summary_ms(times)
            rows.append((label, s["n"], s["p50"], s["p95"], s["max"], printed, load))
            print(rows[-1], flush=True)
        srv.close()
    body = "\n".join(
        [
            start_header,
            f"Database: {args.turns:,} synthetic Claude Code turns in a private embedded server;"
            " EMBEDDING_BACKEND=none (the brief does not embed); HOOK_TIMEOUT_MS default 1500."
            " Bar: p95 ≤ 300 ms warm; down/hung: nothing printed within the budget.",
            "",
            common.table(
                ("process", "n", "p50 ms", "p95 ms", "max ms", "runs that printed", "load 1/5"),
                rows,
            ),
            "",
            "Heaviest imports of one hook run (`python -X importtime`, cumulative ms, depth ≤ 1):",
            "",
            common.table(("module", "cumulative ms"), imports),
        ]
    )
    print(body)
    common.write_section("Session-start hook latency", body)


if __name__ == "__main__":
    main()
