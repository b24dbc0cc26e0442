"""What ``doctor`` and ``memory-capture status`` say about the Cold Path.

:func:`coldpath_status` reads the backlog, the last run of every job, today's LLM usage per
role against its budget and whether a worker holds the singleton lock right now. Read-only and
cheap (a handful of counts); safe to call from any machine of the pool.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
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

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["worker_running"] = self.worker_running
        data["degraded"] = self.degraded
        return data


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
    )
