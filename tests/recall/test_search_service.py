"""The capture daemon's search service (what ``mcp-agents-memory search`` asks over the
socket): the same search, its embedding backend made on the first query with words, kept,
and let go when idle; a caller of another identity is refused. Real database, a real HTTP
embedding server."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.errors import SearchRefused, UnknownProjectError
from agents_memory.recall import search_service
from agents_memory.recall.search import prepare_search, search_database
from agents_memory.recall.search_request import SearchRequest
from agents_memory.recall.search_service import SearchService
from agents_memory.recall.search_wire import search_line
from tests.conftest import TEST_DIM, TEST_MODEL
from tests.embeddings.fake_openai import FakeEmbeddingServer
from tests.search.helpers import add, mem

ARGS: dict[str, Any] = {"query": "staging port", "limit": 5}


@pytest.fixture
def embeddings() -> Iterator[FakeEmbeddingServer]:
    server = FakeEmbeddingServer(dim=TEST_DIM)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def service_settings(
    make_settings: Any, db_url: str, conn: psycopg.Connection[Any], embeddings: FakeEmbeddingServer
) -> Settings:
    add(conn, [mem("the staging port is 5433"), mem("lunch order")])
    result: Settings = make_settings(
        database_url=db_url,
        embedding_backend="openai",
        embedding_model=TEST_MODEL,
        embedding_dim=TEST_DIM,
        embedding_base_url=embeddings.base_url,
    )
    return result


def _ask(service: SearchService, settings: Settings, **args: Any) -> dict[str, Any]:
    request = SearchRequest.build(**{**ARGS, **args})
    line = json.loads(search_line(settings, request, datetime.now(UTC)))
    answer: dict[str, Any] = json.loads(service.answer(line))
    return answer


def test_the_backend_is_made_once_used_for_the_query_and_let_go_when_idle(
    service_settings: Settings, embeddings: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = SearchService(service_settings)
    try:
        first = _ask(service, service_settings)
        assert first["notes"] == []
        assert first["result"]["vector_used"] is True
        assert first["result"]["results"][0]["message"] == "the staging port is 5433"
        _ask(service, service_settings, platform="claude")
        assert len(embeddings.requests) == 2  # one query each, one backend
        assert service._embedder is not None
        service.tick()
        assert service._embedder is not None  # still fresh
        monkeypatch.setattr(search_service, "EMBEDDER_IDLE_SEC", 0.0)
        service.tick()
        assert service._embedder is None
        newest = _ask(service, service_settings, query="")
        assert newest["result"]["used"] == "recency" and len(embeddings.requests) == 2
    finally:
        service.close()


def test_a_caller_of_another_user_is_refused_and_bad_arguments_are_answered_with_why(
    service_settings: Settings, make_settings: Any, db_url: str
) -> None:
    service = SearchService(service_settings)
    other = make_settings(database_url=db_url, user_name="someone-else")
    try:
        with pytest.raises(SearchRefused):
            _ask(service, other)
        line = json.loads(search_line(service_settings, SearchRequest(), datetime.now(UTC)))
        line["search"]["platform"] = "cluade"
        refused = json.loads(service.answer(line))["refused"]
        assert "did you mean 'claude'?" in refused
        line["search"] = {"drop_table": "memory"}
        assert "not search arguments: drop_table" in json.loads(service.answer(line))["refused"]
        line["search"] = {"project": "no-such-project"}
        assert "no project 'no-such-project'" in json.loads(service.answer(line))["refused"]
    finally:
        service.close()


def test_the_local_model_is_loaded_ahead_and_kept_ready(
    make_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon warms its search at start (the first search after a start would otherwise
    load the model: 2.2 s in issue 31) and an idle daemon keeps it."""
    settings = make_settings(embedding_backend="local")
    service = SearchService(settings)
    try:
        assert service._embedder is None
        service.warm()
        assert service._embedder is not None
        monkeypatch.setattr(search_service, "EMBEDDER_IDLE_SEC", 0.0)
        service.tick()
        assert service._embedder is not None
    finally:
        service.close()


def test_the_query_is_embedded_while_the_statements_that_need_no_vector_run(
    service_settings: Settings, embeddings: FakeEmbeddingServer, db_url: str
) -> None:
    """Issue 31: the daemon's search sends what needs no vector (the actions arm, the
    sessions' text) while the query is being embedded, as the MCP tool does: with the
    embedding server holding its answer, the search's connection has already run them."""
    service = SearchService(service_settings)
    answers: list[dict[str, Any]] = []
    try:
        sent = _sent_while_embedding(
            embeddings, db_url, lambda: answers.append(_ask(service, service_settings))
        )
    finally:
        service.close()
    assert sent is not None and "actions" in sent  # the first round, before the vector came
    assert service.pace.observed == 1  # what they took, for the next query's threads
    assert answers[0]["notes"] == []
    assert answers[0]["result"]["vector_used"] is True
    assert answers[0]["result"]["results"][0]["message"] == "the staging port is 5433"


def test_without_a_daemon_the_command_embeds_while_its_statements_run(
    service_settings: Settings, embeddings: FakeEmbeddingServer, db_url: str
) -> None:
    """Issue 31: the command's own search (no daemon answered) embeds the query on a thread
    while it opens the database and sends what needs no vector, as the daemon does; a project
    that is no tag is refused with no embedding asked for."""
    prepared = prepare_search(
        SearchRequest.build(**ARGS), device_name=service_settings.device_name, now=datetime.now(UTC)
    )
    found: list[Any] = []
    notes: list[str] = []
    sent = _sent_while_embedding(
        embeddings,
        db_url,
        lambda: found.append(search_database(service_settings, prepared, on_note=notes.append)),
    )
    assert sent is not None and "actions" in sent  # the first round, before the vector came
    assert notes == [] and found[0].vector_used is True
    assert found[0].hits[0].message == "the staging port is 5433"

    asked = len(embeddings.requests)
    unknown = prepare_search(
        SearchRequest.build(**{**ARGS, "project": "no-such-project"}),
        device_name=service_settings.device_name,
        now=datetime.now(UTC),
    )
    with pytest.raises(UnknownProjectError):
        search_database(service_settings, unknown, on_note=notes.append)
    assert len(embeddings.requests) == asked


def _sent_while_embedding(
    embeddings: FakeEmbeddingServer, db_url: str, search: Callable[[], None]
) -> str | None:
    """Run ``search`` on a thread with the embedding server holding its answer; the statement
    its connection waits on meanwhile (:func:`_statement_waiting_in_a_transaction`)."""
    embeddings.hold = threading.Event()
    asking = threading.Thread(target=search)
    try:
        asking.start()
        assert embeddings.arrived.wait(30)
        sent = _statement_waiting_in_a_transaction(db_url)
    finally:
        embeddings.hold.set()
        asking.join(60)
    assert not asking.is_alive()
    return sent


def _statement_waiting_in_a_transaction(db_url: str) -> str | None:
    """The last statement of a connection of this database idle inside a transaction (a
    search waiting for its vector) once it is the actions arm's (the last of the first
    round; the statements before it pass through the same state for an instant), waited for
    up to 10 s; else the last such statement seen, or ``None`` when none was."""
    seen: str | None = None
    with psycopg.connect(db_url, autocommit=True) as watcher:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            row = watcher.execute(
                "SELECT query FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND state = 'idle in transaction'"
            ).fetchone()
            if row is not None:
                seen = str(row[0])
                if "actions" in seen:
                    return seen
            time.sleep(0.05)
    return seen


def test_other_phrasings_are_embedded_with_the_query_and_searched_with_their_vectors(
    service_settings: Settings, embeddings: FakeEmbeddingServer
) -> None:
    service = SearchService(service_settings)
    try:
        answer = _ask(service, service_settings, queries=["which port does staging use"])
    finally:
        service.close()
    assert [seen.body["input"] for seen in embeddings.requests] == [
        ["staging port", "which port does staging use"]  # one batch, made while it searched
    ]
    assert answer["notes"] == [] and answer["result"]["vector_used"] is True
    assert answer["result"]["results"][0]["message"] == "the staging port is 5433"


def test_vectors_of_another_model_are_not_compared_and_the_search_says_so(
    make_settings: Any, db_url: str, embeddings: FakeEmbeddingServer, service_settings: Settings
) -> None:
    other = make_settings(
        database_url=db_url,
        embedding_backend="openai",
        embedding_model="another-model",
        embedding_dim=TEST_DIM,
        embedding_base_url=embeddings.base_url,
    )
    service = SearchService(other)
    try:
        answer = _ask(service, other)
    finally:
        service.close()
    assert len(embeddings.requests) == 1  # embedded while the first statements ran
    assert answer["notes"] == [
        f"stored vectors come from {TEST_MODEL}, the configured model is another-model"
        " (run `mcp-agents-memory reembed`); full-text search only"
    ]
    assert answer["result"]["vector_used"] is False
    assert answer["result"]["results"][0]["message"] == "the staging port is 5433"


def test_the_daemons_searches_keep_their_statements_prepared(
    service_settings: Settings,
) -> None:
    """The daemon's connections are given back committed: a connection given back rolled back
    would forget its prepared statements (psycopg deallocates them on ROLLBACK), and every
    search would plan its statements afresh (8 ms a search on the coding pool)."""
    service = SearchService(service_settings)
    try:
        _ask(service, service_settings)
        with service.connections.borrow() as (conn, _user_id):
            kept = conn.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()
    finally:
        service.close()
    assert kept is not None and kept[0] >= 3  # the arms' statements, the sessions' text
