"""The Cold Path's LLM backend against a real HTTP server and real usage rows."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Annotated, Any

import psycopg
import pytest
from pydantic import Field, ValidationError

from agents_memory.coldpath.llm import DbUsageRecorder, OpenAICompatibleLLM
from agents_memory.coldpath.llm_routing import create_llm
from agents_memory.coldpath.replies import (
    AliasJudgement,
    DtagClusters,
    Reply,
    TaggerReply,
    parse_reply,
    registry_tagger_reply,
    reply_schema,
)
from agents_memory.config import Settings
from agents_memory.errors import ConfigError
from agents_memory.store.coldpath.usage import usage_by_role, usage_on, utc_today
from tests.coldpath.fake_llm import FakeLLMServer, HTTPFailure, Slow, schema_example


class TagReply(Reply):
    p_tag: Annotated[str, Field(max_length=40)] | None
    d_tag: list[Annotated[str, Field(pattern="^[a-z0-9-]{1,24}$")]] = Field(max_length=3)


TAG_SCHEMA = reply_schema(TagReply)
GOOD = {"p_tag": "memory", "d_tag": ["postgres", "pgvector"]}


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def make_llm(make_settings: Any, db_url: str, server: FakeLLMServer) -> Iterator[Any]:
    made: list[Any] = []

    def make(**overrides: Any) -> Any:
        overrides.setdefault("local_llm_base_url", server.base_url)
        overrides.setdefault("database_url", db_url)
        settings: Settings = make_settings(**overrides)
        llm = create_llm(settings, DbUsageRecorder(lambda: psycopg.connect(db_url)))
        assert llm is not None
        made.append(llm)
        return llm

    yield make
    for llm in made:
        llm.close()


def primary(llm: Any, role: str = "tagger") -> OpenAICompatibleLLM:
    """The backend a role asks first."""
    backend: OpenAICompatibleLLM = llm.routes[role][0]
    return backend


def ask(llm: Any, role: str = "tagger") -> dict[str, Any] | None:
    answer = llm.complete(role, TagReply, system="tag it", user="fix the HNSW index")
    return None if answer is None else answer.model_dump()


def test_no_endpoint_configured_gives_no_llm(make_settings: Any) -> None:
    settings = make_settings()
    assert create_llm(settings, DbUsageRecorder(lambda: psycopg.connect("dbname=unused"))) is None


def test_cloud_endpoint_without_a_model_is_a_config_error(make_settings: Any) -> None:
    settings = make_settings(llm_base_url="https://api.example.com/v1", llm_api_key="k")
    with pytest.raises(ConfigError, match="LLM_MODEL"):
        create_llm(settings, DbUsageRecorder(lambda: psycopg.connect("dbname=unused")))


def test_json_schema_answer_is_returned_and_usage_recorded(
    make_llm: Any, server: FakeLLMServer, conn: psycopg.Connection[Any]
) -> None:
    llm = make_llm(tagger_model="qwen3-14b", llm_price_in_per_mtok=1.0)
    server.queue(GOOD)
    assert ask(llm) == GOOD
    (request,) = server.chat_requests
    assert request.format_type == "json_schema"
    assert request.response_format["json_schema"]["strict"] is True
    assert request.schema == TAG_SCHEMA
    assert request.model == "qwen3-14b"
    assert request.body["max_tokens"] == 256
    assert request.body["chat_template_kwargs"] == {"enable_thinking": False}
    used = usage_on(conn, "tagger", utc_today())
    assert (used.calls, used.tokens_in, used.tokens_out) == (1, 100, 20)
    assert used.est_cost == pytest.approx(100 / 1_000_000)


def test_server_rejecting_json_schema_gets_json_object_with_schema_and_it_is_remembered(
    make_llm: Any, make_settings: Any, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeLLMServer(reject_json_schema=500) as picky:
        llm = make_llm(local_llm_base_url=picky.base_url)
        picky.queue(GOOD, GOOD)
        with caplog.at_level(logging.WARNING):
            assert ask(llm) == GOOD
            assert ask(llm) == GOOD
        formats = [r.format_type for r in picky.chat_requests]
        assert formats == ["json_schema", "json_object", "json_object"]
        assert picky.chat_requests[1].response_format["schema"] == TAG_SCHEMA
        assert primary(llm).response_format == "json_object"
        assert sum("json_object+schema from now on" in r.message for r in caplog.records) == 1


def test_http_400_on_json_schema_also_falls_back(make_llm: Any) -> None:
    with FakeLLMServer(reject_json_schema=400) as picky:
        llm = make_llm(local_llm_base_url=picky.base_url)
        assert ask(llm) == schema_example(TAG_SCHEMA)
        assert [r.format_type for r in picky.chat_requests] == ["json_schema", "json_object"]


def test_json_object_setting_skips_the_probe(make_llm: Any, server: FakeLLMServer) -> None:
    llm = make_llm(llm_response_format="json_object")
    assert ask(llm) is not None
    assert [r.format_type for r in server.chat_requests] == ["json_object"]


def test_an_error_after_json_schema_worked_is_not_taken_for_a_format_refusal(
    make_llm: Any, server: FakeLLMServer
) -> None:
    llm = make_llm()
    server.queue(GOOD, HTTPFailure(500, "model crashed"))
    assert ask(llm) == GOOD
    assert ask(llm) is None
    assert [r.format_type for r in server.chat_requests] == ["json_schema", "json_schema"]
    assert primary(llm).response_format == "json_schema"


def test_invalid_json_then_valid_is_retried_once(make_llm: Any, server: FakeLLMServer) -> None:
    llm = make_llm()
    server.queue('{"p_tag": "mem', GOOD)
    assert ask(llm) == GOOD
    assert len(server.chat_requests) == 2


def test_schema_violation_counts_as_invalid(make_llm: Any, server: FakeLLMServer) -> None:
    llm = make_llm()
    server.queue({"p_tag": "x", "d_tag": ["A B C"]}, {"p_tag": "x", "d_tag": []})
    assert ask(llm) == {"p_tag": "x", "d_tag": []}


def test_invalid_twice_gives_none(
    make_llm: Any, server: FakeLLMServer, conn: psycopg.Connection[Any]
) -> None:
    llm = make_llm()
    server.queue("not json at all", {"p_tag": 3, "d_tag": []}, GOOD)
    assert ask(llm) is None
    assert len(server.chat_requests) == 2
    assert usage_on(conn, "tagger", utc_today()).calls == 2


def test_over_budget_sends_nothing_counts_the_refusal_and_warns_once(
    make_llm: Any,
    server: FakeLLMServer,
    conn: psycopg.Connection[Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    llm = make_llm(llm_daily_token_budget=1000, tagger_daily_token_budget=150, librarian_model="m")
    with caplog.at_level(logging.WARNING):
        assert ask(llm) is not None  # 120 tokens: still under 150
        assert ask(llm) is not None  # 240 tokens: now over
        assert ask(llm) is None
        assert ask(llm) is None
        assert ask(llm, "librarian") is not None  # the global budget still has room
    assert len(server.chat_requests) == 3
    tagger = usage_on(conn, "tagger", utc_today())
    assert (tagger.calls, tagger.tokens, tagger.refused) == (2, 240, 2)
    warnings = [r for r in caplog.records if "budget for tagger is spent" in r.message]
    assert len(warnings) == 1
    assert {u.role for u in usage_by_role(conn, utc_today())} == {"tagger", "librarian"}


def test_zero_budget_means_no_calls(make_llm: Any, server: FakeLLMServer) -> None:
    llm = make_llm(llm_daily_token_budget=0)
    assert ask(llm) is None
    assert server.chat_requests == []


def test_budget_resets_on_the_next_utc_day(
    make_llm: Any, server: FakeLLMServer, conn: psycopg.Connection[Any]
) -> None:
    llm = make_llm(llm_daily_token_budget=100)
    conn.execute(
        "INSERT INTO llm_usage (day, role, calls, tokens_in) VALUES (%s, 'tagger', 1, 500)",
        (datetime(2020, 1, 1, tzinfo=UTC).date(),),
    )
    conn.commit()
    assert ask(llm) is not None


def test_unreachable_endpoint_returns_none_quickly_and_then_skips(
    make_llm: Any, server: FakeLLMServer
) -> None:
    url = server.base_url
    server.stop()
    llm = make_llm(local_llm_base_url=url)
    assert ask(llm) is None
    assert ask(llm) is None  # marked down: no second connection attempt


def test_slow_endpoint_times_out(make_llm: Any, server: FakeLLMServer) -> None:
    llm = make_llm(llm_timeout_sec=0.3)
    server.queue(Slow(3.0, GOOD))
    assert ask(llm) is None


def test_fenced_json_is_accepted() -> None:
    value, _ = parse_reply('```json\n{"p_tag": null, "d_tag": []}\n```', TagReply)
    assert value == TagReply(p_tag=None, d_tag=[])


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"p_tag": None}, "$.d_tag: Field required"),
        ({"p_tag": None, "d_tag": [], "x": 1}, "$.x: Extra inputs are not permitted"),
        ({"p_tag": "a" * 41, "d_tag": []}, "at most 40 characters"),
        ({"p_tag": None, "d_tag": ["a", "b", "c", "d"]}, "at most 3 items"),
        ({"p_tag": None, "d_tag": ["Bad Tag"]}, "should match pattern"),
        ({"p_tag": True, "d_tag": []}, "$.p_tag: Input should be a valid string"),
        ({"p_tag": 3, "d_tag": []}, "$.p_tag: Input should be a valid string"),
    ],
)
def test_reply_model_finds_each_violation(value: dict[str, Any], problem: str) -> None:
    answer, why = parse_reply(json.dumps(value), TagReply)
    assert answer is None
    assert problem in why


def test_reply_model_enum_and_numbers() -> None:
    good = {"relation": "alias", "same_project": True, "confidence": 1, "rationale": ""}
    assert AliasJudgement.model_validate(good).confidence == 1.0
    for bad in ({"relation": "other"}, {"confidence": 1.5}, {"confidence": True}):
        with pytest.raises(ValidationError):
            AliasJudgement.model_validate(good | bad)


def test_sent_schemas_fit_strict_mode_every_property_required_and_closed() -> None:
    def objects(node: Any) -> Iterator[dict[str, Any]]:
        if isinstance(node, dict):
            if node.get("type") == "object":
                yield node
            for child in node.values():
                yield from objects(child)
        elif isinstance(node, list):
            for child in node:
                yield from objects(child)

    for model in (TaggerReply, registry_tagger_reply(("core", "web")), DtagClusters):
        schema = reply_schema(model)
        assert "default" not in json.dumps(schema)
        for node in objects(schema):
            assert node["additionalProperties"] is False
            assert sorted(node["required"]) == sorted(node["properties"])


def test_a_field_a_lax_server_leaves_out_takes_its_default() -> None:
    answer, _ = parse_reply(
        '{"relation": "rename", "same_project": true, "confidence": 0.5, "rationale": "r"}',
        AliasJudgement,
    )
    assert answer is not None
    assert (answer.source_should_alias_target, answer.evidence_memory_ids) == (True, [])


def test_registry_reply_accepts_only_the_registry_names() -> None:
    reply = registry_tagger_reply(("core",))
    assert reply_schema(reply)["properties"]["p_tag"]["anyOf"][0]["enum"] == ["core"]
    assert parse_reply('{"p_tag": "core", "d_tag": []}', reply)[0] is not None
    assert parse_reply('{"p_tag": null, "d_tag": []}', reply)[0] is not None
    assert parse_reply('{"p_tag": "NEW:x", "d_tag": []}', reply)[0] is None
