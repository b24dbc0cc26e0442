"""The search service both the command line and the MCP tool run
(:mod:`agents_memory.recall.search`): the request they build, the query's vector and why a
search runs full-text only."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from agents_memory.daterange import parse_date_range
from agents_memory.errors import SearchArgumentError
from agents_memory.recall.search import (
    backend_query_vector,
    embed_query,
    prepare_search,
    search_user,
)
from agents_memory.recall.search_request import SearchRequest
from tests.coldpath.embedding_helpers import ScriptedEmbedder
from tests.search.helpers import add, mem

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


def _request(device_name: str | None = "test-device", **overrides: Any) -> Any:
    args: dict[str, Any] = {"query": "zeppelin", **overrides}
    return prepare_search(SearchRequest.build(**args), device_name=device_name, now=NOW)


def test_a_request_reads_a_star_as_every_platform_and_blank_words_as_none() -> None:
    request = _request(query="   ", platform="*", project="", since=" ")
    assert request.text is None
    assert request.filters.agent_platform is None
    assert request.filters.p_tag is None and request.filters.date_range is None
    assert _request(query="  zeppelin hangar ").text == "zeppelin hangar"


def test_since_and_until_are_read_relative_to_the_callers_clock() -> None:
    dates = _request(since="yesterday", until="yesterday").filters.date_range
    assert dates is not None
    assert (dates.start, dates.end) == (
        datetime(2026, 3, 9, tzinfo=UTC),
        datetime(2026, 3, 10, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    ("old", "since", "until"),
    [
        ("yesterday", "yesterday", "yesterday"),
        ("2026-02", "2026-02", "2026-02"),
        ("7d", "7d", None),
        ("2026-01-01..2026-02-01", "2026-01-01", "2026-02-01"),
        ("..2026-02-01", None, "2026-02-01"),
    ],
)
def test_the_old_date_range_names_the_same_period_as_since_and_until(
    old: str, since: str | None, until: str | None
) -> None:
    request = SearchRequest.build(date_range=old)
    assert (request.since, request.until) == (since, until)
    assert request.period(NOW) == parse_date_range(old, NOW)


def test_the_old_argument_names_still_build_the_same_request() -> None:
    old = SearchRequest.build(p_tag="shop", agent_platform="claude", date_range="today")
    assert old == SearchRequest(project="shop", platform="claude-code", since="today")
    assert old.platform == "claude-code"  # the short name is resolved on construction


def test_the_wire_form_round_trips_and_refuses_what_is_no_argument() -> None:
    request = SearchRequest(query="zeppelin", project="shop", until="2026-02", limit=3)
    assert SearchRequest.from_wire(json.loads(json.dumps(request.to_wire()))) == request
    with pytest.raises(SearchArgumentError, match="not search arguments: drop_table"):
        SearchRequest.from_wire({"drop_table": "memory"})
    with pytest.raises(SearchArgumentError, match="limit"):
        SearchRequest.from_wire({"limit": "10; DROP"})


def test_a_date_the_search_cannot_read_names_its_argument_and_the_forms() -> None:
    with pytest.raises(SearchArgumentError) as caught:
        _request(since="someday")
    assert caught.value.argument == "since" and caught.value.value == "someday"
    assert "N_days_ago" in str(caught.value)
    with pytest.raises(SearchArgumentError) as empty:
        _request(since="2026-03-01", until="2026-02-01")
    assert empty.value.argument == "until" and "empty" in str(empty.value)


def test_filters_that_do_not_fit_together_are_an_argument_error() -> None:
    with pytest.raises(SearchArgumentError, match="this device's name") as caught:
        _request(device_scope="local", device_name=None)
    assert caught.value.argument is None
    with pytest.raises(SearchArgumentError, match="role"):
        _request(role="system")


def test_a_failing_backend_degrades_to_full_text_and_says_why() -> None:
    embedder = ScriptedEmbedder()
    embedder.down = True
    vector = embed_query(embedder, "zeppelin")
    assert vector.vector is None
    assert vector.note == (
        "embedding the query failed (backend down (scripted)), full-text search only"
    )


def test_a_working_backend_gives_the_query_vector_and_no_note() -> None:
    embedder = ScriptedEmbedder()
    vector = embed_query(embedder, "zeppelin")
    assert vector.vector is not None and vector.vector.shape == (embedder.spec.dim,)
    assert vector.note is None
    assert embed_query(None, "zeppelin").vector is None
    assert embed_query(embedder, None).note is None


def test_without_a_backend_the_command_line_says_it_searches_full_text_only(
    make_settings: Any,
) -> None:
    vector = backend_query_vector(make_settings(embedding_backend="none"), "zeppelin")
    assert vector.vector is None
    assert vector.note == "EMBEDDING_BACKEND=none, full-text search only"
    assert backend_query_vector(make_settings(embedding_backend="none"), None).note is None


def test_the_service_searches_the_users_memories_with_the_settings_knobs(
    conn: psycopg.Connection[Any], make_settings: Any
) -> None:
    ids = add(conn, [mem("zeppelin hangar inspection", platform="codex"), mem("lunch plans")])
    uid = conn.execute("SELECT user_id FROM users WHERE user_name = 'tester'").fetchone()
    assert uid is not None
    settings = make_settings(search_fallback_threshold=0.9)
    result = search_user(conn, int(uid[0]), _request(platform="*"), None, settings)
    assert result.used == "fulltext" and [h.id for h in result.hits] == [ids[0]]
    weak = search_user(conn, int(uid[0]), _request(query="hang"), None, settings)
    assert weak.used == "ilike" and weak.threshold == 0.9


def test_other_phrasings_are_kept_once_checked_and_carried_on_the_wire() -> None:
    request = SearchRequest.build(query="zeppelin", queries=["airship", " Zeppelin ", "", "blimp"])
    assert request.phrasings == ("zeppelin", "airship", "blimp")
    prepared = prepare_search(request, device_name=None, now=NOW)
    assert prepared.text == "zeppelin" and prepared.more == ("airship", "blimp")
    assert SearchRequest.from_wire(json.loads(json.dumps(request.to_wire()))) == request
    assert "queries" not in SearchRequest(query="x").to_wire()  # an older daemon reads it
    only = prepare_search(SearchRequest(queries=("airship",)), device_name=None, now=NOW)
    assert only.text == "airship" and only.more == ()
    with pytest.raises(SearchArgumentError, match="at most 5 phrasings"):
        SearchRequest(query="a", queries=("b", "c", "d", "e", "f"))
    with pytest.raises(SearchArgumentError, match="queries"):
        SearchRequest.build(queries="not a list")
