"""What a Cold Path job is, and what it gets to work with.

The worker (``coldpath/worker.py``) holds the singleton lock, wakes on NOTIFY or every
``COLD_PATH_INTERVAL_SEC``, and calls each enabled job's :meth:`Job.run` in a fixed order
(tagger, embedder, librarian, clusterer, alias promoter, search stats). A job claims its own
rows (``FOR UPDATE SKIP LOCKED`` through functions in ``store/``), records per-row failures in
``cold_error`` instead of raising, and reports what it did.

LLM use goes through :class:`LLM` only: it enforces the per-role daily token budget, records
usage, validates the answer into the role's reply model (:mod:`.replies`) and retries once;
``None`` from it means "use your heuristic for this row" (no LLM configured, over budget, or no
valid answer).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

import psycopg

from agents_memory.coldpath.replies import ReplyT
from agents_memory.config import Settings
from agents_memory.store.coldpath.coldqueue import JobReport

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder


class LLM(Protocol):
    """The Cold Path's only way to an LLM (see ``coldpath/llm.py``)."""

    @property
    def available(self) -> bool:
        """An endpoint is configured (it may still be over budget for a role)."""

    def complete(
        self,
        role: str,
        reply: type[ReplyT],
        *,
        system: str,
        user: str,
        max_tokens: int = 256,
    ) -> ReplyT | None:
        """A valid ``reply``, or ``None``: fall back to the heuristic."""


@dataclass(slots=True)
class JobContext:
    conn: psycopg.Connection[Any]
    """A connection owned by the worker; a job commits its own units of work."""
    settings: Settings
    user_id: int
    now: datetime
    llm: LLM | None
    embedder: Embedder | None
    batch_size: int
    drain: bool = False
    """``--once``: work through the whole backlog instead of one batch."""
    stop_requested: Callable[[], bool] = lambda: False
    """True once the worker was asked to stop (SIGTERM): finish the current batch, commit,
    return. A draining job checks it between batches."""
    progress: Callable[[str, int, int], None] | None = None
    """``(job, done, total)`` after each batch while draining (``total`` 0 = unknown); the
    worker shows a progress bar on a terminal."""


class Job(ABC):
    name: str

    def enabled(self, settings: Settings) -> bool:
        return True

    @abstractmethod
    def run(self, ctx: JobContext) -> JobReport:
        """Do one batch (or, with ``ctx.drain``, everything pending). Never raises for a bad
        row: record it in ``cold_error`` and go on. Database outages may raise."""
