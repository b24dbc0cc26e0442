"""The machine's cores as a query model sees them: how many are free right now, which core each
of a query's threads runs on, and what a query costs on one thread or on all of them.

Free cores (:func:`threads_now`). A query model uses all its threads only while the machine has
a core free for each: on busy cores two threads wait for each other at every layer.

Placement (:class:`Spread`). With two threads on a free machine, the engine's OpenMP helper
sleeps between queries (and between a query's parallel regions when its spin,
:data:`~agents_memory.embeddings.local.SPIN_COUNT`, runs out) and Linux may wake it on the core
of the thread that woke it, its last: both threads then share one core while the other idles,
and a 7-token query took 42 ms at p95 instead of 11 (60 queries after 30 ms idle, this two-core
machine). For the length of a call on a free machine the calling thread is held on its core and
each helper on another; both are let go after. Only Linux can do this (``sched_setaffinity`` of
a thread id); elsewhere the threads are placed by the system.

Cost (:class:`QueryRates`). What a query takes per token on each thread count, the median of the
last queries embedded, so that a caller sending work of its own meanwhile can weigh every free
thread for the query, sharing a core with that work, against leaving it a core: each measured
as it ran, beside that work, so the sharing is in the figures; and what the caller does once
the query is in, which may differ by thread count (a search runs its full-text arm after the
vector when the query left its statements no core: :func:`soonest`,
:meth:`~agents_memory.embeddings.base.Embedder.plan_query`).
"""

from __future__ import annotations

import logging
import os
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TypeVar

log = logging.getLogger(__name__)

SAMPLES = 3
SAMPLE_GAP_SEC = 0.0003
"""Looks at the run queue, this far apart, before a query model settles for one thread: a
thread that runs for a moment (a database backend finishing the caller's last statement, one
of the caller's own threads going to sleep) is gone by the next look, a busy process is not."""
RATE_WINDOW = 15
"""Queries per thread count whose cost a query model remembers (their median is its rate)."""
RATE_FRESH_SEC = 600.0
"""How long a query's measured cost counts (the machine's load changes)."""
RATE_SURE = 3
"""Queries on a thread count before its measured rate stands alone."""

T = TypeVar("T")


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def threads_now(most: int, *, spare: int = 0) -> int:
    """``most`` threads when the machine has a core free for each of them right now (nothing
    else ready to run, :func:`busy_elsewhere`, in one of :data:`SAMPLES` looks) and ``spare``
    cores more (the caller's own work meanwhile); else one."""
    room = cores() - most - spare
    if most <= 1 or room < 0:
        return 1
    for look in range(SAMPLES):  # a process that keeps a core is ready to run in every look
        if look:
            time.sleep(SAMPLE_GAP_SEC)
        others = busy_elsewhere()
        if others is None:
            return 1
        if others <= room:
            return most
    return 1


def busy_elsewhere() -> int | None:
    """Threads of other processes ready to run at this moment (Linux: ``/proc/loadavg``'s
    running count less this process's own running threads, counted just before and just after
    it, the greater taken: one of ours may start or stop meanwhile); ``None`` where unknown.
    A count of one is the calling thread alone: this process's threads are not counted then
    (a few dozen files, 0.4 ms in a server's process)."""
    try:
        if _running_anywhere() <= 1:
            return 0
        before = _running_here()
        running = _running_anywhere()
        return max(0, running - max(before, _running_here()))
    except (OSError, ValueError, IndexError):
        return None


def _running_anywhere() -> int:
    """Threads running or ready to run on the machine, the caller's included."""
    with open("/proc/loadavg", "rb") as f:
        return int(f.read().split()[3].split(b"/")[0])


def _running_here() -> int:
    """This process's threads in state R (running or ready to)."""
    own = 0
    with os.scandir("/proc/self/task") as tasks:
        for task in tasks:
            try:
                with open(f"{task.path}/stat", "rb") as f:
                    stat = f.read()
            except FileNotFoundError:  # the thread ended meanwhile
                continue
            end = stat.rfind(b")")
            own += stat[end + 2 : end + 3] == b"R"
    return own


class Spread:
    """Holds a multi-threaded call's threads on distinct cores for its length (Linux).

    The engine's helpers are found on the first call that starts them: the threads of this
    process that the call created and that no Python thread owns. One found more or fewer than
    expected, or gone later, and the calls run unplaced from then on (logged once)."""

    def __init__(self) -> None:
        self._helpers: tuple[int, ...] | None = None
        self._usable = hasattr(os, "sched_setaffinity") and os.path.isdir("/proc/self/task")

    @property
    def helpers(self) -> tuple[int, ...]:
        """The engine's helper threads (ids), once a call has started them."""
        return self._helpers or ()

    def run(self, threads: int, call: Callable[[], T]) -> T:
        """``call()`` (on the calling thread, which the engine's team starts from) with its
        ``threads`` on as many cores."""
        if threads <= 1 or not self._usable:
            return call()
        if self._helpers is None:
            return self._find_helpers(threads, call)
        with self._placed():
            return call()

    def _find_helpers(self, threads: int, call: Callable[[], T]) -> T:
        before = _tasks()
        result = call()
        python = {t.native_id for t in threading.enumerate()}
        found = tuple(sorted(_tasks() - before - python))
        if len(found) == threads - 1:
            self._helpers = found
        else:
            self._give_up(f"found {len(found)} new threads for {threads - 1} helpers")
        return result

    @contextmanager
    def _placed(self) -> Iterator[None]:
        allowed = sorted(os.sched_getaffinity(0))
        here = _current_core()
        helpers = self._helpers or ()
        if here is None or here not in allowed or len(allowed) <= len(helpers):
            yield
            return
        start = allowed.index(here)
        others = [allowed[(start + 1 + n) % len(allowed)] for n in range(len(helpers))]
        try:
            os.sched_setaffinity(0, {here})
            for helper, core in zip(helpers, others, strict=True):
                os.sched_setaffinity(helper, {core})
        except OSError as exc:  # a helper ended (ProcessLookupError) or placement is refused
            self._let_go(allowed, helpers)
            self._give_up(f"placing the threads failed ({exc})")
            yield
            return
        try:
            yield
        finally:
            self._let_go(allowed, helpers)

    def _let_go(self, allowed: list[int], helpers: tuple[int, ...]) -> None:
        """The calling thread and the helpers free to run on any of ``allowed`` again."""
        for thread in (0, *helpers):
            try:
                os.sched_setaffinity(thread, allowed)
            except OSError:  # a helper ended meanwhile
                self._give_up("a helper thread ended")

    def _give_up(self, why: str) -> None:
        if self._usable:
            log.debug("query threads run unplaced from now on: %s", why)
        self._usable = False


def _tasks() -> set[int]:
    return {int(name) for name in os.listdir("/proc/self/task")}


def _current_core() -> int | None:
    """The core the calling thread runs on (``/proc/thread-self/stat``'s ``processor``)."""
    try:
        with open("/proc/thread-self/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rfind(b")") + 2 :].split()[36])
    except (OSError, ValueError, IndexError):
        return None


class QueryRates:
    """Milliseconds a token of a query takes on each thread count: the median of the last
    :data:`RATE_WINDOW` queries embedded with it in the last :data:`RATE_FRESH_SEC`.

    A thread count with fewer than :data:`RATE_SURE` such queries is also guessed from the
    others, as if threads divided the work perfectly, and the lower of guess and measure
    taken: the guess errs towards trying more threads, and trying them measures them, so one
    slow call (or a machine busier an hour ago) does not keep a query off them for good. The
    first call on a thread count is not counted: it starts the engine's threads."""

    def __init__(self) -> None:
        self._seen: dict[int, deque[tuple[float, float]]] = {}
        self._started: set[int] = set()
        self._lock = threading.Lock()

    def observe(self, threads: int, tokens: int, ms: float, *, at: float | None = None) -> None:
        """A query of ``tokens`` tokens took ``ms`` on ``threads`` threads (at ``at``,
        ``time.monotonic()``; default: now)."""
        with self._lock:
            if threads not in self._started:
                self._started.add(threads)
                return
            if tokens > 0 and ms > 0:
                seen = self._seen.setdefault(threads, deque(maxlen=RATE_WINDOW))
                seen.append((time.monotonic() if at is None else at, ms / tokens))

    def rate(self, threads: int, *, at: float | None = None) -> float | None:
        """Milliseconds a token on ``threads`` threads (as of ``at``; default: now);
        ``None`` with no query measured lately."""
        now = time.monotonic() if at is None else at
        with self._lock:
            fresh = {
                n: [rate for when, rate in seen if now - when <= RATE_FRESH_SEC]
                for n, seen in self._seen.items()
            }
        measured = {n: statistics.median(v) for n, v in fresh.items() if v}
        guesses = [rate * n / threads for n, rate in measured.items() if n != threads]
        guess = min(guesses) if guesses else None
        mine = measured.get(threads)
        if mine is None or (len(fresh[threads]) < RATE_SURE and guess is not None):
            return guess if mine is None else min(mine, guess or mine)
        return mine

    def age(self, threads: int, *, at: float | None = None) -> float:
        """Seconds since a query on ``threads`` threads was last measured (infinite: never)."""
        now = time.monotonic() if at is None else at
        with self._lock:
            seen = self._seen.get(threads)
            return now - seen[-1][0] if seen else float("inf")

    def cost(self, threads: int, tokens: int) -> float | None:
        """Milliseconds a query of ``tokens`` tokens is expected to take on ``threads``."""
        rate = self.rate(threads)
        return None if rate is None else rate * tokens


def plan_options(
    rates: QueryRates,
    tokens: int,
    counts: Iterable[int],
    work_ms: Mapping[int, float],
    after_ms: Mapping[int, float] | None = None,
) -> dict[int, tuple[float, float, float]]:
    """Each thread count of ``counts`` as :func:`soonest` weighs it: a query of ``tokens``
    tokens at its rate, the caller's work beside it (``work_ms``) and after it (``after_ms``),
    a thread count the work was not yet measured with taken at the best of the others (no
    work measured at all: none); a count with no rate is left out."""
    options = {}
    for threads in counts:
        cost = rates.cost(threads, tokens)
        work = work_ms.get(threads, min(work_ms.values())) if work_ms else 0.0
        after = after_ms.get(threads, min(after_ms.values())) if after_ms else 0.0
        if cost is not None:
            options[threads] = (cost, work, after)
    return options


def soonest(options: Mapping[int, tuple[float, float, float]]) -> int:
    """The thread count with which the caller's whole work is done soonest (``options``: each
    thread count's milliseconds of the query, of the caller's work beside it, each as measured
    beside the other on that many threads, and of the work left once both are done); fewer
    threads on a tie."""

    def done(threads: int) -> tuple[float, int]:
        query, beside, after = options[threads]
        return max(query, beside) + after, threads

    return min(options, key=done)
