"""How many threads a search's query gets beside the search's first statements: what those
statements take beside a query on each thread count is learned from the searches themselves
and handed to the embedder, which chooses."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from agents_memory.recall.pace import WINDOW, SearchPace
from agents_memory.recall.search import PendingVector, QueryVector
from tests.coldpath.embedding_helpers import ScriptedEmbedder


class PlanningEmbedder(ScriptedEmbedder):
    """A backend that gives a query the threads it is told to, and records what it was asked
    to plan with."""

    def __init__(self, threads: int) -> None:
        super().__init__()
        self.threads = threads
        self.planned: list[tuple[str, dict[int, float]]] = []

    def plan_query(self, text: str, work_ms: Mapping[int, float]) -> int | None:
        self.planned.append((text, dict(work_ms)))
        return self.threads


def _made() -> QueryVector:
    return QueryVector(np.ones(4, dtype=np.float32))


def _searched(pace: SearchPace, threads: int | None, asked_ms: float) -> None:
    """A search whose query had ``threads`` and that asked for its vector ``asked_ms`` after
    it started."""
    pending = PendingVector(_made, threads=threads)
    pending.result()
    pending.asked = pending.started + asked_ms / 1000
    pace.observe(pending)


def test_the_statements_time_beside_each_thread_count_is_learned_and_handed_to_the_embedder() -> (
    None
):
    pace, embedder = SearchPace(), PlanningEmbedder(threads=2)
    pending = pace.start(embedder, "which port does staging use", _made)
    assert embedder.planned == [("which port does staging use", {})]  # nothing timed yet
    assert pending.threads == 2 and pending.vector() is not None
    for before in (4.0, 5.0, 30.0):
        _searched(pace, 1, before)
    _searched(pace, 2, 9.0)  # beside a query on both cores, the statements share one
    _searched(pace, None, 50.0)  # a backend elsewhere: nothing to weigh
    work = pace.work_ms()
    assert pace.observed == 5
    assert work == {1: pytest.approx(5.0), 2: pytest.approx(9.0)}  # one slow search: no move
    pace.start(embedder, "and the port of production?", _made).result()
    assert embedder.planned[-1] == ("and the port of production?", work)
    for _ in range(WINDOW):
        _searched(pace, 1, 20.0)  # the pool grew common words: the old searches are forgotten
    assert pace.work_ms()[1] == pytest.approx(20.0)


def test_a_search_that_never_asked_for_its_vector_teaches_nothing() -> None:
    pace = SearchPace()
    pace.observe(PendingVector(_made, threads=1))  # refused, say, before it asked
    assert pace.work_ms() == {}
