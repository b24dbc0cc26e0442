"""Tagger: deterministic project identity first, the LLM only to refine, suggestions instead of
new tags, claims with SKIP LOCKED, per-row errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

from agents_memory.coldpath.tagger import TaggerJob
from agents_memory.coldpath.text import keyword_tags
from agents_memory.config import Settings
from agents_memory.gitinfo import git_info
from agents_memory.store import tags as tag_store
from agents_memory.store.coldpath import tag_suggestions as suggestion_store
from agents_memory.store.knowledge import update_memory_text

from .jobkit import (
    ScriptedLLM,
    add,
    answers,
    context,
    git,
    git_repo,
    make_tag,
    real_llm,
    row,
    tagged,
)


def _pending(
    conn: psycopg.Connection[Any], user_id: int
) -> list[suggestion_store.NewTagSuggestion]:
    return suggestion_store.new_suggestions(conn, user_id)


def test_rows_of_a_known_repository_get_its_tag_and_keyword_d_tags_without_an_llm(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    make_tag(conn, "memory", git_root="/src/memory")
    ids = add(
        conn,
        settings,
        row(
            "The ColdPath tagger must claim rows with SKIP LOCKED; the tagger claim is slow",
            git_root="/src/memory",
        ),
        row("thanks!", git_root="/src/memory"),
    )
    report = TaggerJob().run(context(conn, settings))
    assert (report.processed, report.failed, report.heuristic, report.llm_calls) == (2, 0, 2, 0)
    name, d_tags, done, error = tagged(conn, ids[0])
    assert name == "memory" and done and error is None
    assert "tagger" in d_tags and "claim" in d_tags and len(d_tags) <= 5
    assert tagged(conn, ids[1])[:3] == ("memory", [], True)


def test_a_new_repository_becomes_a_confirmed_tag_named_after_it_that_files_worktree_rows(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    repo = git_repo(tmp_path, "Widget_Factory", remote="git@github.com:me/widget-factory.git")
    git("worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feature", cwd=repo)
    main, tree = git_info(str(repo)), git_info(str(tmp_path / "wt"))
    assert main.root == tree.root == str(repo)
    ids = add(
        conn,
        settings,
        row("build the widget factory", git_root=main.root, git_remote=main.remote),
        row("now in the worktree", git_root=tree.root, git_remote=tree.remote),
    )
    ctx = context(conn, settings)
    TaggerJob().run(ctx)

    assert _pending(conn, ctx.user_id) == []  # nobody has to confirm a git repository
    (tag,) = tag_store.list_project_tags(conn)
    assert (tag.name, tag.git_root, tag.git_remote) == (
        "widget-factory",
        str(repo),
        "git@github.com:me/widget-factory.git",
    )
    assert [tagged(conn, i)[0] for i in ids] == ["widget-factory", "widget-factory"]
    assert all(tagged(conn, i)[2] for i in ids)
    later = add(conn, settings, row("more work", git_root=str(repo)))
    TaggerJob().run(ctx)
    assert tagged(conn, later[0])[0] == "widget-factory"
    assert _pending(conn, ctx.user_id) == []


def test_a_clone_elsewhere_matches_its_project_by_remote(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    make_tag(conn, "proj", git_root="/home/a/proj", git_remote="git@github.com:me/proj.git")
    ids = add(
        conn,
        settings,
        row("hello", git_root="/mnt/b/proj-copy", git_remote="https://github.com/me/proj"),
    )
    TaggerJob().run(context(conn, settings))
    assert tagged(conn, ids[0])[0] == "proj"


def test_two_repositories_with_one_name_get_distinct_tags(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    add(
        conn,
        settings,
        row("a", git_root="/work/alpha/app"),
        row("b", git_root="/work/beta/app"),
    )
    ctx = context(conn, settings)
    TaggerJob().run(ctx)
    assert sorted(t.name for t in tag_store.list_project_tags(conn)) == ["app", "beta-app"]
    assert _pending(conn, ctx.user_id) == []


def test_the_llm_refines_d_tags_and_picks_projects_only_for_rows_without_git(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    make_tag(conn, "memory")
    make_tag(conn, "website", git_root="/src/site")
    replies: dict[str, dict[str, Any]] = {
        "pick": {"p_tag": "Memory", "d_tag": ["Postgres Migration", "", "--", "pgvector"]},
        "new": {"p_tag": "NEW:Rocket Lab", "d_tag": []},
        "unknown": {"p_tag": "nonexistent", "d_tag": ["a"]},
        "git": {"p_tag": "memory", "d_tag": ["css"]},
    }
    llm = ScriptedLLM(lambda _role, user: replies[user.rsplit("\n", 1)[-1]])
    ids = add(
        conn,
        settings,
        row("pick"),
        row("new"),
        row("unknown"),
        row("git", role="assistant", git_root="/src/site"),
    )
    ctx = context(conn, settings, llm=llm)
    report = TaggerJob().run(ctx)
    assert (report.processed, report.llm_calls, report.heuristic) == (4, 4, 0)
    assert tagged(conn, ids[0])[:2] == ("memory", ["postgres-migration", "pgvector"])
    assert tagged(conn, ids[1])[:2] == (None, [])
    assert tagged(conn, ids[2])[:2] == (None, ["a"])
    assert tagged(conn, ids[3])[:2] == ("website", ["css"])  # git identity wins
    assert [s.name for s in _pending(conn, ctx.user_id)] == ["rocket-lab"]
    assert {t.name for t in tag_store.list_project_tags(conn)} == {"memory", "website"}
    sources = conn.execute("SELECT source_ids FROM project_tag_new_suggestions").fetchall()
    assert sources == [([ids[1]],)]  # the turn the name was proposed for (forget drops it)
    first = llm.calls[0]
    assert first.role == "tagger" and "- memory" in first.user and "role=user" in first.user
    assert "role=assistant" in llm.calls[3].user
    assert "project website" in llm.calls[3].user


def test_registry_mode_restricts_the_choice_and_refuses_new_tags(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    make_tag(conn, "core", kind="project")
    make_tag(conn, "loose")
    llm = answers({"p_tag": "NEW:other", "d_tag": []})
    add(conn, settings, row("something about other"))
    ctx = context(conn, settings, llm=llm)
    TaggerJob().run(ctx)
    schema = llm.calls[0].schema["properties"]["p_tag"]
    assert schema["anyOf"][0]["enum"] == ["core"]
    assert _pending(conn, ctx.user_id) == []


def test_a_failing_row_records_cold_error_and_the_batch_goes_on(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    def reply(_role: str, user: str) -> Any:
        return RuntimeError("backend exploded") if user.endswith("bad") else None

    ids = add(conn, settings, row("good one about pgvector pgvector"), row("bad"))
    ctx = context(conn, settings, llm=ScriptedLLM(reply))
    report = TaggerJob().run(ctx)
    assert (report.processed, report.failed) == (1, 1)
    assert tagged(conn, ids[0])[2:] == (True, None)
    _name, _d, done, error = tagged(conn, ids[1])
    assert not done and error.startswith("tagger: RuntimeError: backend exploded")
    # Cooling down: not claimed again at once.
    assert TaggerJob().run(ctx).failed == 0
    conn.execute("UPDATE memory SET cold_next_at = now() - interval '1 second'")
    conn.commit()
    TaggerJob().run(ctx)
    conn.execute("UPDATE memory SET cold_next_at = now() - interval '1 second'")
    conn.commit()
    TaggerJob().run(ctx)
    assert tagged(conn, ids[1])[2] is True  # gave up after three attempts, error kept


def test_two_connections_claim_disjoint_rows(
    conn: psycopg.Connection[Any], settings: Settings, db_url: str
) -> None:
    add(conn, settings, *(row(f"message {i}") for i in range(6)))
    user_id = context(conn, settings).user_id
    with psycopg.connect(db_url) as other:
        first = tag_store.claim_untagged(conn, user_id, 4)
        second = tag_store.claim_untagged(other, user_id, 4)
        assert len(first) == 4 and len(second) == 2
        assert not {r.id for r in first} & {r.id for r in second}
        other.rollback()
    conn.rollback()


def test_a_batch_without_drain_tags_one_batch_and_reruns_are_idempotent(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    add(conn, settings, *(row(f"note {i}") for i in range(7)))
    first = TaggerJob().run(context(conn, settings, batch_size=5, drain=False))
    assert first.processed == 5
    assert TaggerJob().run(context(conn, settings, drain=True)).processed == 2
    assert TaggerJob().run(context(conn, settings, drain=True)).processed == 0


def test_an_edited_memory_is_tagged_again(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    ids = add(conn, settings, row("first text about kubernetes kubernetes"))
    ctx = context(conn, settings)
    TaggerJob().run(ctx)
    assert tagged(conn, ids[0])[1] == ["kubernetes"]
    update_memory_text(
        conn, ids[0], "now about terraform terraform", changed_by="t", has_vector=False
    )
    conn.commit()
    TaggerJob().run(ctx)
    assert tagged(conn, ids[0])[1:3] == (["terraform"], True)


def test_a_repository_whose_suggestion_a_person_rejected_stays_untagged(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    ctx = context(conn, settings)
    suggestion_store.suggest_new_tag(conn, ctx.user_id, "junk", git_root="/src/junk")
    (suggestion,) = _pending(conn, ctx.user_id)
    suggestion_store.decide_new_suggestion(conn, suggestion.id, "rejected")
    conn.commit()
    ids = add(conn, settings, row("a", git_root="/src/junk"))
    TaggerJob().run(ctx)
    assert tag_store.list_project_tags(conn) == []
    assert tagged(conn, ids[0])[0] is None and tagged(conn, ids[0])[2]


def test_a_pending_repository_suggestion_from_before_is_confirmed_with_its_name(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    ctx = context(conn, settings)
    suggestion_store.suggest_new_tag(
        conn, ctx.user_id, "old-name", members=["old-name"], git_root="/src/thing"
    )
    conn.commit()
    ids = add(conn, settings, row("a", git_root="/src/thing"))
    TaggerJob().run(ctx)
    assert tagged(conn, ids[0])[0] == "old-name"
    (done,) = suggestion_store.new_suggestions(conn, ctx.user_id, statuses=("confirmed",))
    assert (done.name, done.project_tag_id is not None) == ("old-name", True)


def test_keyword_tags_know_english_russian_and_korean_stopwords() -> None:
    assert keyword_tags("ok, thanks a lot!") == []
    english = keyword_tags("Move the capture_daemon to systemd; systemd restarts capture_daemon")
    assert english[:2] == ["capture-daemon", "systemd"]
    russian = keyword_tags(
        "Нужно перенести базу данных, база данных сейчас в SQLite, миграция базы"
    )
    assert russian[0] == "базу" and "нужно" not in russian
    korean = keyword_tags("데이터베이스를 옮기고 데이터베이스 백업을 설정해 주세요")
    assert korean[0] == "데이터베이스" and "주세요" not in korean


def test_the_tagger_works_through_the_real_client_and_the_fake_server(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    with real_llm(make_settings, db_url) as (server, llm):
        server.queue({"p_tag": None, "d_tag": ["HTTP Fake"]})
        settings = make_settings(database_url=db_url)
        ids = add(conn, settings, row("talk to the fake model server"))
        report = TaggerJob().run(context(conn, settings, llm=llm))
        assert (report.processed, report.llm_calls) == (1, 1)
        assert tagged(conn, ids[0])[:2] == (None, ["http-fake"])
        (request,) = server.requests
        assert "talk to the fake model server" in request.user
