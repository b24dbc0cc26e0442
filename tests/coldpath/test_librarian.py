"""Librarian: gate and cooldown, user turns only, null-preserve, the JSON-blob guard, history."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import psycopg

from agents_memory.coldpath.librarian import LibrarianJob
from agents_memory.config import Settings
from agents_memory.store.knowledge import get_profiles, set_profile

from .jobkit import NOW, ScriptedLLM, add, answers, context, real_llm, row


def _lib_settings(make_settings: Any, db_url: str, **overrides: Any) -> Settings:
    overrides.setdefault("librarian_msg_threshold", 3)
    overrides.setdefault("librarian_cooldown_hours", 2)
    result: Settings = make_settings(database_url=db_url, **overrides)
    return result


def _history(conn: psycopg.Connection[Any]) -> list[tuple[str, str | None, str | None, str]]:
    rows = conn.execute(
        "SELECT field, old_value, new_value, changed_by FROM profile_history ORDER BY id"
    ).fetchall()
    return [tuple(r) for r in rows]


def _state(conn: psycopg.Connection[Any]) -> tuple[Any, Any]:
    found = conn.execute(
        "SELECT librarian_last_run_at, librarian_msg_count_at_run FROM users"
    ).fetchone()
    assert found is not None
    return found[0], found[1]


def _talk(conn: psycopg.Connection[Any], settings: Settings, n: int, age: float = 1.0) -> None:
    add(
        conn,
        settings,
        *(row(f"I am a backend developer, message {i}", age_days=age - i / 100) for i in range(n)),
        row("ASSISTANT SECRET: you are a wizard", role="assistant", age_days=0.5),
    )


def test_below_the_threshold_nothing_is_asked(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    settings = _lib_settings(make_settings, db_url)
    _talk(conn, settings, 2)
    llm = answers({"core_profile": "x", "sub_profile": "y"})
    report = LibrarianJob().run(context(conn, settings, llm=llm))
    assert report.skipped == 1 and "2 new user turns (< 3)" in report.notes[0]
    assert llm.calls == [] and _state(conn) == (None, None)


def test_without_an_llm_profiles_are_left_alone_and_it_says_so(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    settings = _lib_settings(make_settings, db_url)
    _talk(conn, settings, 5)
    report = LibrarianJob().run(context(conn, settings, llm=None))
    assert (report.skipped, report.heuristic, report.processed) == (1, 1, 0)
    assert report.notes == ["no LLM: profiles left unchanged"]
    assert _history(conn) == []


def test_a_run_writes_changed_profiles_with_history_from_user_turns_only(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    settings = _lib_settings(make_settings, db_url, librarian_recent_slice=2)
    _talk(conn, settings, 5)
    llm = answers({"core_profile": "Backend developer.", "sub_profile": "Works on memory."})
    ctx = context(conn, settings, llm=llm)
    report = LibrarianJob().run(ctx)
    assert (report.processed, report.llm_calls) == (1, 1)
    profiles = get_profiles(conn, ctx.user_id)
    assert (profiles.core_profile, profiles.sub_profile) == (
        "Backend developer.",
        "Works on memory.",
    )
    assert _history(conn) == [
        ("core_profile", None, "Backend developer.", "librarian"),
        ("sub_profile", None, "Works on memory.", "librarian"),
    ]
    prompt = llm.calls[0].user
    assert "ASSISTANT SECRET" not in prompt
    recent, anchors = prompt.split("Identity anchors")
    assert "message 3" in recent and "message 4" in recent and "message 0" not in recent
    assert "message 0" in anchors and "message 4" not in anchors
    assert "write the profiles in English" in prompt
    assert _state(conn) == (NOW, 5)


def test_cooldown_and_threshold_gate_the_next_run(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    settings = _lib_settings(make_settings, db_url)
    _talk(conn, settings, 3)
    llm = answers({"core_profile": None, "sub_profile": "Sub."})
    assert LibrarianJob().run(context(conn, settings, llm=llm)).processed == 1
    _talk(conn, settings, 3, age=0.2)
    soon = LibrarianJob().run(context(conn, settings, llm=llm, now=NOW + timedelta(hours=1)))
    assert soon.skipped == 1 and "cooling down" in soon.notes[0]
    later = LibrarianJob().run(context(conn, settings, llm=llm, now=NOW + timedelta(hours=3)))
    assert later.processed == 1 and len(llm.calls) == 2


def test_null_keeps_the_old_value_and_json_blobs_are_refused(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    settings = _lib_settings(make_settings, db_url)
    ctx = context(conn, settings)
    set_profile(conn, ctx.user_id, "core_profile", "Old core.", changed_by="user")
    set_profile(conn, ctx.user_id, "sub_profile", "Old sub.", changed_by="user")
    conn.commit()
    _talk(conn, settings, 3)
    llm = answers({"core_profile": None, "sub_profile": '{"projects": ["memory"]}'})
    report = LibrarianJob().run(context(conn, settings, llm=llm))
    assert report.processed == 1
    assert "sub_profile: JSON instead of prose, refused" in report.notes
    profiles = get_profiles(conn, ctx.user_id)
    assert (profiles.core_profile, profiles.sub_profile) == ("Old core.", "Old sub.")
    assert [h[3] for h in _history(conn)] == ["user", "user"]


def test_no_valid_answer_counts_the_attempt_but_not_a_success(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    settings = _lib_settings(make_settings, db_url)
    _talk(conn, settings, 3)
    report = LibrarianJob().run(context(conn, settings, llm=answers(None)))
    assert report.heuristic == 1 and report.processed == 0
    assert _state(conn) == (NOW, None)


def test_a_broken_backend_is_reported_not_raised(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    settings = _lib_settings(make_settings, db_url)
    _talk(conn, settings, 3)
    llm = ScriptedLLM(lambda _r, _u: RuntimeError("boom"))
    report = LibrarianJob().run(context(conn, settings, llm=llm))
    assert report.failed == 1 and "boom" in report.notes[0]


def test_the_prompt_asks_for_the_users_language(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    settings = _lib_settings(make_settings, db_url)
    add(conn, settings, *(row(f"저는 서울에 사는 백엔드 개발자입니다 {i}") for i in range(3)))
    llm = answers({"core_profile": "서울의 백엔드 개발자.", "sub_profile": None})
    LibrarianJob().run(context(conn, settings, llm=llm))
    assert "write the profiles in Korean" in llm.calls[0].user


def test_disabled_librarian_is_not_enabled(make_settings: Any) -> None:
    assert not LibrarianJob().enabled(make_settings(librarian_enabled=False))


def test_the_librarian_works_through_the_real_client_and_the_fake_server(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    with real_llm(make_settings, db_url, librarian_msg_threshold=3) as (server, llm):
        settings = _lib_settings(make_settings, db_url)
        _talk(conn, settings, 3)
        server.queue({"core_profile": "A backend developer.", "sub_profile": None})
        ctx = context(conn, settings, llm=llm)
        assert LibrarianJob().run(ctx).processed == 1
        assert get_profiles(conn, ctx.user_id).core_profile == "A backend developer."


def test_a_run_names_the_turns_it_read_so_a_forget_can_find_what_they_built(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    settings = _lib_settings(make_settings, db_url, librarian_recent_slice=2)
    _talk(conn, settings, 4)
    users = [
        int(r[0])
        for r in conn.execute(
            "SELECT id FROM memory WHERE role = 'user' ORDER BY message_at"
        ).fetchall()
    ]
    llm = answers({"core_profile": "Backend developer.", "sub_profile": None})
    LibrarianJob().run(context(conn, settings, llm=llm))
    found = conn.execute("SELECT core_profile_sources, sub_profile_sources FROM users").fetchone()
    history = conn.execute("SELECT field, source_ids FROM profile_history").fetchall()
    assert found is not None
    assert sorted(found[0]) == users  # the two newest and the anchors: all four
    assert found[1] is None  # never written, no text: nothing to trace
    assert [(f, sorted(s)) for f, s in history] == [("core_profile", users)]
