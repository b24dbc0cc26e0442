"""What actions cost in storage against the transcripts they come from (issue 28's bound: 5 %).

    python -m bench.action_storage

Three pools, each read by the real backfill into a private embedded database: the public
real-world Claude Code and Codex CLI transcripts of ``../shared/fixtures/transcripts/`` (sessions
people ran, with their real tool outputs), the real programs' tool-call fixtures of
``tests/fixtures/transcripts/actions/`` (four calls on four tiny files each), and
``bench.actionset`` (160 synthetic sessions whose tool outputs are a line or two). For each
session: the transcript's bytes, its actions and the bytes their rows take
(``pg_column_size``: columns and row header, as the table stores them before compression).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.store.actions import bytes_per_session
from agents_memory.store.search import find_user_id
from bench import common
from bench.actionset import generate, write

SHARED = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "transcripts"
OURS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "transcripts" / "actions"


def place_public(home: Path, shared: Path) -> None:
    """The public Claude Code and Codex transcripts where their clients keep them."""
    claude = home / ".claude" / "projects" / "-tmp-public"
    codex = home / ".codex" / "sessions" / "2026" / "01" / "01"
    for source, target in ((shared / "claude-code", claude), (shared / "codex", codex)):
        target.mkdir(parents=True, exist_ok=True)
        for path in sorted(source.glob("*.jsonl")):
            name = path.name if target is claude else f"rollout-{path.name}"
            shutil.copyfile(path, target / name)


def place_ours(home: Path, ours: Path) -> None:
    """The real programs' tool-call fixtures where their clients keep them."""
    places = {
        "claude-code": home / ".claude" / "projects" / "-tmp-am-actions",
        "codex-cli": home / ".codex" / "sessions" / "2026" / "12" / "05",
        "gemini-cli": home / ".gemini" / "tmp" / "project" / "chats",
    }
    for platform, target in places.items():
        for path in sorted((ours / platform).rglob("*.json*")):
            target.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / path.name)
    root = next((ours / "gemini-cli").rglob(".project_root"), None)
    if root is not None:
        shutil.copyfile(root, home / ".gemini" / "tmp" / "project" / ".project_root")


def measure(db: common.BenchDB, name: str, home: Path) -> list[list[Any]]:
    """Backfill ``home`` into database ``name``; one row per client: sessions with actions,
    transcript bytes (of all its files), actions, action bytes, the share, the median share."""
    db.create_database(name)
    settings = db.settings(name, embedding_backend="none")
    report = backfill(settings, Catalog(all_adapters(), home))
    with psycopg.connect(db.url(name)) as conn:
        uid = find_user_id(conn, settings.user_name)
        sizes = [] if uid is None else bytes_per_session(conn, uid)
    rows = []
    for platform, totals in sorted(report.platforms.items()):
        mine = [s for s in sizes if s.agent_platform == platform]
        stored = sum(s.bytes for s in mine)
        read = totals.bytes_read
        rows.append([
            name, platform, totals.files, f"{read:,}", sum(s.actions for s in mine),
            f"{stored:,}", f"{100 * stored / max(1, read):.1f} %",
            f"{stored / max(1, sum(s.actions for s in mine)):.0f}",
        ])  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--no-write", action="store_true", help="print only, keep RESULTS.md")
    args = parser.parse_args()
    head = common.header(common.command_line())
    rows: list[list[Any]] = []
    with common.bench_db() as db:
        for name, place in (
            ("public", lambda h: place_public(h, args.shared)),
            ("real-programs", lambda h: place_ours(h, OURS)),
            ("actionset", lambda h: write(h, generate(160, 0))),
        ):
            home = db.home.parent / f"home-{name}"
            home.mkdir(parents=True, exist_ok=True)
            place(home)
            rows += measure(db, name, home)
    headers = ["pool", "client", "files", "transcript bytes", "actions", "action bytes",
               "share", "bytes / action"]  # fmt: skip
    body = (
        f"{head}\n\n{common.table(headers, rows)}\n\nAn action's row has a fixed part of about"
        " 190 bytes (ids, session, key, device, times) before its command, targets and excerpt:"
        " a session whose tool outputs are a line or two (the last two pools) stays above 5 %,"
        " one with real tool outputs well under it.\n"
    )
    print(body)
    if not args.no_write:
        common.write_section("Action storage (bench.action_storage)", body)


if __name__ == "__main__":
    main()
