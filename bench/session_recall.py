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
from agents_memory.store.search.sessions import SessionFusion, session_hits
from agents_memory.store.search.terms import query_terms
from bench import common
from bench.codeset.generate import generate, write
from bench.codeset.model import Session

TOP = 5
VARIANTS = {
    "default": SessionFusion(),
    "text-only": SessionFusion(turn_weight=0.0),
    "turns-only": SessionFusion(text_weight=0.0),
    "turns-0.7": SessionFusion(turn_weight=0.7),
    "equal": SessionFusion(turn_weight=1.0),
    "k-30": SessionFusion(rrf_k=30.0),
}
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
            found: dict[str, dict[str, list[int]]] = {
                v: {"tuning": [0, 0], "heldout": [0, 0]} for v in [*VARIANTS, "turn hits"]
            }
            times, arm_times = [], []
            filters, tuning = SearchFilters(), SearchTuning()
            for session, text in asked:
                started = time.perf_counter()
                result = search_memories(
                    conn, uid, query=text, query_vector=None, filters=filters, tuning=tuning
                )
                times.append(time.perf_counter() - started)
                where = half(session.sid)
                terms = query_terms(text)
                for name, fusion in VARIANTS.items():
                    started = time.perf_counter()
                    hits = session_hits(conn, uid, terms, filters, None, result.hits, fusion=fusion)
                    if name == "default":
                        arm_times.append(time.perf_counter() - started)
                    found[name][where][0] += 1
                    found[name][where][1] += session.sid in [h.session_id for h in hits][:TOP]
                by_turns = list(dict.fromkeys(h.session_id for h in result.hits))[:TOP]
                found["turn hits"][where][0] += 1
                found["turn hits"][where][1] += session.sid in by_turns
        table = [
            [
                name,
                f"{h['tuning'][1] / h['tuning'][0]:.2f}",
                f"{h['heldout'][1] / h['heldout'][0]:.2f}",
            ]
            for name, h in found.items()
        ]
        lines = [
            f"session in the top {TOP} (tuning {found['default']['tuning'][0]},"
            f" held out {found['default']['heldout'][0]} questions)",
            common.table(["ranking", "tuning", "held out"], table),
        ]
        ms, arm = common.summary_ms(times), common.summary_ms(arm_times)
        lines.append(
            f"search with the session arm p50 {ms['p50']:.1f} ms, p95 {ms['p95']:.1f} ms;"
            f" the session arm alone p50 {arm['p50']:.1f} ms, p95 {arm['p95']:.1f} ms"
        )
        print("\n".join(lines))


if __name__ == "__main__":
    main()
