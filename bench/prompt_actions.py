"""Related prompts whose answer lives in an action (a tool call), for ``bench.prompt_recall``.

The rule, written before any held-out result was looked at: every question of the action set
(:mod:`bench.actionset`: 160 sessions in Claude Code's and Codex's real formats, imported by the
same real backfill as the coding set, into the same pool) of kind ``error`` or ``command`` — the
failing command and its error, how a thing is run — becomes a related prompt, typed outside any
git repository (so no project scope); its half is the prompt set's own hash rule on its id
(:attr:`bench.codeset.prompts.Prompt.half`), so both halves get some; the memory it needs is the
turn that issued the answering action. A question text that two sessions share is left out (its
answer is ambiguous).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import psycopg

from bench.action_recall import golds
from bench.actionset import Session, generate
from bench.codeset.prompts import Prompt

KINDS = ("error", "command")
PROJECT = "(outside any repository)"


def sessions() -> list[Session]:
    return generate()


def action_prompts(
    conn: psycopg.Connection[Any], acts: list[Session]
) -> tuple[list[Prompt], dict[int, str]]:
    """The prompts, and memory id → key for the turns they need (for ``rates``)."""
    found = golds(conn, acts)
    seen = Counter(s.question.text for s in acts if s.question)
    ps: list[Prompt] = []
    key_of: dict[int, str] = {}
    for i, s in enumerate(acts):
        q = s.question
        if q is None or q.kind not in KINDS or seen[q.text] > 1 or q.text not in found:
            continue
        key = f"action:{s.id}:{q.gold}"
        ps.append(Prompt(f"action-{i}", f"action-{q.kind}", q.text, PROJECT, (key,)))
        key_of[found[q.text][1]] = key
    return ps, key_of
