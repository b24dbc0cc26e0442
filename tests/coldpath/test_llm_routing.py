"""Per-role LLM routing and the fallback endpoint, against two real local HTTP servers and
real usage rows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from agents_memory.coldpath.llm import DbUsageRecorder
from agents_memory.coldpath.llm_routing import RoutedLLM, create_llm, role_endpoint
from agents_memory.config import Settings
from agents_memory.errors import ConfigError
from agents_memory.store.coldpath.usage import record_usage, usage_on, utc_today
from tests.coldpath.fake_llm import FakeLLMServer, HTTPFailure
from tests.coldpath.test_llm import GOOD, TagReply


@pytest.fixture
def primary() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def fallback() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def make_llm(make_settings: Any, db_url: str) -> Iterator[Any]:
    made: list[RoutedLLM] = []

    def make(**overrides: Any) -> RoutedLLM:
        settings: Settings = make_settings(database_url=db_url, **overrides)
        llm = create_llm(settings, DbUsageRecorder(lambda: psycopg.connect(db_url)))
        assert isinstance(llm, RoutedLLM)
        made.append(llm)
        return llm

    yield make
    for llm in made:
        llm.close()


def ask(llm: RoutedLLM, role: str = "tagger") -> dict[str, Any] | None:
    answer = llm.complete(role, TagReply, system="tag it", user="fix the HNSW index")
    return None if answer is None else answer.model_dump()


def test_a_refused_connection_falls_back_and_each_endpoint_records_its_own_usage(
    make_llm: Any, primary: FakeLLMServer, fallback: FakeLLMServer, conn: psycopg.Connection[Any]
) -> None:
    down = primary.base_url
    primary.stop()
    llm = make_llm(
        local_llm_base_url=down,
        llm_fallback_base_url=fallback.base_url,
        llm_fallback_model="grok-4-fast",
        llm_fallback_api_key="fb-key",
    )
    fallback.queue(GOOD, GOOD)
    assert ask(llm) == GOOD
    assert ask(llm) == GOOD  # the primary is marked down: straight to the fallback
    assert [r.model for r in fallback.chat_requests] == ["grok-4-fast", "grok-4-fast"]
    assert "max_completion_tokens" in fallback.chat_requests[0].body  # a cloud endpoint
    assert usage_on(conn, "tagger", utc_today()).calls == 0
    used = usage_on(conn, "tagger@fallback", utc_today())
    assert (used.calls, used.tokens_in, used.tokens_out) == (2, 200, 40)


def test_an_http_500_from_the_primary_falls_back(
    make_llm: Any, primary: FakeLLMServer, fallback: FakeLLMServer, conn: psycopg.Connection[Any]
) -> None:
    llm = make_llm(
        local_llm_base_url=primary.base_url,
        llm_response_format="json_object",
        llm_fallback_base_url=fallback.base_url,
        llm_fallback_provider="local",
    )
    primary.queue(HTTPFailure(500, "out of memory"), GOOD)
    fallback.queue(GOOD)
    assert ask(llm) == GOOD
    assert len(primary.chat_requests) == 1 and len(fallback.chat_requests) == 1
    assert ask(llm) == GOOD  # an HTTP error does not mark the primary down
    assert len(primary.chat_requests) == 2 and len(fallback.chat_requests) == 1
    assert usage_on(conn, "tagger", utc_today()).calls == 1
    assert usage_on(conn, "tagger@fallback", utc_today()).calls == 1


def test_budgets_apply_to_each_endpoint(
    make_llm: Any, primary: FakeLLMServer, fallback: FakeLLMServer, conn: psycopg.Connection[Any]
) -> None:
    down = primary.base_url
    primary.stop()
    llm = make_llm(
        local_llm_base_url=down,
        llm_fallback_base_url=fallback.base_url,
        llm_fallback_provider="local",
        tagger_daily_token_budget=150,
    )
    assert ask(llm) is not None  # fallback spends 120 of its own 150
    assert ask(llm) is not None  # 120 < 150: one more
    assert ask(llm) is None  # 240: the fallback's budget is spent
    assert len(fallback.chat_requests) == 2
    assert usage_on(conn, "tagger@fallback", utc_today()).refused == 1


def test_a_spent_primary_budget_degrades_without_asking_the_fallback(
    make_llm: Any, primary: FakeLLMServer, fallback: FakeLLMServer, conn: psycopg.Connection[Any]
) -> None:
    record_usage(conn, "tagger", day=utc_today(), tokens_in=1000)
    conn.commit()
    llm = make_llm(
        local_llm_base_url=primary.base_url,
        llm_fallback_base_url=fallback.base_url,
        llm_fallback_provider="local",
        tagger_daily_token_budget=150,
    )
    assert ask(llm) is None
    assert primary.chat_requests == [] and fallback.chat_requests == []


def test_each_role_goes_to_its_own_endpoint(
    make_llm: Any, primary: FakeLLMServer, fallback: FakeLLMServer
) -> None:
    llm = make_llm(
        local_llm_base_url=primary.base_url,
        librarian_base_url=fallback.base_url,
        librarian_model="big-model",
    )
    assert ask(llm, "tagger") is not None
    assert ask(llm, "librarian") is not None
    assert len(primary.chat_requests) == 1
    assert [r.model for r in fallback.chat_requests] == ["big-model"]


def test_provider_picks_the_local_or_the_cloud_endpoint(make_settings: Any) -> None:
    settings = make_settings(
        local_llm_base_url="http://127.0.0.1:8080/v1",
        llm_base_url="https://api.x.ai/v1",
        llm_api_key="k",
        llm_model="grok-4",
        tagger_provider="xai",
        librarian_provider="local",
    )
    tagger, librarian, clusterer = (
        role_endpoint(settings, r) for r in ("tagger", "librarian", "clusterer")
    )
    assert tagger is not None and (tagger.base_url, tagger.local) == ("https://api.x.ai/v1", False)
    assert librarian is not None and librarian.local and "127.0.0.1" in librarian.base_url
    assert clusterer is not None and clusterer.local  # unset: the local endpoint first


def test_a_cloud_fallback_without_a_model_is_a_config_error(make_settings: Any) -> None:
    settings = make_settings(
        local_llm_base_url="http://127.0.0.1:8080/v1", llm_fallback_base_url="https://x.ai/v1"
    )
    with pytest.raises(ConfigError, match="LLM_FALLBACK_MODEL"):
        create_llm(settings, DbUsageRecorder(lambda: psycopg.connect("dbname=unused")))
