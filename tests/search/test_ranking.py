"""Hybrid search: the arms, their fusion, the priors, the fallback and the explanations."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from agents_memory.store.search import SearchTuning
from agents_memory.store.search.terms import query_terms

from .helpers import add, mem, messages, near, run, unit

DOCS = {
    "en": "We discussed the migrations of inotify events in the capture daemon",
    "ru": "Мы обсуждали миграцию базы данных на новый сервер",
    "ko": "어제 데이터베이스 마이그레이션을 진행했습니다",
    "other": "Lunch plans for Friday: pizza or ramen",
}


@pytest.fixture
def multilingual(conn: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
    add(conn, [mem(text) for text in DOCS.values()])
    return conn


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("how did we migrate the inotify event handling?", DOCS["en"]),
        ("миграция сервера", DOCS["ru"]),
        ("마이그레이션이 뭐였지", DOCS["ko"]),  # particle 이 on the query word, 을 in the text
        ("데이터베이스", DOCS["ko"]),
    ],
)
def test_fulltext_finds_english_and_russian_stems_and_korean_with_particles(
    multilingual: psycopg.Connection[Any], query: str, expected: str
) -> None:
    result = run(multilingual, query)
    assert result.used == "fulltext"
    assert messages(result)[0] == expected
    assert DOCS["other"] not in messages(result)
    assert result.hits[0].why.arms == ("fulltext",)
    assert result.hits[0].why.fts_rank == 1


def test_a_long_question_matches_with_any_of_its_words(
    multilingual: psycopg.Connection[Any],
) -> None:
    result = run(multilingual, "what was decided about pizza for the team lunch next week?")
    assert messages(result) == [DOCS["other"]]


def test_query_words_become_quoted_terms_and_escaped_like_patterns() -> None:
    terms = query_terms("It's 50% of snake_case 마이그레이션을 'x' | !")
    assert terms.tsquery == "'it' | '50' | 'of' | 'snake' | 'case' | '마이그레이션':*"
    # "of" is a stop word: a third of any English text holds it, no pattern finds by it
    assert terms.like_patterns == ("%it's%", "%50\\%%", "%snake\\_case%", "%마이그레이션%")


def test_vector_arm_finds_a_row_with_no_word_overlap(conn: psycopg.Connection[Any]) -> None:
    target, *_ = add(
        conn,
        [mem("the kettle is boiling"), mem("renewed the TLS certificate"), mem("fixed CI cache")],
        [near(0, 0.9, 1), near(0, 0.1, 2), near(0, 0.05, 3)],
    )
    result = run(conn, "hot water for tea", unit((0, 1.0)))
    assert result.used == "vector"
    assert result.vector_used
    assert result.hits[0].id == target
    why = result.hits[0].why
    assert why.arms == ("vector",) and why.vector_rank == 1 and why.fts_rank is None
    assert why.similarity == pytest.approx(0.9, abs=0.01)
    assert result.top_similarity == pytest.approx(0.9, abs=0.01)


def test_a_row_found_by_both_arms_ranks_above_rows_found_by_one(
    conn: psycopg.Connection[Any],
) -> None:
    text_only, both, vector_only, *_ = add(
        conn,
        [
            mem("vacuum the living room on sunday"),  # best text match, not embedded yet
            mem("postgres vacuum tuning notes"),  # text match and a fairly near vector
            mem("autovacuum thresholds for big tables"),  # nearest vector, no word match
            *(mem(f"unrelated note {i}") for i in range(5)),  # far vectors, no word match
        ],
        [None, near(0, 0.7, 1), near(0, 0.95, 2), *(near(0, 0.1, 3 + i) for i in range(5))],
    )
    result = run(conn, "vacuum", unit((0, 1.0)), limit=3)
    assert result.used == "hybrid"
    assert result.hits[0].id == both
    assert {h.id for h in result.hits[1:]} == {text_only, vector_only}
    first, second = result.hits[0].why, result.hits[1].why
    assert first.arms == ("fulltext", "vector")
    assert first.fts_rank in (1, 2) and first.vector_rank == 2
    assert first.score is not None and second.score is not None and first.score > second.score
    assert {h.why.arms for h in result.hits[1:]} == {("fulltext",), ("vector",)}


def test_a_match_on_a_minor_part_of_the_query_counts_less_than_the_vector_arm(
    conn: psycopg.Connection[Any],
) -> None:
    """Each message holds one of the query's four words: none covers the question, so the
    best of them is not a full-text score of 1 against the nearest vector's 1 (the floor of the
    normalisation, with the arms' fixed weights; test_fusion.py weighs them by confidence)."""
    one_word, nearest, *_ = add(
        conn,
        [
            mem("staging is slow"),
            mem("changed the credentials of the db last week"),  # no word of the query
            mem("rotate the tyres of the car before the winter trip"),
            mem("password manager for the whole family at home"),
            mem("database of old recipes from grandma"),
        ],
        [near(0, 0.3, 1), near(0, 0.9, 2), near(0, 0.1, 3), near(0, 0.1, 4), near(0, 0.1, 5)],
    )
    query, vector = "rotate the staging database password", unit((0, 1.0))
    fixed = SearchTuning(arm_weighting=False)
    result = run(conn, query, vector, tuning=fixed)
    assert result.hits[0].id == nearest
    assert result.hits[0].why.arms == ("vector",)
    hit = next(h for h in result.hits if h.id == one_word)
    lexical_part = (hit.why.fused_score or 0) - 0.55 * (0.3 - 0.1) / (0.9 - 0.1)
    assert 0 < lexical_part < 0.45 * 0.7  # well below the full-text arm's whole weight
    # normalised by the best row alone, the one-word match would lead
    plain = run(conn, query, vector, tuning=SearchTuning(lexical_floor=0.0, arm_weighting=False))
    assert [h.id for h in plain.hits[:2]] == [one_word, nearest]


def test_a_match_on_every_word_keeps_the_whole_full_text_weight(
    conn: psycopg.Connection[Any],
) -> None:
    whole, *_ = add(
        conn,
        [mem("rotate the staging database password"), mem("staging"), mem("unrelated")],
        [near(0, 0.2, 1), near(0, 0.9, 2), near(0, 0.1, 3)],
    )
    fixed = SearchTuning(arm_weighting=False)  # the arms' fixed weights
    result = run(conn, "rotate the staging database password", unit((0, 1.0)), tuning=fixed)
    hit = next(h for h in result.hits if h.id == whole)
    lexical_part = (hit.why.fused_score or 0) - 0.55 * (0.2 - 0.1) / (0.9 - 0.1)
    assert lexical_part == pytest.approx(0.45, abs=0.01)


def test_recency_prior_orders_ties_newest_first(conn: psycopg.Connection[Any]) -> None:
    old, new, middle = add(
        conn,
        [
            mem("deploy checklist", age_days=300),
            mem("deploy checklist", age_days=0.5),
            mem("deploy checklist", age_days=40),
        ],
    )
    result = run(conn, "deploy checklist", tuning=SearchTuning(recency_halflife_days=30))
    assert [h.id for h in result.hits] == [new, middle, old]
    factors = [h.why.recency_factor or 0 for h in result.hits]
    assert factors[0] > factors[1] > factors[2] >= 0.5  # gentle: never below half
    assert factors[0] <= 1.0


def test_pinned_boost_lifts_a_pinned_row_over_an_equal_newer_one(
    conn: psycopg.Connection[Any],
) -> None:
    newer, pinned = add(
        conn,
        [mem("release process", age_days=1), mem("release process", age_days=2, pinned=True)],
    )
    result = run(conn, "release process")
    assert [h.id for h in result.hits] == [pinned, newer]
    assert result.hits[0].is_pinned
    assert result.hits[0].why.pinned_factor == pytest.approx(1.25)
    assert result.hits[1].why.pinned_factor == pytest.approx(1.0)


def test_ilike_fallback_matches_words_not_the_whole_query(conn: psycopg.Connection[Any]) -> None:
    both, kube, proxy, _ = add(
        conn,
        [
            mem("kubectl rollout behind the nginx ingress", age_days=5),
            mem("ran kubectl get pods", age_days=1),
            mem("nginx reload failed", age_days=2),
            mem("nothing relevant here", age_days=0.1),
        ],
    )
    # Neither "ubect" nor "ngin" is a word of any message: no full-text hit, no vector.
    result = run(conn, "ubect ngin")
    assert result.used == "ilike"
    assert result.threshold == pytest.approx(0.3)
    assert [h.id for h in result.hits] == [both, kube, proxy]
    assert [h.why.words_matched for h in result.hits] == [2, 1, 1]
    assert result.hits[0].why.arms == ("ilike",)
    assert result.note and "matched by words" in result.note


def test_ilike_fallback_treats_like_wildcards_literally(conn: psycopg.Connection[Any]) -> None:
    add(conn, [mem("rate is 5x0 today"), mem("variable 5_0 set")])
    result = run(conn, "5_0")
    assert result.used == "ilike"
    assert messages(result) == ["variable 5_0 set"]


def test_the_word_fallback_never_matches_by_a_stop_word(conn: psycopg.Connection[Any]) -> None:
    """ "about" is in a third of any English text: a search whose other words match nothing
    says "no match" instead of listing the turns that hold "about"."""
    ids = add(
        conn,
        [mem("tell me about the deploy"), mem("what about lunch"), mem("the caching layer")],
        [near(0, 0.1, 1), near(0, 0.1, 2), near(0, 0.1, 3)],
    )
    result = run(conn, "qwertz about", unit((0, 1.0)))
    assert result.used == "vector" and result.weak  # the nearest, each weak: no ILIKE hit
    assert result.note and result.note.startswith("no match: ")
    assert {h.id for h in result.hits} <= set(ids)
    assert all(h.why.words_matched is None for h in result.hits)
    partial = run(conn, "achin about", unit((0, 1.0)))  # a part of a word is still found
    assert partial.used == "ilike" and messages(partial) == ["the caching layer"]


def test_weak_vectors_trigger_the_fallback(conn: psycopg.Connection[Any]) -> None:
    add(
        conn,
        [mem("grafana dashboards"), mem("prometheus alerting rules")],
        [near(0, 0.1, 1), near(0, 0.2, 2)],
    )
    result = run(conn, "afana", unit((0, 1.0)))
    assert result.used == "ilike"
    assert messages(result) == ["grafana dashboards"]
    assert result.top_similarity == pytest.approx(0.2, abs=0.01)


def test_weak_vectors_are_still_shown_when_no_word_matches(
    conn: psycopg.Connection[Any],
) -> None:
    add(conn, [mem("grafana dashboards")], [near(0, 0.1, 1)])
    result = run(conn, "zzzz", unit((0, 1.0)))
    assert result.used == "vector"
    assert messages(result) == ["grafana dashboards"]
    assert result.note and result.note.startswith("no match: ")


def test_nonsense_says_no_match_and_shows_only_the_few_nearest_never_a_padded_page(
    conn: psycopg.Connection[Any],
) -> None:
    """The query "xylophone zebra mango" against ten unrelated turns: one wording ("no
    match", why, what is shown) and at most ``weak_shown`` rows, not ten under a weak-match
    note; the numbers are never rounded into "0.02 is below 0.02"."""
    add(
        conn, [mem(f"deploy note {i}") for i in range(10)], [near(0, 0.1, i + 1) for i in range(10)]
    )
    result = run(conn, "xylophone zebra mango", unit((0, 1.0)), limit=10)
    assert result.weak and len(result.hits) == SearchTuning().weak_shown
    assert result.note is not None
    assert result.note.startswith("no match: nothing in memory answers this well")
    assert "the 3 nearest are shown, each weak" in result.note
    assert "0.012 or more" in result.note


def test_no_query_lists_newest_first(conn: psycopg.Connection[Any]) -> None:
    old, new, mid = add(conn, [mem("a", age_days=9), mem("b", age_days=1), mem("c", age_days=3)])
    for query in (None, "   "):
        result = run(conn, query, limit=2)
        assert result.used == "recency"
        assert [h.id for h in result.hits] == [new, mid]
        assert result.hits[0].why.arms == ("recency",)
    assert old


def test_every_hit_carries_its_fields_and_why(conn: psycopg.Connection[Any]) -> None:
    add(conn, [mem("hnsw index build for pgvector", platform="codex")], [near(0, 0.8, 1)])
    result = run(conn, "hnsw", unit((0, 1.0)))
    hit = result.hits[0]
    assert (hit.role, hit.agent_platform, hit.device_name) == ("user", "codex", "test-device")
    assert hit.message_at.tzinfo is not None
    data = result.as_dict()
    assert data["used"] == "hybrid" and data["count"] == 1
    why = data["results"][0]["why"]
    assert why["arms"] == ["fulltext", "vector"]
    assert {"fts_rank", "fts_score", "vector_rank", "similarity", "fused_score", "score"} <= set(
        why
    )
    assert data["results"][0]["similarity"] == pytest.approx(0.8, abs=0.01)


def test_fulltext_hits_report_their_cosine_similarity_too(conn: psycopg.Connection[Any]) -> None:
    """A text-only hit whose row has a vector still shows how close it is."""
    rows = [mem(f"filler note {i}", age_days=5) for i in range(45)] + [mem("zeppelin")]
    vectors = [near(0, 0.99, 1 + i) for i in range(45)] + [near(0, 0.3, 100)]
    *_, text_row = add(conn, rows, vectors)
    # the lexical arm weighs more than the vector arm here, so that the text-only hit makes
    # the page against 45 near-identical vector hits
    tuning = SearchTuning(lexical_weight=0.6)
    result = run(conn, "zeppelin", unit((0, 1.0)), limit=10, tuning=tuning)
    hit = next(h for h in result.hits if h.id == text_row)
    assert hit.why.arms == ("fulltext",)  # beyond the vector arm's 40-row pool
    assert hit.why.similarity == pytest.approx(0.3, abs=0.01)
