"""The query read once: every part of a search takes its words from one parsed query."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agents_memory.store.search.confidence import word_finder
from agents_memory.store.search.terms import parse_query, query_dates, query_terms
from agents_memory.store.search.words import WORD, content_words, stem


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


@pytest.mark.parametrize(
    "text",
    [
        "Logging in: the login_logs were logged",
        "LOG log-log logs, a blog and catalogues",
        "Migrations migrated; the migration's column",
        "마이그레이션 über Über naïve café e7731x E7731",
        "",
    ],
)
def test_a_hits_coverage_finds_the_stems_splitting_its_text_would(text: str) -> None:
    """A hit's text is scanned once for the query's stems (:func:`word_finder`), and finds
    exactly what splitting it into words and stemming each would."""
    words = content_words("log logs login migration column über café e7731 마이그레이션")
    split = {stem(w) for w in WORD.findall(text.lower())} & words
    found = {stem(m[0]) for m in word_finder(words).finditer(text.lower())}
    assert found == split
