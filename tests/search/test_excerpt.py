"""The excerpt around the matching words and the compact hit line (pure), and the fusion of
several phrasings' rankings."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from agents_memory.store.search.excerpt import LINE_CHARS, excerpt, hit_line, query_stems
from agents_memory.store.search.fusion import fuse_results
from agents_memory.store.search.types import MatchWhy, SearchHit, SearchResult

PAD = "Some words about other matters entirely, nothing to see. " * 20


def _hit(id_: int, message: str, confidence: float = 0.5, **kw: object) -> SearchHit:
    fields = {
        "id": id_, "role": "user", "message": message, "agent_platform": "codex-cli",
        "agent_model": None, "session_id": "s", "p_tag": None, "d_tag": (), "is_pinned": False,
        "message_at": datetime(2026, 3, 1, tzinfo=UTC), "device_name": None, "cwd": None,
        "why": MatchWhy(arms=("fulltext",)), "confidence": confidence, **kw,
    }  # fmt: skip
    return SearchHit(**fields)  # type: ignore[arg-type]


def test_the_excerpt_is_around_the_words_not_the_start() -> None:
    text = PAD + "The billing tables moved to monthly partitions in March. " + PAD
    shown = excerpt(text, query_stems(["billing partitions"]), 120)
    assert len(shown) <= 120
    assert "billing" in shown and "partitions" in shown
    assert shown.startswith("…") and shown.endswith("…")


def test_the_window_with_most_distinct_words_wins() -> None:
    text = "billing " + PAD + "billing tables use partitions by invoice_date. " + PAD
    shown = excerpt(text, query_stems(["billing partitions invoice_date"]), 100)
    assert "partitions" in shown and "invoice" in shown


def test_no_match_gives_the_start_and_short_text_is_whole() -> None:
    assert excerpt(PAD, query_stems(["zeppelin"]), 80).startswith("Some words about")
    assert excerpt("short   text\nhere", query_stems(["x"]), 80) == "short text here"
    assert len(excerpt(PAD, frozenset(), 80)) <= 80


def test_stems_match_other_forms_and_other_phrasings_count() -> None:
    text = PAD + "We are partitioning the ledger now. " + PAD
    assert "partitioning" in excerpt(text, query_stems(["partition", None]), 90)
    assert "ledger" in excerpt(text, query_stems(["nothing", "the ledger"]), 90)


def test_a_match_at_the_end_is_shown_with_its_left_side() -> None:
    text = PAD + "and finally the port is 6543"
    shown = excerpt(text, query_stems(["port 6543"]), 80)
    assert shown.startswith("…") and shown.endswith("6543") and len(shown) <= 80


@pytest.mark.parametrize("project", [None, "a-very-long-project-name-" * 3])
def test_a_hit_line_is_bounded_and_names_what_it_is(project: str | None) -> None:
    hit = _hit(42, PAD + "deploy checklist lives in ops/README" + PAD, p_tag=project)
    line = hit_line(hit, query_stems(["deploy checklist"]))
    assert len(line) <= LINE_CHARS
    assert line.startswith(f"#42 2026-03-01 codex-cli {project or '-'} turn/user: ")
    assert "checklist" in line
    assert hit_line(replace(hit, kind="action"), frozenset()).split(" ")[4] == "action:"


def test_fusion_ranks_by_reciprocal_rank_and_keeps_the_best_confidence() -> None:
    a = SearchResult("hybrid", (_hit(1, "a", 0.2), _hit(2, "b", 0.3)))
    b = SearchResult("hybrid", (_hit(2, "b", 0.9), _hit(3, "c", 0.4)))
    fused = fuse_results([a, b], limit=10)
    assert [h.id for h in fused.hits] == [2, 1, 3]
    assert fused.hits[0].confidence == 0.9 and not fused.weak
    assert fuse_results([a], limit=10) is a
    assert [h.id for h in fuse_results([a, b], limit=1).hits] == [2]


def test_a_weak_phrasing_does_not_push_strong_matches_down() -> None:
    strong = SearchResult("hybrid", (_hit(1, "a"),))
    weak = SearchResult("hybrid", (_hit(9, "z", 0.01),), weak=True, note="no match")
    fused = fuse_results([weak, strong], limit=10)
    assert [h.id for h in fused.hits] == [1] and not fused.weak and fused.note is None
    both = fuse_results([weak, replace(weak, hits=(_hit(8, "y", 0.01),))], limit=10)
    assert both.weak and both.note == "no match" and len(both.hits) == 1
