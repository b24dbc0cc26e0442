"""When a search's query is embedded: beside the search's first statements until their time is
known, then first whenever the embedder says its threads save more than the overlap; what
those statements take is learned from the searches themselves."""

from __future__ import annotations

import numpy as np
import pytest

from agents_memory.recall.pace import WINDOW, SearchPace
from agents_memory.recall.search import PendingVector, QueryVector
from tests.coldpath.embedding_helpers import ScriptedEmbedder


class PlanningEmbedder(ScriptedEmbedder):
    """A backend that says whether to go first as told, and records what it was asked."""

    def __init__(self, go_first: bool) -> None:
        super().__init__()
        self.go_first = go_first
        self.asked: list[tuple[str, float]] = []

    def plan_query(self, text: str, work_ms: float) -> bool:
        self.asked.append((text, work_ms))
        return self.go_first


def _made() -> QueryVector:
    return QueryVector(np.ones(4, dtype=np.float32))


def _searched(
    pace: SearchPace, *, first: bool, asked_ms: float, ready_ms: float, ended_ms: float
) -> None:
    """A search whose vector was asked for and there at these milliseconds after its start."""
    pending = PendingVector(_made, first=first)
    pending.result()
    pending.asked = pending.started + asked_ms / 1000
    pending.ready = pending.started + ready_ms / 1000
    pace.observe(pending, ended=pending.started + ended_ms / 1000)


def test_before_any_search_is_timed_the_query_is_embedded_beside_the_statements() -> None:
    pace, embedder = SearchPace(), PlanningEmbedder(go_first=True)
    pending = pace.start(embedder, "which port does staging use", _made)
    assert pending.first is False and embedder.asked == []
    assert pending.source() == pending.vector  # asked for once the statements are sent
    assert pace.work_ms() is None


def test_the_statements_time_is_learned_and_weighed_by_the_embedder() -> None:
    pace, embedder = SearchPace(), PlanningEmbedder(go_first=True)
    for before in (4.0, 5.0, 30.0):  # the statements, then the vector, then 8 ms more
        _searched(pace, first=False, asked_ms=before, ready_ms=25.0, ended_ms=33.0)
    assert pace.work_ms() == pytest.approx(5.0)  # their median: one slow search does not move it
    pending = pace.start(embedder, "which port does staging use", _made)
    [(text, work)] = embedder.asked
    assert text == "which port does staging use" and work == pytest.approx(5.0)
    assert pending.first is True
    vector = pending.source()  # the vector itself, waited for: the search sends nothing before
    assert isinstance(vector, np.ndarray) and pending.asked is not None
    embedder.go_first = False
    assert pace.start(embedder, "and the port of production?", _made).first is False


def test_a_search_that_embedded_first_counts_its_time_after_the_vector_less_the_usual_rest() -> (
    None
):
    pace = SearchPace()
    _searched(pace, first=False, asked_ms=5.0, ready_ms=25.0, ended_ms=33.0)  # 8 ms after
    for _ in range(WINDOW):  # all statements after the vector: 20 ms, 8 of them the rest
        _searched(pace, first=True, asked_ms=0.1, ready_ms=15.0, ended_ms=35.0)
    assert pace.work_ms() == pytest.approx(12.0)


def test_a_search_that_never_asked_for_its_vector_teaches_nothing() -> None:
    pace = SearchPace()
    pending = PendingVector(_made)
    pace.observe(pending)  # refused, say, before it asked
    assert pace.work_ms() is None
