"""Session-level questions ("the session where we …") over the coding set (issue 30).

    python -m bench.session_recall

The coding set's 200 sessions are written as Claude Code and Codex transcripts, imported by the
real ``memory-capture backfill`` (full text only: no vectors), summarised by the Cold Path's
session summariser (extractive, no LLM). Each session gets one question written from one thing
that happened in it (a decision, a migration, an error tracked down, a setting changed), in
words of a person recalling it, not the turn's; the questions are split in halves by a hash of
the session id (``tuning`` was looked at while building the arm, ``heldout`` was not). A
question is found when its session is among the first 5 sessions of the result
(``SearchResult.sessions``); beside it, the baseline without the session arm: the sessions of
the turn hits, in the order of their best turn.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from agents_memory.coldpath.base import JobContext
from agents_memory.coldpath.session_summarizer import SessionSummarizerJob
from agents_memory.store.memories import ensure_user
from agents_memory.store.search import SearchFilters, SearchTuning, search_memories
from bench import common
from bench.codeset.generate import generate, write
from bench.codeset.model import Session

TOP = 5
_RULES = (
    (re.compile(r"Decision: we went with (.+?) over (.+?) for (.+?) because"),
     "the {project} session where we picked {0} for the {2}"),
    (re.compile(r"Migration \d+_add_(\w+?)_to_(\w+) is in"),
     "the session where we added the {0} column to {1}"),
    (re.compile(r"\(error (E\d+)\) came from"),
     "the session where we tracked down error {0}"),
    (re.compile(r"Set the .+? pool to (\d+) connections"),
     "the {project} session about workers starving for database connections"),
    (re.compile(r"upstream request timeout is now (\d+)s"),
     "the session where we changed the {project} upstream timeout"),
)  # fmt: skip


def question(session: Session) -> str | None:
    """One question about something that happened in ``session``."""
    for pattern, template in _RULES:
        for turn in session.turns:
            found = pattern.search(turn.text)
            if found and turn.role == "assistant":
                return template.format(*found.groups(), project=session.project)
    return None


def half(sid: str) -> str:
    return "heldout" if hashlib.sha256(sid.encode()).digest()[0] % 2 else "tuning"


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    cs = generate()
    asked = [(s, q) for s in cs.sessions if (q := question(s)) is not None]
    print(f"{len(cs.sessions)} sessions, {len(asked)} questions")
    with common.bench_db() as db:
        write(db.home, cs)
        url = db.create_database("sessions", vector=False)
        capture = str(Path(sys.executable).with_name("memory-capture"))
        proc = common.run([capture, "backfill"], env=db.env("sessions", EMBEDDING_BACKEND="none"))
        if proc.returncode != 0:
            raise SystemExit(f"backfill failed: {proc.stderr.strip()}")
        settings = db.settings("sessions")
        with psycopg.connect(url) as conn:
            uid = ensure_user(conn, "bench")
            conn.commit()
            ctx = JobContext(conn, settings, uid, datetime.now(UTC), None, None, 50, drain=True)
            took = time.perf_counter()
            report = SessionSummarizerJob().run(ctx)
            took = time.perf_counter() - took
            print(
                f"summarised {report.processed} sessions in {took:.1f}s"
                f" ({1000 * took / max(1, report.processed):.1f} ms each)"
            )
            rows = {"tuning": [0, 0, 0], "heldout": [0, 0, 0]}
            times = []
            for session, text in asked:
                started = time.perf_counter()
                result = search_memories(
                    conn,
                    uid,
                    query=text,
                    query_vector=None,
                    filters=SearchFilters(),
                    tuning=SearchTuning(),
                )
                times.append(time.perf_counter() - started)
                by_arm = [s.session_id for s in result.sessions][:TOP]
                by_turns = list(dict.fromkeys(h.session_id for h in result.hits))[:TOP]
                row = rows[half(session.sid)]
                row[0] += 1
                row[1] += session.sid in by_arm
                row[2] += session.sid in by_turns
        lines = [
            common.table(
                ["half", "questions", f"session arm top-{TOP}", f"turn hits' sessions top-{TOP}"],
                [[h, n, f"{a / n:.2f}", f"{b / n:.2f}"] for h, (n, a, b) in rows.items()],
            )
        ]
        ms = common.summary_ms(times)
        lines.append(f"search (turns + sessions) p50 {ms['p50']:.1f} ms, p95 {ms['p95']:.1f} ms")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
