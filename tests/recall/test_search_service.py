"""The capture daemon's search service (what ``mcp-agents-memory search`` asks over the
socket): the same search, its embedding backend made on the first query with words, kept,
and let go when idle; a caller of another identity is refused. Real database, a real HTTP
embedding server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.errors import SearchRefused
from agents_memory.recall import search_service
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
