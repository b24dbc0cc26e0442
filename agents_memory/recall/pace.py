"""How many threads a search's query is embedded on, beside the search's first statements.

A search with words sends the statements that need no vector (its settings, the actions arm,
the sessions' text, the full-text arm: :mod:`agents_memory.store.search.memories`) while its
query is embedded, so that both overlap. The local model can leave those statements a core
(on two cores: one thread for the query) or take every free core and share one with them for
as long as they run. Which is sooner depends on the query and the pool: a long coding question
beside quick statements is embedded sooner on two threads (on this two-core machine, 21 tokens
took 29 ms on one thread and 18 on two; the coding pool's statements take 4-5 ms); a short
query beside statements over common words (20 ms) is not.

When the query takes every core, nothing is left for the full-text arm beside it (on the
coding pool its statement is most of the first round's work): the arm then waits for the vector
and runs inside the hybrid statement, so the query is not stretched by it
(:attr:`~agents_memory.recall.search.PendingVector.arm_ahead`). The search's work after the
vector then differs by thread count too.

:class:`SearchPace` keeps what those statements took in the last searches, and what the search
took once its vector was in, and hands both to the embedder, which weighs them against what its
threads would save on this query
(:meth:`~agents_memory.embeddings.base.Embedder.plan_query`). Before any search has been timed,
the query leaves the statements a core.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from agents_memory.embeddings.cores import cores
from agents_memory.recall.search import PendingVector, QueryVector

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder

WINDOW = 15
"""Searches remembered: their median is what the next one expects."""


class SearchPace:
    """What a search's statements that need no vector take on this database beside a query on
    each thread count, learned from the searches of this process (a server's, the daemon's),
    and the query's vector started beside them on the threads its embedder chooses."""

    def __init__(self) -> None:
        self._work: dict[int | None, deque[float]] = {}
        """Milliseconds from the start of a search to the moment it asked for its vector (its
        statements that need no vector, as they ran beside the embedding), by the threads
        the query had (``None``: unknown, a backend not on this machine's cores)."""
        self._after: dict[int | None, deque[float]] = {}
        """Milliseconds from the moment a search had its vector (asked for and ready) to its
        end, by the threads the query had."""
        self._lock = threading.Lock()

    def work_ms(self) -> dict[int, float]:
        """What the statements that need no vector are expected to take beside a query on each
        thread count (the median of the last :data:`WINDOW` searches); empty before any."""
        return self._medians(self._work)

    def after_ms(self) -> dict[int, float]:
        """What a search is expected to take once its vector is in, by the threads its query
        had (the median of the last :data:`WINDOW` searches); empty before any."""
        return self._medians(self._after)

    def _medians(self, seen_by: dict[int | None, deque[float]]) -> dict[int, float]:
        with self._lock:
            return {
                threads: statistics.median(seen)
                for threads, seen in seen_by.items()
                if threads is not None and seen
            }

    @property
    def observed(self) -> int:
        """How many searches it remembers."""
        with self._lock:
            return sum(len(seen) for seen in self._work.values())

    def start(
        self, embedder: Embedder | None, text: str, embed: Callable[[], QueryVector]
    ) -> PendingVector:
        """``embed`` started on a thread of its own for the query ``text``, its threads chosen
        by ``embedder`` for the statements the search sends meanwhile (before any search was
        timed: a core left to them); the full-text arm among them only when a core is left."""
        threads = None
        if embedder is not None:
            threads = embedder.plan_query(text, self.work_ms(), self.after_ms())
        return PendingVector(embed, threads=threads, arm_ahead=threads is None or threads < cores())

    def observe(self, pending: PendingVector) -> None:
        """Learn from ``pending``'s search, which has ended (now): its statements ran until it
        asked for its vector, the rest from when it had it (a search that never asked, refused
        before it, teaches nothing)."""
        ended = time.monotonic()
        if pending.asked is None:
            return
        had = max(pending.asked, pending.ready or pending.asked)
        with self._lock:
            work = self._work.setdefault(pending.threads, deque(maxlen=WINDOW))
            work.append((pending.asked - pending.started) * 1000)
            after = self._after.setdefault(pending.threads, deque(maxlen=WINDOW))
            after.append(max(0.0, ended - had) * 1000)
