"""How many threads a search's query gets beside the search's first statements: what those
statements take beside a query on each thread count, and what the search takes once its vector
is in, are learned from the searches themselves and handed to the embedder, which chooses; a
query that takes every core leaves the full-text arm for after the vector."""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
import pytest

from agents_memory.embeddings.cores import cores
from agents_memory.recall.pace import WINDOW, SearchPace
from agents_memory.recall.search import PendingVector, QueryVector
from tests.coldpath.embedding_helpers import ScriptedEmbedder


class PlanningEmbedder(ScriptedEmbedder):
    """A backend that gives a query the threads it is told to, and records what it was asked
    to plan with."""

    def __init__(self, threads: int) -> None:
        super().__init__()
        self.threads = threads
        self.planned: list[tuple[str, dict[int, float], dict[int, float]]] = []

    def plan_query(
        self, text: str, work_ms: Mapping[int, float], after_ms: Mapping[int, float] | None = None
    ) -> int | None:
        self.planned.append((text, dict(work_ms), dict(after_ms or {})))
        return self.threads


def _made() -> QueryVector:
    return QueryVector(np.ones(4, dtype=np.float32))


def _searched(
    pace: SearchPace, threads: int | None, asked_ms: float, after_ms: float = 6.0
) -> None:
    """A search whose query had ``threads``, that asked for its vector ``asked_ms`` after it
    started, had it then and ended ``after_ms`` later (now)."""
    pending = PendingVector(_made, threads=threads)
    pending.result()
    pending.started = time.monotonic() - (asked_ms + after_ms) / 1000
    pending.asked = pending.ready = pending.started + asked_ms / 1000
    pace.observe(pending)


def test_the_statements_time_beside_each_thread_count_is_learned_and_handed_to_the_embedder() -> (
    None
):
    pace, embedder = SearchPace(), PlanningEmbedder(threads=2)
    pending = pace.start(embedder, "which port does staging use", _made)
    assert embedder.planned == [("which port does staging use", {}, {})]  # nothing timed yet
    assert pending.threads == 2 and pending.vector() is not None
    for before in (4.0, 5.0, 30.0):
        _searched(pace, 1, before)
    _searched(pace, 2, 9.0)  # beside a query on both cores, the statements share one
    _searched(pace, None, 50.0)  # a backend elsewhere: nothing to weigh
    work = pace.work_ms()
    assert pace.observed == 5
    assert work == {1: pytest.approx(5.0), 2: pytest.approx(9.0)}  # one slow search: no move
    pace.start(embedder, "and the port of production?", _made).result()
    assert embedder.planned[-1] == ("and the port of production?", work, pace.after_ms())
    for _ in range(WINDOW):
        _searched(pace, 1, 20.0)  # the pool grew common words: the old searches are forgotten
    assert pace.work_ms()[1] == pytest.approx(20.0)


def test_a_search_that_never_asked_for_its_vector_teaches_nothing() -> None:
    pace = SearchPace()
    pace.observe(PendingVector(_made, threads=1))  # refused, say, before it asked
    assert pace.work_ms() == {}


def test_what_a_search_takes_once_its_vector_is_in_is_learned_by_thread_count() -> None:
    pace = SearchPace()
    for after in (5.0, 6.0, 40.0):
        _searched(pace, 1, 9.0, after_ms=after)
    _searched(pace, 2, 4.0, after_ms=20.0)  # the full-text arm after the vector: more after
    after_ms = pace.after_ms()  # (each a little later than said: observed a moment after)
    assert after_ms == {1: pytest.approx(6.0, abs=2.5), 2: pytest.approx(20.0, abs=2.5)}
    embedder = PlanningEmbedder(threads=1)
    pace.start(embedder, "which port does staging use", _made).result()
    assert embedder.planned[-1][2] == after_ms


def test_a_vector_made_after_it_was_asked_for_counts_from_when_it_was_ready() -> None:
    pace = SearchPace()
    pending = PendingVector(_made, threads=2)
    pending.result()
    now = time.monotonic()
    pending.started, pending.asked, pending.ready = now - 0.030, now - 0.025, now - 0.010
    pace.observe(pending)  # asked at 5 ms, waited 15 ms for the vector, then 10 ms more
    assert pace.work_ms() == {2: pytest.approx(5.0)}
    assert 10.0 <= pace.after_ms()[2] < 20.0  # not from when it was asked for (25 ms)


@pytest.mark.skipif(cores() < 2, reason="a core to leave needs two")
def test_the_full_text_arm_runs_beside_the_query_only_when_a_core_is_left_to_it() -> None:
    pace = SearchPace()
    every = pace.start(PlanningEmbedder(threads=cores()), "which port", _made)
    fewer = pace.start(PlanningEmbedder(threads=cores() - 1), "which port", _made)
    elsewhere = pace.start(None, "which port", _made)  # a backend that is not on these cores
    assert (every.arm_ahead, fewer.arm_ahead, elsewhere.arm_ahead) == (False, True, True)
    for pending in (every, fewer, elsewhere):
        assert pending.vector() is not None and pending.ready is not None
