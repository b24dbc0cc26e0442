"""When a search's query is embedded: beside the search's first statements, or first.

A search with words sends the statements that need no vector (its settings, the actions arm,
the sessions' text, the full-text arm: :mod:`agents_memory.store.search.memories`) while its
query is embedded, so that both overlap; the local model then leaves those statements a core
and embeds on the others (on two cores: one thread). When the statements are quick and the
query long, waiting for a vector made on every core and sending everything after (one
statement fewer, the vector in hand) is sooner: on this two-core machine a 21-token query took
29 ms on one thread and 18 on two, and the coding pool's first statements 4-5 ms.

:class:`SearchPace` keeps what those statements took in the last searches (and what the
search took after its vector) and hands it to the embedder, which weighs it against what its
threads would save on this query (:meth:`~agents_memory.embeddings.base.Embedder.plan_query`).
Before any search has been timed, the query is embedded beside the statements.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from agents_memory.recall.search import PendingVector, QueryVector

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder

WINDOW = 15
"""Searches remembered: their median is what the next one expects."""


class SearchPace:
    """What a search's statements take on this database, learned from the searches of this
    process (a server's, the daemon's), and the query's vector started accordingly."""

    def __init__(self) -> None:
        self._before: deque[float] = deque(maxlen=WINDOW)
        """Milliseconds from the start of a search to the moment it asked for its vector:
        its statements that need no vector (measured beside the embedding)."""
        self._after: deque[float] = deque(maxlen=WINDOW)
        """Milliseconds from the vector (asked for and there) to the end of a search."""
        self._lock = threading.Lock()

    def work_ms(self) -> float | None:
        """What the statements that need no vector are expected to take (``None``: not yet
        measured)."""
        with self._lock:
            return statistics.median(self._before) if self._before else None

    def start(
        self, embedder: Embedder | None, text: str, embed: Callable[[], QueryVector]
    ) -> PendingVector:
        """``embed`` started on a thread of its own for the query ``text``, first
        (:attr:`PendingVector.first`) when ``embedder`` says that is sooner."""
        first = False
        if embedder is not None:
            work = self.work_ms()
            if work is None:
                embedder.expect_query()
            else:
                first = embedder.plan_query(text, work)
        return PendingVector(embed, first=first)

    def observe(self, pending: PendingVector, *, ended: float | None = None) -> None:
        """Learn from ``pending``'s search, which ended at ``ended`` (``time.monotonic()``;
        default: now). A search that embedded its query first shows only its whole time after
        the vector: less what the part after the vector lately took, that is its first
        statements'."""
        ended = time.monotonic() if ended is None else ended
        if pending.asked is None or pending.ready is None:
            return  # the search never asked for its vector (refused, or no user)
        vector_at = max(pending.asked, pending.ready)
        with self._lock:
            if not pending.first:
                self._before.append((pending.asked - pending.started) * 1000)
                self._after.append((ended - vector_at) * 1000)
            elif self._after:
                after = statistics.median(self._after)
                self._before.append(max(0.0, (ended - vector_at) * 1000 - after))
