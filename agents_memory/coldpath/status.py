"""What ``doctor`` and ``memory-capture status`` say about the Cold Path.

:func:`coldpath_status` reads the backlog, the last run of every job, today's LLM usage per
role against its budget and whether a worker holds the singleton lock right now. Read-only and
cheap (a handful of counts); safe to call from any machine of the pool.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from agents_memory.config import Settings
from agents_memory.store import vectors
from agents_memory.store.coldpath import coldqueue, usage


@dataclass(frozen=True, slots=True)
class RoleBudget:
    role: str
    calls: int
    tokens: int
    budget: int | None
    """``None`` when the status was read without settings."""
    refused: int
    est_cost: float

    @property
    def over_budget(self) -> bool:
        return self.budget is not None and self.tokens >= self.budget


@dataclass(frozen=True, slots=True)
class ColdPathStatus:
    backlog: coldqueue.Backlog
    last_run_at: datetime | None
    jobs: list[coldqueue.JobRun]
    llm_today: list[RoleBudget]
    worker: coldqueue.LockHolder | None
    """The session holding the lock now; ``None`` = no Cold Path worker is running."""
    llm_configured: bool | None = None
    """``None`` when read without settings."""
    notes: list[str] = field(default_factory=list)
    starting: list[str] = field(default_factory=list)
    """Workers connected without the lock (warming up, or standing by): with no holder, the
    Cold Path is starting, not missing."""
    embed_rate: float | None = None
    """Rows the embedder did per second over the worker's recent ticks; ``None`` when it was
    not measured within :data:`RATE_FRESH`."""

    @property
    def worker_running(self) -> bool:
        return self.worker is not None

    @property
    def degraded(self) -> list[str]:
        """Reasons the Cold Path does less than it could (empty when all is well)."""
        reasons = []
        if self.llm_configured is False:
            reasons.append("no LLM: jobs use heuristics")
        reasons.extend(
            f"{r.role} LLM budget spent today: heuristics" for r in self.llm_today if r.over_budget
        )
        if self.backlog.unembedded is None:
            reasons.append("no vector column: search is full-text only")
        return reasons

    @property
    def embed_eta(self) -> str | None:
        """How long the rows without a vector take at the measured rate, in words (``None``:
        no such backlog)."""
        pending = self.backlog.unembedded
        if not pending:
            return None
        if not self.embed_rate:
            return "time left: not measured yet (the worker measures its pace as it embeds)"
        left = duration_words(pending / self.embed_rate)
        return f"about {left} left at {self.embed_rate:.1f} rows/s (the worker's recent pace)"

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["worker_running"] = self.worker_running
        data["degraded"] = self.degraded
        data["embed_eta"] = self.embed_eta
        return data


RATE_FRESH = timedelta(hours=1)
"""A pace measured longer ago than this says nothing about the backlog now."""


def duration_words(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h 20 min``, ``2 days 4 h``."""
    total = max(0, round(seconds))
    if total < 90:
        return f"{max(total, 1)} s"
    minutes = round(total / 60)
    if minutes < 90:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} days {hours} h" if hours else f"{days} days"


def coldpath_status(
    conn: psycopg.Connection[Any], settings: Settings | None = None
) -> ColdPathStatus:
    """The Cold Path's state as seen from ``conn`` (with ``settings``: budgets and whether an
    LLM is configured)."""
    from agents_memory.coldpath.llm import ROLES, llm_endpoint, role_budget

    now = datetime.now(UTC)
    enabled = vectors.vector_status(conn).enabled
    pending = coldqueue.backlog(conn, now=now, vectors=enabled)
    runs = coldqueue.last_runs(conn)
    spent = {u.role: u for u in usage.usage_by_role(conn, usage.utc_today(now))}
    roles = sorted(set(spent) | (set(ROLES) if settings is not None else set()))
    budgets = [
        RoleBudget(
            role,
            spent[role].calls if role in spent else 0,
            spent[role].tokens if role in spent else 0,
            role_budget(settings, role) if settings is not None else None,
            spent[role].refused if role in spent else 0,
            spent[role].est_cost if role in spent else 0.0,
        )
        for role in roles
    ]
    holder = coldqueue.lock_holder(conn)
    embedding = next((r for r in runs if r.job == "embedder"), None)
    measured = embedding.rate_at if embedding is not None else None
    rate = (
        embedding.rate_per_sec if embedding and measured and now - measured <= RATE_FRESH else None
    )
    notes = []
    target = vectors.reembed_target(conn) if enabled else None
    if target is not None:
        notes.append(f"reembed to {target[0]} ({target[1]} dims) is unfinished")
    return ColdPathStatus(
        backlog=pending,
        last_run_at=max((r.ran_at for r in runs), default=None),
        jobs=runs,
        llm_today=budgets,
        worker=holder,
        llm_configured=(llm_endpoint(settings) is not None) if settings is not None else None,
        notes=notes,
        starting=coldqueue.waiting_workers(conn) if holder is None else [],
        embed_rate=rate,
    )
