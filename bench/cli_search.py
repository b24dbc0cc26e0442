"""`mcp-agents-memory search` through the capture daemon with the local embedding model (issue
31: warm p95 ≤ 150 ms at 10k rows, the first call ≤ 0.5 s because the daemon keeps its model
ready), timed from spawn to exit, beside ``python -c pass`` in the same run.

    python -m bench.cli_search [--turns 10000] [--runs 30]

The history is synthetic Claude Code turns, backfilled without vectors (the Cold Path is off
so that nothing else runs while the searches are timed; the query is still embedded by the
daemon's model and the vector arm still runs). "First call" is the first search after the
daemon's socket appears, so it includes whatever the daemon has not loaded yet.

The command is the installed console script, run as a user runs it: a plain ``search`` is
answered by the daemon through the entry point's standard-library fast path
(:mod:`agents_memory.cli.fast_search`); rows time the same search through the full click
command (as before the fast path, the daemon still searching) and ``search --help`` in the same
run, for comparison.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

from bench import common
from bench.hook_latency import PY, _capture_daemon, _time, seed_history

SEARCH = [str(Path(PY).with_name("mcp-agents-memory")), "search", "turn about caching"]
MATCHING = [*SEARCH[:2], "redaction threshold"]
"""A search whose words the synthetic turns hold (``SEARCH``'s match none of them, so it takes
the search's slowest way: no full-text hit, no vector stored, the word-ILIKE fallback)."""
HELP = [*SEARCH[:2], "--help"]
FULL = [PY, "-c", "from agents_memory.cli.memory import main; main()", *SEARCH[1:]]
"""The same search through the full click command (no fast path): the command as before, its
search still answered by the daemon."""
ALONE = """
import json, sys, time
from agents_memory.cli import fast_search
times = []
for _ in range(int(sys.argv[1])):
    started = time.perf_counter()
    assert fast_search._ask(sys.argv[2:]) is not None, "the daemon did not answer"
    times.append(time.perf_counter() - started)
print(json.dumps(times))
"""
"""The daemon's part alone: the same request from one warm process, again and again."""


def _row(label: str, times: list[float]) -> tuple[object, ...]:
    s = common.summary_ms(times)
    row = (label, s["n"], s["p50"], s["p95"], s["max"], common.load_avg())
    print(row, flush=True)
    return row


def _alone(env: dict[str, str], runs: int) -> list[float]:
    argv = [PY, "-c", ALONE, str(runs), *SEARCH[1:]]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return [float(t) for t in json.loads(done.stdout)]


def main() -> None:
    parser = argparse.ArgumentParser(description="CLI search through the daemon")
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--settle", type=float, default=0.0, help="seconds before the first")
    args = parser.parse_args()
    start_header = common.header(common.command_line())
    rows = []
    with common.bench_db() as db:
        seed_history(db, args.turns)
        env = db.env(EMBEDDING_BACKEND="local", COLD_PATH_ENABLED="false")
        rows.append(_row("`python -c pass` (baseline)", _time([PY, "-c", "pass"], env, "", 10)[0]))
        with _capture_daemon(db.home, env):
            time.sleep(args.settle)
            rows.append(_row("first search after the daemon's start", _time(SEARCH, env, "", 1)[0]))
            rows.append(_row("warm searches", _time(SEARCH, env, "", args.runs)[0]))
            rows.append(
                _row("warm searches, words the turns hold", _time(MATCHING, env, "", args.runs)[0])
            )
            rows.append(_row("the daemon's answer alone (warm client)", _alone(env, args.runs)))
            rows.append(_row("the full command's search (before)", _time(FULL, env, "", 10)[0]))
            rows.append(_row("`search --help` (the full command)", _time(HELP, env, "", 10)[0]))
        rows.append(
            _row("`python -c pass` (baseline, after)", _time([PY, "-c", "pass"], env, "", 10)[0])
        )
    body = "\n".join(
        [
            start_header,
            f"Database: {args.turns:,} synthetic Claude Code turns (no vectors) in a private"
            " embedded server; the capture daemon with EMBEDDING_BACKEND=local, Cold Path off."
            " Bar: warm p95 ≤ 150 ms, first ≤ 500 ms.",
            "",
            common.table(("process", "n", "p50 ms", "p95 ms", "max ms", "load 1/5"), rows),
        ]
    )
    print(body)
    common.write_section("CLI search through the daemon", body)


if __name__ == "__main__":
    main()
