"""Near-duplicates and importance (issue 32): what the page's diversity (``mmr_lambda``) and
seed B's importance prior (``importance_weight``) change where each should matter.

    python -m bench.diversity [--variants default,mmr-0.7,mmr-0.9,importance-0.2] [--seed 32]

A generated pool (full text only, no embedding model needed), 30 incidents among 600 unrelated
turns. Each incident: one error pasted in five sessions (five near-duplicates, a line of the
user's own around each), and eight distinct turns about it (diagnosis, fix, the test added, a
decision, ...), one of which an agent remembered on purpose (``manage_knowledge``, unpinned, given
to 4 sessions before: table ``prompt_recalls``). One question per incident: the error pasted once
more. Per variant: the duplicate copies on the first page (1 is ideal, 5 the
worst), the distinct answers (the duplicate group counting once: 9 in all) in the top 5 and
top 10, and the remembered turn's reciprocal rank (MRR). Baseline: the default tuning, same pool,
same run. Nothing here is fitted; each variant's knob is a round seed B value or a neighbour.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import psycopg

from agents_memory.store.memories import AdmittedText, NewMemory, ensure_user, insert_memories
from agents_memory.store.search import SearchFilters, SearchTuning, search_memories
from agents_memory.store.search.lexemes import analyze_memory, refresh_search_lexemes
from bench import common

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "mmr-0.7": {"mmr_lambda": 0.7},
    "mmr-0.9": {"mmr_lambda": 0.9},
    "no-importance": {"importance_weight": 0.0},
    "mmr-0.9-no-importance": {"mmr_lambda": 0.9, "importance_weight": 0.0},
}
INCIDENTS = 30
NOISE = 600
WRAPPERS = (
    "hit this again on my machine:\n{e}",
    "CI fails with\n{e}\nany idea?",
    "same as yesterday? {e}",
    "after the rebase I get {e}",
    "staging logs show {e} every few minutes",
)
DISTINCT = (
    "Diagnosis: {fn} reads {field} before the config loader has run, so the table is undefined"
    " on a cold start.",
    "Fixed: {fn} now awaits the loader and {field} defaults to an empty table; see the patch.",
    "Added a regression test that calls {fn} on a cold start and checks {field} is loaded.",
    "Note for later: the {field} race in {fn} came back once under load; the retry covers it.",
    "Root cause of the undefined {field}: {fn} was moved into the worker before its config.",
    "Reverted the cache change in {fn}; {field} undefined errors stopped in staging.",
    "Decision: {fn} keeps {field} in memory only, no disk cache, to avoid the stale table.",
    "Postmortem: the {field} error in {fn} cost 2 hours of failed checkouts on Tuesday.",
)
WORDS = ("alpha", "bravo", "cedar", "delta", "ember", "fjord", "grove", "harbor", "iris",
         "juniper", "kestrel", "lumen")  # fmt: skip


def _pool(rng: random.Random) -> tuple[list[NewMemory], list[dict[str, object]]]:
    """The rows and, per incident, its question, the duplicates' keys and the distinct ones'."""
    rows: list[NewMemory] = []
    incidents: list[dict[str, object]] = []
    start = datetime(2026, 10, 1, tzinfo=UTC)
    for n in range(INCIDENTS):
        fn, field = f"load{WORDS[n % 12].title()}Rates{n}", f"rateTable{n}"
        error = f"TypeError: Cannot read properties of undefined (reading '{field}') at {fn}"
        dupes, distinct = [], []
        for k, wrapper in enumerate(WRAPPERS):
            key = f"i{n}:dup{k}"
            at = start + timedelta(days=rng.randint(0, 40), minutes=k)
            rows.append(_row(key, wrapper.format(e=error), f"s{n}-{k}", at))
            dupes.append(key)
        for k, text in enumerate(DISTINCT):
            key = f"i{n}:distinct{k}"
            at = start + timedelta(days=rng.randint(0, 40), hours=k)
            row = _row(key, text.format(fn=fn, field=field), f"s{n}-fix", at, "assistant")
            rows.append(replace(row, source="manage_knowledge") if k == 1 else row)
            distinct.append(key)
        question = f"{error} -- seen this before?"  # the error pasted once more
        incidents.append({"q": question, "dupes": dupes, "distinct": distinct, "kept": distinct[1]})
    for m in range(NOISE):
        words = " ".join(rng.choice(WORDS) for _ in range(12))
        at = start + timedelta(days=rng.randint(0, 40))
        rows.append(_row(f"noise{m}", f"unrelated work on {words}", f"noise{m % 60}", at))
    return rows, incidents


def _row(
    key: str, text: str, session: str, at: datetime, role: Literal["user", "assistant"] = "user"
) -> NewMemory:
    """A generated turn (its text is ours: nothing to admit)."""
    return NewMemory(
        "claude-code", role, AdmittedText(text), external_uuid=key, session_id=session,
        message_at=at,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--no-write", action="store_true", help="print only, keep RESULTS.md")
    args = parser.parse_args()
    head = common.header(common.command_line())
    rows, incidents = _pool(random.Random(args.seed))
    table: list[list[object]] = []
    with common.bench_db() as db:
        url = db.create_database("diversity", vector=False)
        with psycopg.connect(url) as conn:
            uid = ensure_user(conn, "bench")
            ids = insert_memories(conn, uid, rows).ids
            key_of = {i: r.external_uuid for i, r in zip(ids, rows, strict=True)}
            kept = [i for i, r in zip(ids, rows, strict=True) if r.source == "manage_knowledge"]
            for n in range(4):  # the remembered turns were given to sessions before
                conn.execute(
                    "INSERT INTO prompt_recalls (user_id, agent_platform, session_id, kind,"
                    " outcome, memory_ids) VALUES (%s, 'claude-code', %s, 'prompt', 'added', %s)",
                    (uid, f"given{n}", kept),
                )
            conn.commit()
            analyze_memory(conn)
            refresh_search_lexemes(conn, force=True)
            conn.commit()
            for name in args.variants.split(","):
                tuning = replace(SearchTuning(), **VARIANTS[name])
                table.append([name, *_measure(conn, uid, incidents, key_of, tuning)])
                print(" ".join(str(x) for x in table[-1]), flush=True)
    headers = ["variant", "duplicate copies on page", "distinct answers top 5",
               "distinct answers top 10", "remembered turn MRR", "p50 ms"]  # fmt: skip
    body = (
        f"{head}\n\n{len(rows)} turns: {INCIDENTS} incidents (an error pasted in 5 sessions, 8"
        f" distinct turns about it, one remembered on purpose and given 4 times) among {NOISE}"
        " unrelated turns; full text only, limit 10.\n\n" + common.table(headers, table) + "\n"
    )
    print(body)
    if not args.no_write:
        common.write_section("Near-duplicates and importance (issue 32)", body)


def _measure(
    conn: psycopg.Connection[Any],
    uid: int,
    incidents: list[dict[str, object]],
    key_of: dict[int, str | None],
    tuning: SearchTuning,
) -> list[str]:
    copies, top5, top10, rr, times = [], [], [], [], []
    for incident in incidents:
        started = time.perf_counter()
        found = search_memories(
            conn, uid, query=str(incident["q"]), query_vector=None,
            filters=SearchFilters(limit=10), tuning=tuning,
        )  # fmt: skip
        conn.commit()
        times.append(time.perf_counter() - started)
        page = [key_of.get(h.id) for h in found.hits]
        dupes, distinct = set(incident["dupes"]), set(incident["distinct"])  # type: ignore[call-overload]
        copies.append(sum(k in dupes for k in page))
        top5.append(_answers(page[:5], dupes, distinct))
        top10.append(_answers(page, dupes, distinct))
        place = page.index(incident["kept"]) + 1 if incident["kept"] in page else None
        rr.append(1.0 / place if place else 0.0)
    n = len(incidents)
    return [
        f"{sum(copies) / n:.2f}",
        f"{sum(top5) / n:.2f}",
        f"{sum(top10) / n:.2f}",
        f"{sum(rr) / n:.3f}",
        f"{common.summary_ms(times)['p50']:.1f}",
    ]


def _answers(keys: list[str | None], dupes: set[str], distinct: set[str]) -> int:
    """Distinct answers among ``keys``: each distinct turn, and the duplicates once."""
    return sum(k in distinct for k in keys) + any(k in dupes for k in keys)


if __name__ == "__main__":
    main()
