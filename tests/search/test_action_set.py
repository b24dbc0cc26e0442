"""The action-recall bench's pieces run against the real product: its sessions, written in
Claude Code's and Codex CLI's formats, are read by the real backfill into the real database
with every answering action stored, and the search shows most answers (the search without
the actions arm shows none). A small slice of ``bench.action_recall``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.store.search import SearchTuning
from bench.action_recall import golds, run
from bench.actionset import generate, write


def test_the_action_set_is_captured_and_its_answers_are_shown(
    settings: Settings, conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    sessions = generate(30, seed=3)
    write(tmp_path, sessions)
    backfill(settings, Catalog(all_adapters(), tmp_path))
    gold = golds(conn, sessions)
    texts = [s.question.text for s in sessions if s.question]

    results, _times = run(conn, texts, {}, SearchTuning(), settings.user_name)
    without, _ = run(
        conn, texts, {}, replace(SearchTuning(), action_fusion="off"), settings.user_name
    )

    assert len(gold) == len(texts) == 30  # every answering action stored, with its turn
    shown = [
        any(gold[t][0] in {a.id for a in h.actions} for h in r.hits)
        for t, r in zip(texts, results, strict=True)
    ]
    assert sum(shown) >= 24, sum(shown)
    assert not any(h.actions for r in without for h in r.hits)
