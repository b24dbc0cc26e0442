"""Per-prompt recall (issue 29): does a prompt get the memory it needs, and nothing when nothing
matters? On the coding set's pool, through the product's ``recall_for_prompt``.

    python -m bench.prompt_recall [--scale 100000] [--no-write]

The coding set (``bench/codeset``: 5,200 turns of 40 projects) is imported by the real
``memory-capture backfill`` with each project in a git repository under the temp HOME (so a
turn's ``git_root`` is set, as in real use), with the product's local embedder's vectors
(cached, ``bench/embed_cache.py``). The prompts (``bench/codeset/prompts.py``) are typed in a
new session in one of the projects (its directory is the event's ``cwd``). The action set's
sessions join the pool through the same backfill, and its ``error`` / ``command`` questions
join the prompts, in both halves (:mod:`bench.prompt_actions`, which states the rule;
``--no-actions`` leaves them out).

1. The bar (``SearchTuning.speak_above``) is chosen on the **tuning half only**: the lowest of
   a sweep that keeps at least :data:`SILENCE_GOAL` of the tuning half's unrelated prompts
   silent, then both halves are measured with it through ``recall_for_prompt`` itself; once
   with the query's vector, once full-text only (no vector).
2. ``--scale N``: the pool is grown to ``N`` rows (copies of the turns in other sessions,
   earlier, same vectors) and ``recall_for_prompt`` is timed with each prompt embedded by the
   local model, beside the plain search (``search_memory``'s work: embed, one search) in the
   same run, prompt by prompt.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from agents_memory.recall.prompt_acks import is_acknowledgement, search_words
from agents_memory.recall.prompt_recall import CANDIDATES, PromptRecall, recall_for_prompt
from agents_memory.recall.search import QueryVector
from agents_memory.store.search import SearchFilters, SearchHit, SearchTuning, search_memories
from agents_memory.store.search.confidence import word_finder
from agents_memory.store.search.scope import find_user_id
from agents_memory.store.search.terms import parse_query
from agents_memory.store.search.words import stem
from bench import common, embed_cache, prompt_actions
from bench.actionset import write as write_actions
from bench.codeset import CodeSet, generate
from bench.codeset.prompts import Prompt, prompts
from bench.codeset.vectors import vectors
from bench.coding_recall import ingest

SILENCE_GOAL = 0.97
"""The tuning half's unrelated prompts kept silent by the chosen bar (the target is 0.95 on
the held-out half: a margin)."""
SWEEP = (0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.12, 0.15, 0.2, 0.3, 0.4, 0.5)


def place_projects(home: Path, cs: CodeSet) -> dict[str, str]:
    """Each project a git repository under ``home`` (its sessions' ``cwd``); project → root."""
    roots = {}
    for session in cs.sessions:
        root = home / "src" / session.project
        (root / ".git").mkdir(parents=True, exist_ok=True)
        session.cwd = str(root)
        roots[session.project] = str(root)
    return roots


@dataclass(frozen=True, slots=True)
class Candidates:
    """A prompt's hits in its project and everywhere (what ``recall_for_prompt`` gates)."""

    project: list[SearchHit]
    everywhere: list[SearchHit]


def candidates(
    conn: psycopg.Connection[Any], uid: int, text: str, vec: Any, root: str, tuning: SearchTuning
) -> Candidates:
    found: list[list[SearchHit]] = []
    if is_acknowledgement(text):
        return Candidates([], [])
    for scope in (root, None):
        res = search_memories(
            conn, uid, query=search_words(text), query_vector=vec,
            filters=SearchFilters(limit=CANDIDATES, git_root=scope), tuning=tuning,
        )  # fmt: skip
        conn.commit()
        found.append(list(res.hits))
    return Candidates(*found)


def session_text(conn: psycopg.Connection[Any], session_id: str | None) -> str:
    """A session's turns and actions as one lower-cased text (exploration of session credit)."""
    if session_id is None:
        return ""
    row = conn.execute(
        "SELECT coalesce(string_agg(message, ' '), '') FROM memory WHERE session_id = %s",
        (session_id,),
    ).fetchone()
    acts = conn.execute(
        "SELECT coalesce(string_agg(concat_ws(' ', tool, array_to_string(targets, ' '), command,"
        " excerpt, CASE WHEN outcome <> 'ok' THEN 'error failed failure' END), ' '), '')"
        " FROM actions WHERE session_id = %s",
        (session_id,),
    ).fetchone()
    return f"{row[0] if row else ''} {acts[0] if acts else ''}".lower()


def dump(
    path: Path, ps: list[Prompt], cands: list[Candidates], key_of: dict[int, str],
    conn: psycopg.Connection[Any],
) -> None:  # fmt: skip
    """Each candidate's confidence inputs and whether it is a turn the prompt needs (the
    gate's calibration data)."""
    lines = []
    texts: dict[str | None, str] = {}
    for p, c in zip(ps, cands, strict=True):
        query = parse_query(search_words(p.text), 3.0)
        finder = word_finder(query.words) if query.words else None
        for scope, hits in (("project", c.project), ("everywhere", c.everywhere)):
            for rank, h in enumerate(hits, 1):
                if h.session_id not in texts:
                    texts[h.session_id] = session_text(conn, h.session_id)
                held = (
                    {stem(m[0]) for m in finder.finditer(texts[h.session_id])} if finder else set()
                )
                scover = len(held & query.words) / len(query.words) if query.words else 0.0
                lines.append(json.dumps({
                    "pid": p.pid, "text": p.text, "key": key_of.get(h.id), "kind": p.kind,
                    "related": p.related, "scope": scope,
                    "rank": rank, "gold": key_of.get(h.id) in p.gold,
                    "cover": h.why.coverage,
                    "sim": h.why.similarity, "z": h.why.similarity_z, "scover": scover,
                    "half": p.half, "acts": len(h.actions),
                    "all_rare": bool(h.why.all_rare), "fts": h.why.fts_rank is not None,
                    "fused": h.why.fused_score, "score": h.why.score, "conf": h.confidence,
                }))  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def simulate(c: Candidates, bar: float) -> list[int]:
    """The ids ``recall_for_prompt`` adds at ``bar`` (its rule: the project's hits that clear
    the bar, else everywhere's; at most 3). Used only for the tuning half's sweep."""
    for hits in (c.project, c.everywhere):
        chosen = [h.id for h in hits if (h.confidence or 0.0) >= bar][:3]
        if chosen:
            return chosen
    return []


def rates(
    ps: Sequence[Prompt], added: Sequence[Sequence[int]], key_of: dict[int, str]
) -> tuple[float, float, int, int]:
    """(share of related prompts given a gold turn, share of unrelated given nothing, n, n)."""
    rel = [
        any(key_of.get(i) in p.gold for i in a) for p, a in zip(ps, added, strict=True) if p.related
    ]
    un = [not a for p, a in zip(ps, added, strict=True) if not p.related]
    return (
        float(np.mean(rel)) if rel else 0.0,
        float(np.mean(un)) if un else 0.0,
        len(rel),
        len(un),
    )


def fit_bar(
    ps: list[Prompt], cands: list[Candidates], key_of: dict[int, str]
) -> tuple[float, list[list[Any]]]:
    """The lowest bar of :data:`SWEEP` keeping :data:`SILENCE_GOAL` of the tuning half's
    unrelated prompts silent, and the sweep's rows (tuning half only)."""
    rows, chosen = [], SWEEP[-1]
    for bar in SWEEP:
        added = [simulate(c, bar) for c in cands]
        rel, silent, _n, _m = rates(ps, added, key_of)
        rows.append([f"{bar:.2f}", f"{rel:.3f}", f"{silent:.3f}"])
        if silent >= SILENCE_GOAL and chosen == SWEEP[-1]:
            chosen = bar
    return chosen, rows


def run_prompts(
    db: common.BenchDB, ps: Sequence[Prompt], roots: dict[str, str],
    vector: Callable[[str], QueryVector], tuning: SearchTuning,
) -> tuple[list[PromptRecall], list[float]]:  # fmt: skip
    """Each prompt through ``recall_for_prompt`` in a new session of its project."""
    settings = db.settings("coding")
    out, times = [], []
    with psycopg.connect(db.url("coding")) as conn:
        uid = find_user_id(conn, settings.user_name)
        assert uid is not None
        for p in ps:
            event = {"prompt": p.text, "cwd": roots[p.project], "session_id": str(uuid.uuid4())}
            started = time.perf_counter()
            got = recall_for_prompt(
                conn, settings, uid, "claude-code", event, vector=vector, record=False,
                tuning=tuning,
            )  # fmt: skip
            conn.commit()
            times.append(time.perf_counter() - started)
            out.append(got)
    return out, times


def report(
    name: str, ps: list[Prompt], got: list[PromptRecall], times: list[float], key_of: dict[int, str]
) -> list[list[Any]]:
    rows = []
    for half in ("tuning", "heldout"):
        idx = [i for i, p in enumerate(ps) if p.half == half]
        hp = [ps[i] for i in idx]
        rel, silent, n, m = rates(hp, [got[i].memory_ids for i in idx], key_of)
        chars = [len(got[i].text) for i in idx]
        spoke = [c for c in chars if c]
        lat = common.summary_ms([times[i] for i in idx])
        rows.append([
            name, half, n, f"{rel:.3f}", m, f"{silent:.3f}", f"{np.mean(chars):.0f}",
            f"{np.mean(spoke) if spoke else 0:.0f}", f"{lat['p50']:.1f}", f"{lat['p95']:.1f}",
        ])  # fmt: skip
    return rows


def by_kind(ps: list[Prompt], got: list[PromptRecall], key_of: dict[int, str]) -> list[list[Any]]:
    rows = []
    for half in ("tuning", "heldout"):
        for kind in sorted({p.kind for p in ps}):
            idx = [i for i, p in enumerate(ps) if p.half == half and p.kind == kind]
            hp = [ps[i] for i in idx]
            rel, silent, n, _m = rates(hp, [got[i].memory_ids for i in idx], key_of)
            share = f"{rel:.3f} needed added" if n else f"{silent:.3f} silent"
            rows.append([half, kind, len(idx), share])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=common.DEFAULT_CACHE)
    parser.add_argument("--scale", type=int, help="also time recall_for_prompt at this many rows")
    parser.add_argument("--no-write", action="store_true", help="print only, keep RESULTS.md")
    parser.add_argument("--dump", type=Path, help="write the tuning half's candidates (JSONL)")
    parser.add_argument(
        "--no-actions", action="store_true", help="without the action set (bench/prompt_actions)"
    )
    args = parser.parse_args()
    head = common.header(common.command_line())
    cs = generate(24)
    ps = prompts(cs)
    pv, _qv = vectors(cs, args.cache)
    acts = [] if args.no_actions else prompt_actions.sessions()
    with common.bench_db() as db:
        roots = place_projects(db.home, cs)
        write_actions(db.home, acts)
        key_of = ingest(db, cs, pv, args.cache)
        if acts:
            with psycopg.connect(db.url("coding")) as conn:
                more, more_keys = prompt_actions.action_prompts(conn, acts)
            ps, key_of = ps + more, key_of | more_keys
            roots[prompt_actions.PROJECT] = str(db.home)
            print(f"action prompts: {len(more)}", flush=True)
        texts = [p.text for p in ps]
        qv = dict(zip(texts, embed_cache.embed(texts, "query", args.cache), strict=True))
        base = SearchTuning()
        tuning_idx = [i for i, p in enumerate(ps) if p.half == "tuning"]
        with psycopg.connect(db.url("coding")) as conn:
            uid = find_user_id(conn, "bench")
            assert uid is not None
            cands = [
                candidates(conn, uid, ps[i].text, qv[ps[i].text], roots[ps[i].project], base)
                for i in tuning_idx
            ]
            if args.dump:
                dump(args.dump, [ps[i] for i in tuning_idx], cands, key_of, conn)
        bar, sweep = fit_bar([ps[i] for i in tuning_idx], cands, key_of)
        tuned = replace(base, speak_above=bar)
        print(f"bar fitted on the tuning half: {bar}", flush=True)
        main_rows, kind_rows = [], []
        for name, vec in (
            ("vector + full text", lambda t: QueryVector(qv.get(t))),
            ("full text only", lambda t: QueryVector(None)),
        ):
            got, times = run_prompts(db, ps, roots, vec, tuned)
            main_rows += report(name, ps, got, times, key_of)
            if name.startswith("vector"):
                kind_rows = by_kind(ps, got, key_of)
                sample = [(p, g) for p, g in zip(ps, got, strict=True) if g.text][:2]
        scale_body = ""
        if args.scale:
            from bench.prompt_scale import scale_latency

            scale_body = scale_latency(db, ps, roots, args.scale, tuned)
    n_rel = sum(p.related for p in ps)
    body = (
        f"{head}\n\n{cs.turns} turns (+ {len(acts)} sessions of the action set,"
        f" bench/prompt_actions.py), {len(cs.sessions)} sessions, 40 projects; {len(ps)} prompts"
        f" ({n_rel} related, {len(ps) - n_rel} unrelated; "
        f"{sum(p.half == 'heldout' for p in ps)} held out). Bar fitted on the tuning half:"
        f" `speak_above` = {bar} (the lowest of the sweep keeping {SILENCE_GOAL:.0%} of its"
        " unrelated prompts silent). Latency: `recall_for_prompt` with the prompt's vector"
        " precomputed (one or two searches), ~5k rows.\n\n"
        + common.table(
            [
                "search",
                "half",
                "related",
                "needed memory added",
                "unrelated",
                "nothing added",
                "chars / prompt",
                "chars / prompt given some",
                "p50 ms",
                "p95 ms",
            ],
            main_rows,
        )
        + "\n\nPer kind (vector + full text):\n\n"
        + common.table(["half", "kind", "prompts", "share"], kind_rows)
        + "\n\nThe sweep, tuning half only (what the bar was chosen on):\n\n"
        + common.table(["speak_above", "needed memory added", "unrelated silent"], sweep)
        + "\n\nWhat a prompt gets (first two that got memories):\n\n"
        + "\n\n".join(f"> {p.text}\n\n```\n{g.text}\n```" for p, g in sample)
        + "\n"
        + scale_body
    )
    print(body)
    if not args.no_write:
        common.write_section("Per-prompt recall (bench.prompt_recall)", body)


if __name__ == "__main__":
    main()
