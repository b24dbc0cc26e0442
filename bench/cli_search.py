"""`mcp-agents-memory search` through the capture daemon with the local embedding model (issue
31: warm p95 ≤ 150 ms at 10k rows, the first call ≤ 0.5 s because the daemon keeps its model
ready), timed from spawn to exit, beside ``python -c pass`` in the same run.

    python -m bench.cli_search [--turns 10000] [--runs 30] [--pool synthetic|coding]

The history is synthetic Claude Code turns, backfilled without vectors (the Cold Path is off
so that nothing else runs while the searches are timed; the query is still embedded by the
daemon's model and the vector arm still runs). "First call" is the first search after the
daemon's socket appears, so it includes whatever the daemon has not loaded yet.

``--pool coding`` seeds the coding set's 5,200 turns first (``bench.codeset``: 40 projects,
Claude Code and Codex transcripts, the pool issue 36 measures on, with a vocabulary whose words
fall off as real text's do; the synthetic pool's ~77 words are each in about a third of its
turns), then synthetic turns up to ``--turns``, and adds a row timing the coding set's own
questions, a different one each run.

The command is the installed console script, run as a user runs it: a plain ``search`` is
answered by the daemon through the entry point's standard-library fast path
(:mod:`agents_memory.cli.fast_search`); rows time the same search through the full click
command (as before the fast path, the daemon still searching) and ``search --help`` in the same
run, for comparison.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import time
from pathlib import Path

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from bench import common
from bench.codeset.generate import generate
from bench.codeset.generate import write as write_codeset
from bench.hook_latency import PY, _capture_daemon, _time, seed_history

SEARCH = [str(Path(PY).with_name("mcp-agents-memory")), "search", "turn about caching"]
MATCHING = [*SEARCH[:2], "redaction threshold"]
"""A search whose words the synthetic turns hold (``SEARCH``'s match none of them, so it takes
the search's slowest way: no full-text hit, no vector stored, the word-ILIKE fallback)."""
HELP = [*SEARCH[:2], "--help"]
POOLS = {
    "synthetic": "synthetic Claude Code turns",
    "coding": "turns: the coding set's 5,200 (bench.codeset) and synthetic Claude Code ones",
}
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


def _seed_coding(db: common.BenchDB, turns: int) -> list[str]:
    """The coding set's turns, then synthetic ones up to ``turns``; the set's questions."""
    codeset = generate()
    write_codeset(db.home, codeset)
    seed_history(db, max(0, turns - codeset.turns))  # creates the database, backfills it all
    if turns <= codeset.turns:
        backfill(db.settings(embedding_backend="none"), Catalog(all_adapters(), db.home))
    for client in (".claude", ".codex"):
        shutil.rmtree(db.home / client, ignore_errors=True)
    return [q.text for q in codeset.questions]


def _time_each(questions: list[str], env: dict[str, str], runs: int) -> list[float]:
    """One search per run, each with the next question."""
    times = []
    for i in range(runs):
        argv = [*SEARCH[:2], questions[i % len(questions)]]
        times += _time(argv, env, "", 1)[0]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description="CLI search through the daemon")
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--pool", choices=("synthetic", "coding"), default="synthetic")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--settle", type=float, default=0.0, help="seconds before the first")
    args = parser.parse_args()
    start_header = common.header(common.command_line())
    rows = []
    questions: list[str] = []
    with common.bench_db() as db:
        if args.pool == "coding":
            questions = _seed_coding(db, args.turns)
        else:
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
            if questions:
                rows.append(
                    _row(
                        "warm searches, the coding set's questions",
                        _time_each(questions, env, args.runs),
                    )
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
            f"Database: {args.turns:,} {POOLS[args.pool]} (no vectors) in a private"
            " embedded server; the capture daemon with EMBEDDING_BACKEND=local, Cold Path off."
            " Bar: warm p95 ≤ 150 ms, first ≤ 500 ms.",
            "",
            common.table(("process", "n", "p50 ms", "p95 ms", "max ms", "load 1/5"), rows),
        ]
    )
    print(body)
    title = "CLI search through the daemon"
    common.write_section(title if args.pool == "synthetic" else f"{title} (coding pool)", body)


if __name__ == "__main__":
    main()
