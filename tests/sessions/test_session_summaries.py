"""Session summaries over the real fixture transcripts captured by the real backfill: written
by the Cold Path's session summariser (extractive without an LLM, the LLM's through the real
client and a real HTTP server on 127.0.0.1, the extractive one when its answer is no good),
written again when a session grows, found by search, shown in the brief, the console and the
Markdown export, rebuilt or dropped by forget, redacted by ``doctor --secrets --fix``."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
from starlette.testclient import TestClient

from agents_memory.adapters import all_adapters
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.console.app import create_app
from agents_memory.console.build import open_console
from agents_memory.console.security import Guard
from agents_memory.ops.export_markdown import write_markdown
from agents_memory.ops.forget import apply_forget, plan_forget
from agents_memory.ops.secrets import fix_secrets, scan_secrets
from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.store.memories import NewMemory, insert_memories
from agents_memory.store.owner import bundle
from agents_memory.store.owner.forget import Selection
from agents_memory.store.search import SearchFilters, SearchTuning, search_memories
from tests.coldpath.jobkit import real_llm
from tests.sessions.capture import NOW, capture, summaries, summarise

CODEX = "01996135-afde-7911-97f0-d863511eca56"
PYDANTIC = "b162b1ae-97bc-475f-9b5f-ffbf55ca5b3f"
PHOENIX = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"


def _search(conn: psycopg.Connection[Any], uid: int, query: str) -> Any:
    return search_memories(
        conn, uid, query=query, query_vector=None, filters=SearchFilters(), tuning=SearchTuning()
    )


def test_every_captured_session_gets_a_summary_and_only_a_changed_one_is_written_again(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    uid = capture(settings, tmp_path / "home", conn)
    first = summarise(conn, settings, uid)
    stored = summaries(conn)
    assert first.processed == len(stored) == 5 and first.heuristic == 5
    title, text, model, _turns = stored[PYDANTIC]
    assert model == "extractive" and "golang文檔" in title
    assert "Files changed: Pydantic_Field_Usage_Guide.md" in text and "Outcome: 已完成" in text
    assert summarise(conn, settings, uid).processed == 0  # nothing changed

    insert_memories(
        conn,
        uid,
        [
            NewMemory(
                agent_platform="claude-code",
                role="assistant",
                message="Moved the billing tables to monthly partitions; the backfill is done.",
                external_uuid="grown-1",
                message_at=NOW,
                session_id=PHOENIX,
            )
        ],
    )
    conn.commit()
    again = summarise(conn, settings, uid)
    assert again.processed == 1
    _title, grown, _model, count = summaries(conn)[PHOENIX]
    assert count == stored[PHOENIX][3] + 1
    assert "Outcome: Moved the billing tables to monthly partitions" in grown


def test_a_session_level_query_finds_the_session_without_changing_the_turn_hits(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    uid = capture(settings, tmp_path / "home", conn)
    query = "the session where we saved the pydantic Field guide as markdown"
    before = _search(conn, uid, query)
    assert before.sessions == ()  # no summaries yet
    summarise(conn, settings, uid)
    after = _search(conn, uid, query)
    assert [h.id for h in after.hits] == [h.id for h in before.hits]
    assert after.sessions and after.sessions[0].session_id == PYDANTIC
    found = after.as_dict()["sessions"][0]
    assert found["session_id"] == PYDANTIC and "Pydantic" in found["summary"]
    assert (
        _search(conn, uid, "the session where phoenix was started in the background")
        .sessions[0]
        .session_id
        == PHOENIX
    )


def test_the_brief_lists_the_recent_sessions_of_this_project_first(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    uid = capture(settings, tmp_path / "home", conn)
    repo = tmp_path / "api"
    (repo / ".git").mkdir(parents=True)
    conn.execute("UPDATE memory SET git_root = %s WHERE session_id = %s", (str(repo), CODEX))
    conn.commit()
    summarise(conn, settings, uid)
    request = BriefRequest(
        platform="claude-code", model=None, device="dev", cwd=str(repo), short_term_days=3650
    )
    brief = build_brief(conn, settings, uid, request, now=NOW)
    section = brief.split("## Recent sessions in api\n")[1].split("\n## ")[0]
    lines = section.strip().splitlines()
    assert "go.mod" in lines[0] and "codex-cli]" in lines[0]
    assert "→ Here’s what I changed" in lines[0]
    assert any("golang文檔" in line for line in lines[1:])  # another project's, after
    assert "Files changed" not in section  # the "recent work" section has the files
    compact = build_brief(
        conn,
        settings,
        uid,
        BriefRequest.compact(settings, platform="claude-code", cwd=str(repo), max_chars=3000),
        now=NOW,
    )
    assert len(compact) <= 3000


def test_forget_rewrites_the_summary_from_the_turns_left_and_drops_it_with_the_session(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    uid = capture(settings, tmp_path / "home", conn)
    summarise(conn, settings, uid)
    _t, text, _m, turns = summaries(conn)[PYDANTIC]
    assert "Pydantic_Field_Usage_Guide" in text
    last = conn.execute(
        "SELECT max(id) FROM memory WHERE session_id = %s AND role = 'assistant'", (PYDANTIC,)
    ).fetchone()
    assert last is not None
    plan = plan_forget(conn, uid, settings, Selection(ids=(last[0],)), now=NOW)
    report = apply_forget(conn, uid, settings, plan)
    assert report.session_summaries_rebuilt == 1
    _t, rebuilt, model, left = summaries(conn)[PYDANTIC]
    assert left == turns - 1 and model == "extractive"
    assert "已完成" not in rebuilt  # the forgotten reply was the outcome

    whole = plan_forget(conn, uid, settings, Selection(session=PHOENIX), now=NOW)
    assert apply_forget(conn, uid, settings, whole).session_summaries_dropped == 1
    assert PHOENIX not in summaries(conn)
    assert summarise(conn, settings, uid).processed == 0  # nothing left to write again


def test_doctor_secrets_fix_redacts_a_session_summary(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    uid = capture(settings, tmp_path / "home", conn)
    summarise(conn, settings, uid)
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    conn.execute(
        "UPDATE session_summaries SET summary = summary || %s, terms = terms || %s"
        " WHERE session_id = %s",
        (f"\nOpen: rotate {token}", f" {token}", CODEX),
    )
    conn.commit()
    scan = scan_secrets(conn)
    assert scan.session_summaries_scanned == 5 and scan.session_summary_ids
    counts = fix_secrets(conn, scan, dry_run=False)
    conn.commit()
    assert counts.summaries >= 1
    row = conn.execute(
        "SELECT summary || terms FROM session_summaries WHERE session_id = %s", (CODEX,)
    ).fetchone()
    assert row is not None and token not in row[0] and "Open: rotate" in row[0]
    assert not scan_secrets(conn).session_summary_ids


def test_the_export_and_the_console_show_the_summary(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    uid = capture(settings, tmp_path / "home", conn)
    summarise(conn, settings, uid)
    out = tmp_path / "md"
    write_markdown(conn, out, bundle.ExportFilter())
    files = {p.name: p.read_text(encoding="utf-8") for p in out.rglob("*.md")}
    pydantic = next(text for name, text in files.items() if PYDANTIC in name)
    assert "## Summary: 幫我查一下 golang文檔" in pydantic
    assert pydantic.index("## Summary") < pydantic.index("\n## user · ")

    console = open_console(settings, Catalog(all_adapters(), tmp_path / "home"), tmp_path / "p")
    guard = Guard(port=8765)
    try:
        with TestClient(
            create_app(console, guard), base_url="http://127.0.0.1:8765", follow_redirects=False
        ) as client:
            assert client.get(f"/login?token={guard.login_token}").status_code == 303
            listed = client.get("/sessions")
            assert listed.status_code == 200 and "golang文檔" in listed.text
            assert f"id={PYDANTIC}" in listed.text
            page = client.get(f"/session?platform=claude-code&id={PYDANTIC}")
            assert "This session: 幫我查一下 golang文檔" in page.text
            assert "extractive (no LLM)" in page.text
            found = client.get("/search?q=pydantic+Field+guide+markdown+session")
            assert 'class="session-hit"' in found.text
    finally:
        console.state.close()


def test_with_an_llm_a_quiet_session_gets_its_written_summary_and_a_bad_answer_falls_back(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str, tmp_path: Path
) -> None:
    with real_llm(make_settings, db_url) as (server, llm):
        settings = make_settings(database_url=db_url)
        uid = capture(settings, tmp_path / "home", conn)
        server.queue(
            {"title": "Pydantic Field guide", "summary": "Asked: the Field docs.\nOutcome: saved."},
            "{not json",
            "{not json",
        )
        server.replies = lambda _req: {"title": "t", "summary": "Outcome: written."}
        report = summarise(conn, settings, uid, llm=llm, batch_size=50)
        stored = summaries(conn)
        assert report.llm_calls + report.heuristic == 5
        models = sorted(v[2] for v in stored.values())
        assert models.count("llm") == 4 and models.count("extractive") == 1
        assert "Pydantic Field guide" in {v[0] for v in stored.values()}
        assert any("session" in r.system.lower() for r in server.requests)

    # a session still going gets a draft (extractive) until it has been quiet a while
    with real_llm(make_settings, db_url) as (server, llm):
        conn.execute("DELETE FROM session_summaries")
        conn.commit()
        late = conn.execute("SELECT max(message_at) FROM memory").fetchone()
        assert late is not None
        summarise(conn, settings, uid, llm=llm, now=late[0] + timedelta(minutes=1))
        assert all(v[2] == "draft" for v in summaries(conn).values())
        assert server.requests == []
        server.replies = lambda _req: {"title": "t", "summary": "Outcome: written later."}
        summarise(conn, settings, uid, llm=llm, now=late[0] + timedelta(hours=2))
        assert all(v[2] == "llm" for v in summaries(conn).values())


def test_search_memory_through_the_sdk_client_names_the_session(
    make_settings: Any, db_url: str, conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    from agents_memory.recall.state import open_state
    from agents_memory.server.app import create_server
    from tests.server.mcpcall import call, ok

    settings = make_settings(database_url=db_url, embedding_backend="none")
    uid = capture(settings, tmp_path / "home", conn)
    summarise(conn, settings, uid)
    state = open_state(settings)
    try:
        server = create_server(settings, state)
        query = {"query": "the session where the pydantic Field guide was saved", "limit": 5}
        found = ok(call(server, "search_memory", {**query, "detail": "full"}))
        compact = call(server, "search_memory", query)
    finally:
        state.close()
    assert found["sessions"][0]["session_id"] == PYDANTIC
    assert found["sessions"][0]["title"].startswith("幫我查一下 golang文檔")
    assert len(found["sessions"]) <= 5
    # The compact answer (the default) names the session in one line too.
    lines = compact.structured_content["session_lines"]
    assert lines[0].startswith(f"session {PYDANTIC} ") and len(lines[0]) <= 200
