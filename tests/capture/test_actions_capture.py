"""Actions through the real capture pipeline and backfill (real fixture files, real database):
stored once across backfills and a truncation rescan, a result read later completes its call,
secrets masked, a tool-call id shared by two sessions kept twice, pause and exclusion obeyed,
and the bytes they take against the transcripts'."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import all_adapters, get_adapter
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.capture.pipeline import Ingestor
from agents_memory.config import Settings
from agents_memory.ops.pause import pause_capture
from agents_memory.store import actions as action_store
from agents_memory.store import database
from agents_memory.store.memories import ensure_user

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
SPOTTER = FIXTURES / "claude-code" / "spotter_v2.1.38_tool_heavy.jsonl"
SPOTTER_SESSION = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
VCT_CLAUDE = FIXTURES / "claude-code" / "vct_v1.0.95_tools_thinking_unicode.jsonl"
VCT_CODEX = FIXTURES / "codex" / "vct_v0.39.0_vscode_unicode.jsonl"
SECRET = "ghp_" + "Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz1Xc3V"


def _claude_path(home: Path, session: str) -> Path:
    path = home / ".claude" / "projects" / "-home-marco-projects-spotter" / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _place(home: Path) -> dict[str, Path]:
    """The real tool-heavy transcripts where their clients keep them."""
    spotter = _claude_path(home, SPOTTER_SESSION)
    shutil.copyfile(SPOTTER, spotter)
    vct = home / ".claude" / "projects" / "-home-wei-repo" / VCT_CLAUDE.name
    vct.parent.mkdir(parents=True)
    shutil.copyfile(VCT_CLAUDE, vct)
    codex = home / ".codex" / "sessions" / "2025" / "09" / "19" / f"rollout-{VCT_CODEX.name}"
    codex.parent.mkdir(parents=True)
    shutil.copyfile(VCT_CODEX, codex)
    return {"spotter": spotter, "vct": vct, "codex": codex}


def _parsed_calls(path: Path, platform: str) -> int:
    result = get_adapter(platform).parse(path, path.read_bytes(), offset=0, state={}, final=True)
    return len({(a.session_id, a.key) for a in result.actions if a.tool is not None})


def _actions(conn: psycopg.Connection[Any], where: str = "TRUE", *args: Any) -> list[Any]:
    rows = conn.execute(
        "SELECT agent_platform, session_id, external_key, tool, kind, outcome, command,"
        f" excerpt, targets, memory_id FROM actions WHERE {where} ORDER BY id",
        args,
    ).fetchall()
    conn.commit()
    return rows


def _ingestor(conn: psycopg.Connection[Any], settings: Settings, home: Path) -> Ingestor:
    uid = ensure_user(conn, settings.user_name)
    conn.commit()
    return Ingestor(settings, user_id=uid, has_vector=True, home=home)


def test_two_backfills_and_a_truncation_rescan_store_each_action_once(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    files = _place(tmp_path)
    catalog = Catalog(all_adapters(), tmp_path)
    expected = (
        _parsed_calls(files["spotter"], "claude-code")
        + _parsed_calls(files["vct"], "claude-code")
        + _parsed_calls(files["codex"], "codex-cli")
    )

    first = backfill(settings, catalog)
    stored = _actions(conn)
    again = backfill(settings, catalog)
    whole = files["spotter"].read_bytes()
    files["spotter"].write_bytes(whole[: len(whole) // 2])  # truncated: its cursor restarts
    backfill(settings, catalog)
    files["spotter"].write_bytes(whole)  # whole again: rescanned from the start
    backfill(settings, catalog)

    assert first.stored > 0 and again.stored == 0
    assert len(stored) == expected > 30
    assert _actions(conn) == stored  # the same rows, outcomes and links: nothing doubled
    identities = {(r[0], r[1], r[2]) for r in stored}
    assert len(identities) == len(stored)
    # A failing command and its error, a linked edit, an MCP call: as parsed.
    failed = [r for r in stored if r[5] == "error"]
    assert [(r[3], r[7]) for r in failed] == [("shell", "patch rejected: empty patch")]
    edits = [r for r in stored if r[0] == "codex-cli" and r[4] == "edit"]
    assert next(r[8] for r in edits) == ["go.mod"] and all(r[9] for r in edits)


def test_a_result_read_after_its_call_completes_the_stored_call(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    path = _claude_path(tmp_path, SPOTTER_SESSION)
    lines = SPOTTER.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b'"tool_result"' in line)
    path.write_bytes(b"".join(lines[:cut]))
    ingestor = _ingestor(conn, settings, tmp_path)
    adapter = get_adapter("claude-code")

    ingestor.ingest_file(conn, path, adapter, final=True)
    before = _actions(conn)
    with path.open("ab") as out:
        out.write(b"".join(lines[cut:]))
    ingestor.ingest_file(conn, path, adapter, final=True)
    after = {r[2]: r for r in _actions(conn)}

    assert len(before) == 1 and before[0][5] == "unknown"
    call = after[before[0][2]]
    assert call[3] == "Bash" and call[5] == "ok" and call[7]  # the background job's notice
    assert len(after) == _parsed_calls(path, "claude-code")


def _claude_bash(session: str, tool_id: str, command: str, output: str, failed: bool) -> bytes:
    """A Bash call and its result, as Claude Code 2.1 writes them (the spotter fixture's first
    Bash pair with its command, output and session replaced)."""
    lines = [json.loads(line) for line in SPOTTER.read_text().splitlines()]
    call = next(
        r
        for r in lines
        if r.get("type") == "assistant"
        and any(b.get("name") == "Bash" for b in r["message"]["content"])
    )
    block = next(b for b in call["message"]["content"] if b.get("name") == "Bash")
    answer = next(
        r
        for r in lines
        if r.get("type") == "user"
        and isinstance(r["message"]["content"], list)
        and r["message"]["content"][0].get("tool_use_id") == block["id"]
    )
    call["sessionId"] = answer["sessionId"] = session
    call["message"]["content"] = [{**block, "id": tool_id, "input": {"command": command}}]
    answer["message"]["content"] = [
        {"tool_use_id": tool_id, "type": "tool_result", "content": output, "is_error": failed}
    ]
    answer["toolUseResult"] = {"stdout": "", "stderr": output, "interrupted": False}
    return "".join(json.dumps(r) + "\n" for r in (call, answer)).encode()


def test_a_secret_in_a_command_line_or_an_error_excerpt_is_masked_in_storage(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    path = _claude_path(tmp_path, "s-secret")
    path.write_bytes(
        _claude_bash(
            "s-secret",
            "toolu_secret",
            f"GITHUB_TOKEN={SECRET} gh release create v1.2 <private>internal-host</private>",
            f"Exit code 1\nerror: HTTP 401: Bad credentials for token {SECRET}",
            failed=True,
        )
    )
    ingestor = _ingestor(conn, settings, tmp_path)
    ingestor.ingest_file(conn, path, get_adapter("claude-code"), final=True)

    [row] = _actions(conn)
    stored = " ".join(str(value) for value in row)
    assert SECRET not in stored and "internal-host" not in stored
    assert "[redacted:" in row[6] and "gh release create v1.2" in row[6]
    assert row[5] == "error" and "[redacted:" in row[7] and "Bad credentials" in row[7]
    exit_code = conn.execute("SELECT exit_code FROM actions").fetchone()
    assert exit_code == (1,)


def test_two_sessions_with_the_same_tool_call_ids_keep_both_sessions_actions(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    first = _claude_path(tmp_path, SPOTTER_SESSION)
    shutil.copyfile(SPOTTER, first)
    second = _claude_path(tmp_path, "other-session")
    second.write_bytes(SPOTTER.read_bytes().replace(SPOTTER_SESSION.encode(), b"other-session"))
    per_session = _parsed_calls(first, "claude-code")

    backfill(settings, Catalog(all_adapters(), tmp_path))
    backfill(settings, Catalog(all_adapters(), tmp_path))
    rows = _actions(conn)

    assert len(rows) == 2 * per_session
    by_session = {s: {r[2] for r in rows if r[1] == s} for s in (SPOTTER_SESSION, "other-session")}
    assert by_session[SPOTTER_SESSION] == by_session["other-session"]
    # Each session's action links to its own session's turn.
    linked = conn.execute(
        "SELECT count(*) FROM actions a JOIN memory m ON m.id = a.memory_id"
        " WHERE m.session_id IS DISTINCT FROM a.session_id"
    ).fetchone()
    assert linked == (0,)


def test_a_paused_capture_stores_no_actions_even_on_a_later_rescan(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    files = _place(tmp_path)
    now = datetime.now(UTC)
    pause_capture(conn, settings.device_name, platform="claude-code", duration=None, now=now)
    conn.commit()
    catalog = Catalog(all_adapters(), tmp_path)
    backfill(settings, catalog)
    conn.execute("DELETE FROM capture_pauses")
    conn.commit()
    whole = files["spotter"].read_bytes()
    files["spotter"].write_bytes(whole[:100])
    backfill(settings, catalog)
    files["spotter"].write_bytes(whole)
    backfill(settings, catalog)

    assert {r[0] for r in _actions(conn)} == {"codex-cli"}  # the pause was Claude Code's
    assert _actions(conn, "session_id = %s", SPOTTER_SESSION) == []


def test_an_excluded_project_keeps_its_actions_out(
    make_settings: Any, db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(database_url=db_url, capture_exclude=("/home/marco/projects/*",))
    _place(tmp_path)
    backfill(settings, Catalog(all_adapters(), tmp_path))
    with database.connect(database.locate_database(settings)) as conn:
        rows = _actions(conn)
    assert rows and SPOTTER_SESSION not in {r[1] for r in rows}


def test_actions_take_under_five_percent_of_the_transcripts_bytes_over_the_fixtures(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    files = _place(tmp_path)
    backfill(settings, Catalog(all_adapters(), tmp_path))
    uid = ensure_user(conn, settings.user_name)
    sizes = action_store.bytes_per_session(conn, uid)
    conn.commit()
    transcript = sum(path.stat().st_size for path in files.values())
    stored = sum(s.bytes for s in sizes)
    ratio = stored / transcript
    count = sum(s.actions for s in sizes)
    print(f"actions: {count} in {len(sizes)} sessions, {stored:,} bytes")
    print(f"transcripts: {transcript:,} bytes; actions/transcripts = {ratio:.2%}")
    for size in sizes:
        print(f"  {size.agent_platform} {size.session_id}: {size.actions} actions, {size.bytes} B")
    by_session = {(s.agent_platform, s.session_id): s.bytes for s in sizes}
    for name, path in files.items():
        platform = "codex-cli" if name == "codex" else "claude-code"
        parsed = get_adapter(platform).parse(
            path, path.read_bytes(), offset=0, state={}, final=True
        )
        sessions = {(a.platform, a.session_id) for a in parsed.actions}
        size = sum(by_session.get(session, 0) for session in sessions)
        share = size / path.stat().st_size
        print(f"  file {name}: {size:,} of {path.stat().st_size:,} bytes = {share:.2%}")
        assert share <= 0.05, name
    assert ratio <= 0.05


def _analysed(conn: psycopg.Connection[Any]) -> dict[str, int]:
    rows = conn.execute(
        "SELECT relname, analyze_count FROM pg_stat_user_tables"
        " WHERE relname IN ('memory', 'actions')"
    ).fetchall()
    conn.commit()
    return {str(name): int(count) for name, count in rows}


def test_an_import_counts_the_tables_it_filled_so_the_first_searches_plan_with_them(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    _place(tmp_path)
    catalog = Catalog(all_adapters(), tmp_path)
    before = _analysed(conn)

    first = backfill(settings, catalog)
    after_first = _analysed(conn)
    backfill(settings, catalog)  # nothing new: nothing counted again

    assert first.stored > 0 and first.actions > 30
    assert after_first == {"memory": before["memory"] + 1, "actions": before["actions"] + 1}
    assert _analysed(conn) == after_first
    row = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'actions'::regclass").fetchone()
    assert row is not None and row[0] >= first.actions
