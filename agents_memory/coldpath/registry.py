"""The Cold Path's jobs, in the order a tick runs them.

Each entry names a module and a class; the module is imported when the worker starts, so a job
costs nothing until then. A job whose module is not there (a build without it) is skipped with
one log line; any other import error is a bug and raises.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Sequence

from agents_memory.coldpath.base import Job

log = logging.getLogger(__name__)

JOBS: tuple[tuple[str, str], ...] = (
    ("tagger", "agents_memory.coldpath.tagger:TaggerJob"),
    ("embedder", "agents_memory.coldpath.embedder:EmbedderJob"),
    ("librarian", "agents_memory.coldpath.librarian:LibrarianJob"),
    ("clusterer", "agents_memory.coldpath.clusterer:ClustererJob"),
    ("sessions", "agents_memory.coldpath.session_summarizer:SessionSummarizerJob"),
    ("alias_promoter", "agents_memory.coldpath.alias_promoter:AliasPromoterJob"),
    ("search_stats", "agents_memory.coldpath.search_stats:SearchStatsJob"),
)


def job_names() -> list[str]:
    return [name for name, _ in JOBS]


def load_jobs(
    only: tuple[str, ...] | None = None, *, entries: Sequence[tuple[str, str]] = JOBS
) -> list[Job]:
    """New instances of the registered jobs (``only``: just these names), in tick order.
    Raises ``ValueError`` for a name that is not registered."""
    names = [name for name, _ in entries]
    if only is not None:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise ValueError(f"unknown Cold Path job {unknown[0]!r}; known: {', '.join(names)}")
    jobs: list[Job] = []
    for name, target in entries:
        if only is not None and name not in only:
            continue
        job = _load(name, target)
        if job is not None:
            jobs.append(job)
    return jobs


def _load(name: str, target: str) -> Job | None:
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        log.warning(
            "Cold Path job %s is not available in this build (%s); skipping it", name, target
        )
        return None
    job = getattr(module, class_name)()
    if not isinstance(job, Job):
        raise TypeError(f"{target} is not a Cold Path Job")
    return job
