"""The query read once: every part of a search takes its words from one parsed query."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agents_memory.store.search.terms import parse_query, query_dates, query_terms
from agents_memory.store.search.words import content_words


def test_one_parse_holds_terms_dates_projects_and_content_words() -> None:
    text = "Why did billing-api drop the retry_queue on 9 July, 2022?"
    parsed = parse_query(text, 3.0)
    day = datetime(2022, 7, 9, tzinfo=UTC)
    assert parsed.text == text
    assert parsed.terms == query_terms(text)
    assert parsed.anchors == ((day, day + timedelta(days=1)),)
    assert parsed.dates == query_dates(text, 3.0)
    assert parsed.dates == ((day - timedelta(days=3), day + timedelta(days=4)),)
    assert "billing-api" in parsed.projects
    assert parsed.words == content_words(text)
    assert {"billi", "retry", "queue"} <= parsed.words
    assert not {"why", "did", "the", "july", "2022"} & parsed.words


def test_full_text_terms_and_content_words_split_words_alike() -> None:
    """One word pattern: an underscore or a hyphen splits a word for both."""
    parsed = parse_query("snake_case foo-bar", 0.0)
    assert parsed.terms.terms == ("'snake'", "'case'", "'foo'", "'bar'")
    assert parsed.words == {"snake", "case", "foo", "bar"}
