"""Backfill throughput with actions against the code before actions, on the same files
(issue 28: ≥ 0.8x).

    python -m bench.actions_ingest [--sessions 400] [--repeat 3] [--base dad5d5b] [--profile]

The tool-heavy set of :mod:`bench.actionset` (Claude Code and Codex CLI sessions in their real
formats, about one action per turn) is written under a temp HOME; each round imports it with
``memory-capture backfill`` into a fresh database twice, alternately: once with this tree's
code, once with the tree of ``--base`` (the last commit before actions were captured,
extracted with ``git archive`` into a temp dir), each in its own process with only its tree on
``PYTHONPATH``. Turns per second are the turns stored over the backfill's own seconds; the
ratio is this tree's over the base's, per round (the same machine load for both).
``--profile`` prints a cProfile of one backfill with this tree (cumulative, the top lines).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import psycopg

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from bench import actionset, common

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "transcripts"
TOOL_HEAVY = {
    "claude-code/spotter_v2.1.38_tool_heavy.jsonl": "d6e0bada-1959-4eec-a9d2-0bfade768d8f",
    "claude-code/vct_v1.0.95_tools_thinking_unicode.jsonl": None,
    "claude-code/spotter_v2.1.38_parent_with_agent_progress.jsonl": None,
    "codex/vct_v0.39.0_vscode_unicode.jsonl": None,
}
"""The real tool-heavy fixtures (``None``: its session id is read from its first record)."""
_YEAR = re.compile(r"\b20[12]\d-(?=\d\d-\d\d)")


def _session_of(text: str) -> str:
    for line in text.splitlines():
        record = json.loads(line)
        found = record.get("sessionId") or (record.get("payload") or {}).get("id")
        if isinstance(found, str) and found:
            return found
    raise ValueError("no session id")


def fixture_copies(home: Path, copies: int) -> int:
    """``copies`` of each tool-heavy fixture where its client keeps it, each under a session
    id of its own and with its times moved to a year of its own (replaced everywhere in the
    copy: the same message at the same time in two sessions is stored once); returns the bytes
    written."""
    size = 0
    for name, known in TOOL_HEAVY.items():
        text = (FIXTURES / name).read_text(encoding="utf-8")
        sid = known or _session_of(text)
        for i in range(copies):
            new = str(uuid.UUID(int=hash((name, i)) & (2**128 - 1), version=4))
            if name.startswith("claude-code/"):
                path = home / f".claude/projects/-work-copy{i}/{new}.jsonl"
            else:
                path = home / f".codex/sessions/2026/02/0{1 + i % 9}/rollout-{i:04d}-{new}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            data = _YEAR.sub(f"{1980 + i}-", text.replace(sid, new))
            path.write_text(data, encoding="utf-8")
            size += len(data.encode())
    return size


_RUN = (
    "import json, sys\n"
    "from agents_memory.adapters import all_adapters\n"
    "from agents_memory.capture.backfill import backfill\n"
    "from agents_memory.capture.discovery import Catalog\n"
    "from agents_memory.config import load_settings\n"
    "from pathlib import Path\n"
    "s = load_settings(env_file=Path(sys.argv[2]), database_url=sys.argv[1],"
    " embedding_backend='none', user_name='bench', device_name='bench-device',"
    " memory_data_dir=Path(sys.argv[3]))\n"
    "from agents_memory.store.entry import open_user_connection\n"
    "with open_user_connection(s, prepare=True):\n"
    "    pass\n"
    "r = backfill(s, Catalog(all_adapters(), Path(sys.argv[4])))\n"
    "print(json.dumps({'seconds': r.seconds, 'stored': r.stored}))\n"
)


def base_tree(commit: str, into: Path) -> Path:
    """The package as it was at ``commit``, extracted under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit, "agents_memory"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def one_backfill(db: common.BenchDB, tree: Path, dbname: str) -> tuple[float, int]:
    """Seconds and turns of one backfill by the code in ``tree`` into a fresh ``dbname``
    (its own migrations make the schema first)."""
    with psycopg.connect(db.info.conninfo("postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{dbname}"')
    env = {**db.env(dbname), "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, db.url(dbname), str(db.base / "absent.env"),
         str(db.base / f"data-{dbname}"), str(db.home)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"backfill with {tree} failed: {proc.stderr.strip()[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return float(out["seconds"]), int(out["stored"])


def profile(db: common.BenchDB) -> str:
    settings = db.settings("profile", embedding_backend="none")
    db.create_database("profile", vector=False)
    prof = cProfile.Profile()
    prof.enable()
    backfill(settings, Catalog(all_adapters(), db.home))
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(45)
    return buf.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40, help="files")
    parser.add_argument("--tasks", type=int, default=12, help="tasks per file")
    parser.add_argument(
        "--set", choices=("synthetic", "fixtures"), default="synthetic",
        help="bench.actionset sessions, or copies of the real tool-heavy fixtures",
    )  # fmt: skip
    parser.add_argument("--copies", type=int, default=40, help="copies of each fixture")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--base", default="dad5d5b", help="the commit before actions")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    head = common.header(common.command_line())
    tasks = actionset.generate(args.sessions * args.tasks * 2, seed=7)
    by_client = [[t for t in tasks if t.platform == p] for p in ("claude-code", "codex-cli")]
    sessions = [
        s for group in by_client for s in actionset.merged(group, args.tasks)[: args.sessions // 2]
    ]
    rows: list[list[str]] = []
    ratios: list[float] = []
    with common.bench_db() as db, tempfile.TemporaryDirectory() as tmp:
        if args.set == "synthetic":
            size = actionset.write(db.home, sessions)
            what = (
                f"{len(sessions)} files of {args.tasks} bench.actionset tasks each, half Claude"
                f" Code, half Codex CLI ({size:,} bytes; about one action per turn)"
            )
        else:
            size = fixture_copies(db.home, args.copies)
            what = (
                f"{args.copies} copies of each of {len(TOOL_HEAVY)} real tool-heavy fixtures"
                f" ({', '.join(TOOL_HEAVY)}; {size:,} bytes)"
            )
        base = base_tree(args.base, Path(tmp))
        os.sync()
        if args.profile:
            print(profile(db))
        for i in range(args.repeat):
            took, turns = one_backfill(db, REPO, f"now{i}")
            base_took, base_turns = one_backfill(db, base, f"base{i}")
            ratio = (turns / took) / (base_turns / base_took)
            ratios.append(ratio)
            rows.append([
                str(i + 1), f"{turns:,}", f"{turns / took:,.0f}", f"{base_turns:,}",
                f"{base_turns / base_took:,.0f}", f"{ratio:.2f}",
            ])  # fmt: skip
            print(rows[-1], flush=True)
    text = "\n".join([
        head,
        f"{what}; base = the tree at `{args.base}` (before actions).",
        "",
        common.table(
            ["round", "turns", "turns/s with actions", "turns (base)", "turns/s base", "ratio"],
            rows,
        ),
        "",
        f"Median ratio {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max"
        f" {max(ratios):.2f}).",
    ])  # fmt: skip
    print(text)
    if not args.no_write:
        common.write_section("Backfill with actions (bench.actions_ingest)", text)


if __name__ == "__main__":
    main()
