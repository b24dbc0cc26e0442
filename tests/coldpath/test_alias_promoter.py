"""AliasPromoter: signals -> judged pairs -> pending questions; rejections are permanent;
auto-apply only when asked for; the d_tag promoter's new-tag suggestions."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import psycopg

from agents_memory.coldpath.alias_promoter import AliasPromoterJob
from agents_memory.config import Settings
from agents_memory.store.coldpath import tag_suggestions as suggestion_store
from agents_memory.store.recall import briefdata

from .jobkit import NOW, ScriptedLLM, add, answers, context, make_tag, real_llm, row


def _file(
    conn: psycopg.Connection[Any],
    settings: Settings,
    tag_id: int | None,
    n: int,
    *,
    d_tags: list[str] | None = None,
    text: str = "work item",
    vector: str | None = None,
) -> list[int]:
    ids = add(conn, settings, *(row(f"{text} {i}") for i in range(n)))
    conn.execute(
        "UPDATE memory SET p_tag_id = %s, d_tag = %s, tag_processed = true WHERE id = ANY(%s)",
        (tag_id, d_tags or [], ids),
    )
    if vector is not None:
        conn.execute("UPDATE memory SET embedding = %s::halfvec WHERE id = ANY(%s)", (vector, ids))
    conn.commit()
    return ids


def _rows(conn: psycopg.Connection[Any]) -> list[tuple[str, str, str, str]]:
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT s.name, t.name, a.relation, a.status FROM project_tag_alias_suggestions a"
            " JOIN project_tags s ON s.id = a.source_tag_id"
            " JOIN project_tags t ON t.id = a.target_tag_id ORDER BY a.id"
        ).fetchall()
    ]


def _renamed_pair(conn: psycopg.Connection[Any], settings: Settings) -> tuple[int, int]:
    old = make_tag(conn, "agents-memory")
    new = make_tag(conn, "hive-mind")
    _file(conn, settings, old, 6)
    _file(conn, settings, new, 2)
    add(conn, settings, row("FYI I renamed agents-memory to hive-mind last week"))
    return old, new


def test_an_explicit_rename_statement_becomes_a_pending_question_without_an_llm(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    _old, new = _renamed_pair(conn, settings)
    ctx = context(conn, settings)
    report = AliasPromoterJob().run(ctx)
    assert (report.processed, report.heuristic) == (1, 1)
    assert _rows(conn) == [("hive-mind", "agents-memory", "rename", "pending")]
    (question,) = briefdata.pending_questions(conn, ctx.user_id, 5)
    assert question.text == '"hive-mind" -> "agents-memory"? (rename)'
    parent = conn.execute("SELECT alias_of FROM project_tags WHERE id = %s", (new,)).fetchone()
    assert parent == (None,)  # nothing merges until a person confirms
    AliasPromoterJob().run(ctx)
    assert len(_rows(conn)) == 1


def test_similar_names_alone_stay_a_memo_and_are_not_judged_again_soon(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    _file(conn, settings, make_tag(conn, "memory-server"), 5)
    _file(conn, settings, make_tag(conn, "memory-servers"), 5)
    ctx = context(conn, settings)
    AliasPromoterJob().run(ctx)
    assert _rows(conn) == [("memory-servers", "memory-server", "insufficient", "expired")]
    assert briefdata.pending_questions(conn, ctx.user_id, 5) == []
    AliasPromoterJob().run(ctx)
    assert len(_rows(conn)) == 1


def test_a_rejected_pair_is_never_suggested_again(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    _renamed_pair(conn, settings)
    ctx = context(conn, settings)
    AliasPromoterJob().run(ctx)
    (pending,) = suggestion_store.alias_suggestions(conn, ctx.user_id)
    suggestion_store.decide_alias_suggestion(conn, pending.id, "rejected")
    conn.commit()
    add(conn, settings, row("again: hive-mind is the same as agents-memory"))
    conn.execute("UPDATE project_tag_alias_suggestions SET created_at = now() - interval '1 year'")
    conn.commit()
    later = context(conn, settings, now=NOW + timedelta(days=400))
    AliasPromoterJob().run(later)
    assert _rows(conn) == [("hive-mind", "agents-memory", "rename", "rejected")]


def test_the_llm_judge_decides_and_unknown_evidence_ids_are_dropped(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    old, _new = _renamed_pair(conn, settings)
    shown = _file(conn, settings, old, 1, text="representative")
    llm = answers(
        {
            "relation": "same_project",
            "same_project": True,
            "source_should_alias_target": True,
            "confidence": 0.93,
            "evidence_memory_ids": [shown[0], 999_999],
            "rationale": "renamed",
        }
    )
    ctx = context(conn, settings, llm=llm)
    report = AliasPromoterJob().run(ctx)
    assert report.llm_calls == 1 and llm.roles() == ["project_alias_judge"]
    assert _rows(conn) == [("hive-mind", "agents-memory", "same_project", "pending")]
    found = conn.execute(
        "SELECT evidence_memory_ids, confidence::float8, auto_apply_eligible"
        " FROM project_tag_alias_suggestions"
    ).fetchone()
    assert found == ([shown[0]], 0.93, False)
    assert "renamed agents-memory to hive-mind" in llm.calls[0].user


def test_a_different_verdict_is_not_a_question(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    _renamed_pair(conn, settings)
    llm = answers(
        {"relation": "different", "same_project": False, "confidence": 0.9, "rationale": "no"}
    )
    AliasPromoterJob().run(context(conn, settings, llm=llm))
    assert _rows(conn) == [("hive-mind", "agents-memory", "different", "expired")]


def test_vector_similarity_alone_never_makes_one_project(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    same = "[" + ",".join(["1"] + ["0"] * 383) + "]"
    _file(conn, settings, make_tag(conn, "alpha"), 4, vector=same)
    _file(conn, settings, make_tag(conn, "zulu"), 4, vector=same)
    llm = answers(
        {"relation": "same_project", "same_project": True, "confidence": 0.99, "rationale": "x"}
    )
    AliasPromoterJob().run(context(conn, settings, llm=llm))
    assert _rows(conn) == [("zulu", "alpha", "insufficient", "expired")]
    signals = conn.execute("SELECT signals FROM project_tag_alias_suggestions").fetchone()
    assert signals is not None and "vector" in signals[0]
    assert set(signals[0]) <= {"vector", "low_frequency"}


def test_auto_apply_is_off_by_default_and_strict_when_on(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    verdict = {
        "relation": "rename",
        "same_project": True,
        "source_should_alias_target": True,
        "confidence": 0.99,
        "rationale": "the user said so",
    }
    settings = make_settings(database_url=db_url)
    old, new = _renamed_pair(conn, settings)
    AliasPromoterJob().run(context(conn, settings, llm=answers(verdict)))
    assert _rows(conn)[0][3] == "pending"
    conn.execute("DELETE FROM project_tag_alias_suggestions")
    conn.commit()
    eager = make_settings(database_url=db_url, alias_auto_apply=True)
    report = AliasPromoterJob().run(context(conn, eager, llm=answers(verdict)))
    assert _rows(conn) == [("hive-mind", "agents-memory", "rename", "auto_applied")]
    assert "auto-applied hive-mind -> agents-memory" in report.notes
    parent = conn.execute("SELECT alias_of FROM project_tags WHERE id = %s", (new,)).fetchone()
    assert parent == (old,)


def test_the_promoter_runs_at_most_hourly_unless_draining(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    AliasPromoterJob().run(context(conn, settings, drain=False))
    soon = AliasPromoterJob().run(
        context(conn, settings, drain=False, now=NOW + timedelta(minutes=10))
    )
    assert soon.skipped == 1


def test_frequent_d_tags_become_new_tag_suggestions_only_with_an_llm(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    _file(conn, settings, None, 9, d_tags=["rocket"])
    _file(conn, settings, None, 2, d_tags=["rockets"])
    _file(conn, settings, None, 3, d_tags=["bug"])
    ctx = context(conn, settings)
    plain = AliasPromoterJob().run(ctx)
    assert "d_tag promoter: no LLM, no new-tag suggestions" in plain.notes
    assert suggestion_store.new_suggestions(conn, ctx.user_id) == []

    def reply(role: str, user: str) -> Any:
        assert role == "clusterer" and "- rocket (" in user
        return {
            "clusters": [
                {
                    "canonical": "rocket",
                    "members": ["rocket", "rockets", "invented"],
                    "recommendation": "project",
                    "rationale": "a product",
                },
                {"canonical": "bug", "members": ["bug"], "recommendation": "generic"},
                {"canonical": "made-up", "members": ["rocket"], "recommendation": "project"},
            ]
        }

    AliasPromoterJob().run(context(conn, settings, llm=ScriptedLLM(reply)))
    (suggestion,) = suggestion_store.new_suggestions(conn, ctx.user_id)
    assert (suggestion.name, suggestion.members, suggestion.uses) == (
        "rocket",
        ["rocket", "rockets"],
        11,
    )
    assert suggestion.recommendation == "project"
    suggestion_store.decide_new_suggestion(conn, suggestion.id, "rejected")
    conn.commit()
    _file(conn, settings, None, 5, d_tags=["rocket"])
    AliasPromoterJob().run(context(conn, settings, llm=ScriptedLLM(reply)))
    assert suggestion_store.new_suggestions(conn, ctx.user_id) == []


def test_existing_tags_file_rows_without_git_that_carry_their_exact_name(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    memory = make_tag(conn, "memory")
    loose = _file(conn, settings, None, 2, d_tags=["memory", "postgres"])
    other = _file(conn, settings, None, 1, d_tags=["memory-leak"])
    in_repo = add(conn, settings, row("x", git_root="/src/elsewhere"))
    conn.execute(
        "UPDATE memory SET d_tag = '{memory}', tag_processed = true WHERE id = %s", (in_repo[0],)
    )
    conn.commit()
    report = AliasPromoterJob().run(context(conn, settings))
    assert report.processed == 2
    filed = dict(conn.execute("SELECT id, p_tag_id FROM memory").fetchall())
    assert [filed[i] for i in loose] == [memory, memory]
    assert filed[other[0]] is None and filed[in_repo[0]] is None


def test_the_judge_works_through_the_real_client_and_the_fake_server(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    with real_llm(make_settings, db_url, dtag_promote_enabled=False) as (server, llm):
        settings = make_settings(database_url=db_url, dtag_promote_enabled=False)
        _renamed_pair(conn, settings)
        server.queue(
            {
                "relation": "rename",
                "same_project": True,
                "source_should_alias_target": True,
                "confidence": 0.95,
                "evidence_memory_ids": [],
                "conflict_memory_ids": [],
                "rationale": "renamed",
            }
        )
        report = AliasPromoterJob().run(context(conn, settings, llm=llm))
        assert report.llm_calls == 1
        assert _rows(conn) == [("hive-mind", "agents-memory", "rename", "pending")]
