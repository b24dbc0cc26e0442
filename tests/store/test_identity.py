"""A client's message id is unique only within its session: a turn of one session never
rewrites another session's row (issue: two sessions with ``msg_1`` lost one answer and rewrote
the other session's row). Store-level rules, then every adapter's keys against the store, then
the real ``backfill`` CLI on the reported case."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.adapters import get_adapter, names
from agents_memory.adapters.base import Turn
from agents_memory.store.identity import scoped_key
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.capture.cli import memory_capture
from tests.capture.transcripts import claude_user
from tests.owner.helpers import env_for, run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
AT = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def _row(session: str, text: str, *, key: str = "claude-code:a:msg_1", **kw: Any) -> NewMemory:
    fields: dict[str, Any] = {
        "external_uuid": key,
        "session_id": session,
        "message_at": AT,
        "device_name": "d",
    }
    fields.update(kw)
    role = fields.pop("role", "assistant")
    platform = fields.pop("platform", "claude-code")
    return NewMemory(platform, role, text, **fields)  # type: ignore[arg-type]


def _stored(conn: psycopg.Connection[Any]) -> dict[tuple[str | None, str], str]:
    rows = conn.execute("SELECT session_id, role, message FROM memory ORDER BY id").fetchall()
    return {(session, role): message for session, role, message in rows}


def _history(conn: psycopg.Connection[Any]) -> int:
    return int(conn.execute("SELECT count(*) FROM memory_history").fetchone()[0])  # type: ignore[index]


def test_a_reused_id_in_another_session_is_stored_apart_and_the_first_row_is_untouched(
    conn: psycopg.Connection[Any],
) -> None:
    user = ensure_user(conn, "me")
    first = insert_memories(conn, user, [_row("s1", "the answer of session one")])
    second = insert_memories(
        conn, user, [_row("s2", "session two's answer", message_at=AT + timedelta(days=1))]
    )
    again = insert_memories(
        conn, user, [_row("s2", "session two's answer", message_at=AT + timedelta(days=1))]
    )

    assert (first.inserted, second.inserted, second.updated, second.collisions) == (1, 1, 0, 1)
    assert (again.inserted, again.updated, again.skipped) == (0, 0, 1)  # a rescan is a no-op
    assert _stored(conn) == {
        ("s1", "assistant"): "the answer of session one",
        ("s2", "assistant"): "session two's answer",
    }
    assert _history(conn) == 0


def test_a_collided_turn_that_grows_updates_its_own_row_only(
    conn: psycopg.Connection[Any],
) -> None:
    user = ensure_user(conn, "me")
    insert_memories(conn, user, [_row("s1", "one")])
    insert_memories(conn, user, [_row("s2", "two, streaming")])
    grown = insert_memories(conn, user, [_row("s2", "two, streaming, finished")])

    assert (grown.inserted, grown.updated) == (0, 1)
    assert _stored(conn) == {
        ("s1", "assistant"): "one",
        ("s2", "assistant"): "two, streaming, finished",
    }
    keys = {r[0] for r in conn.execute("SELECT external_uuid FROM memory").fetchall()}
    assert keys == {
        "claude-code:a:msg_1",
        scoped_key("claude-code:a:msg_1", "claude-code", "s2", "assistant"),
    }


def test_two_sessions_sharing_a_new_id_in_one_batch_are_both_stored(
    conn: psycopg.Connection[Any],
) -> None:
    user = ensure_user(conn, "me")
    counts = insert_memories(conn, user, [_row("s1", "one"), _row("s2", "two")])

    assert (counts.inserted, counts.collisions) == (2, 1)
    assert _stored(conn) == {("s1", "assistant"): "one", ("s2", "assistant"): "two"}


def test_the_same_key_in_another_role_or_client_is_another_turn(
    conn: psycopg.Connection[Any],
) -> None:
    user = ensure_user(conn, "me")
    insert_memories(conn, user, [_row("s1", "asked")])
    counts = insert_memories(
        conn,
        user,
        [_row("s1", "answered", role="user"), _row("s1", "asked", platform="opencode")],
    )

    assert (counts.inserted, counts.collisions) == (2, 2)
    rows = conn.execute("SELECT agent_platform, role, message FROM memory ORDER BY id").fetchall()
    assert rows == [
        ("claude-code", "assistant", "asked"),
        ("claude-code", "user", "answered"),
        ("opencode", "assistant", "asked"),
    ]


def test_one_message_replayed_into_another_session_file_is_not_doubled(
    conn: psycopg.Connection[Any],
) -> None:
    """A resumed session that copies history (same client id, text and time) into a new file."""
    user = ensure_user(conn, "me")
    insert_memories(conn, user, [_row("s1", "the same answer")])
    replay = insert_memories(conn, user, [_row("s2", "the same answer")])
    proxy = insert_memories(
        conn, user, [_row("s3", "the same answer", message_at=AT + timedelta(hours=2))]
    )

    assert (replay.inserted, replay.skipped) == (0, 1)
    assert (proxy.inserted, proxy.collisions) == (1, 1)  # same words, another time: another turn


def test_another_users_row_is_never_rewritten(conn: psycopg.Connection[Any]) -> None:
    alice, bob = ensure_user(conn, "alice"), ensure_user(conn, "bob")
    insert_memories(conn, alice, [_row("s1", "alice's answer")])
    counts = insert_memories(conn, bob, [_row("s1", "bob's answer")])

    assert (counts.inserted, counts.collisions) == (1, 1)
    rows = conn.execute("SELECT user_id, message FROM memory ORDER BY id").fetchall()
    assert rows == [(alice, "alice's answer"), (bob, "bob's answer")]


# --- every adapter's keys against the store ------------------------------------------------


def _fixture(platform: str) -> Path:
    return {
        "claude-code": FIXTURES
        / "generated/claude/2.1.332"
        / "headless-mcp-tool-8d7479e9-3be0-4d7a-84d4-16006ca9de87.jsonl",
        "codex-cli": next((FIXTURES / "generated/codex/0.171.0").glob("headless-mcp-tool-*")),
        "gemini-cli": FIXTURES / "gemini-cli/vct_jsonl_v0.39plus_init_tools.jsonl",
        "grok": FIXTURES / "grok/session",
        "antigravity": FIXTURES / "antigravity/agent-sessions_agy_cli_transcript_redacted.jsonl",
        "opencode": FIXTURES / "opencode/opencode-1.18.33.db",
        "hermes": FIXTURES / "hermes/state-0.19.0.db",
    }[platform]


def _place(platform: str, home: Path, name: str) -> Path:
    """The platform's fixture where the client keeps it, in a session folder called ``name``."""
    src = _fixture(platform)
    if platform == "grok":
        folder = home / ".grok/sessions/%2Fwork%2Fproj" / name
        shutil.copytree(src, folder)
        return folder / "chat_history.jsonl"
    if platform == "antigravity":
        logs = home / ".gemini/antigravity-cli/brain" / name / ".system_generated/logs"
        logs.mkdir(parents=True)
        return Path(shutil.copy(src, logs / "transcript_full.jsonl"))
    folder = {
        "claude-code": ".claude/projects/-proj",
        "codex-cli": ".codex/sessions/2026/11/30",
        "gemini-cli": ".gemini/tmp/proj/chats",
        "opencode": f".local/share/{name}",
        "hermes": f".{name}",
    }[platform]
    (home / folder).mkdir(parents=True, exist_ok=True)
    target = {"opencode": "opencode.db", "hermes": "state.db"}.get(platform, f"{name}-{src.name}")
    return Path(shutil.copy(src, home / folder / target))


def _rename_sessions(path: Path, sessions: set[str]) -> None:
    """Give every session in ``path`` another id of the same length, keeping message ids."""
    for old in sessions:
        new = old[:-4] + ("beef" if not old.endswith("beef") else "cafe")
        if path.suffix == ".db":
            with sqlite3.connect(path) as db:
                tables = [
                    r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
                ]
                for table in tables:
                    columns = {r[1] for r in db.execute(f"PRAGMA table_info('{table}')")}
                    if table in {"session", "sessions"}:
                        db.execute(f"UPDATE {table} SET id = ? WHERE id = ?", (new, old))
                    if "session_id" in columns:
                        db.execute(
                            f"UPDATE {table} SET session_id = ? WHERE session_id = ?", (new, old)
                        )
        else:
            path.write_bytes(path.read_bytes().replace(old.encode(), new.encode()))


def _parse(platform: str, path: Path, home: Path) -> list[Turn]:
    adapter = get_adapter(platform)
    data = b"" if adapter.read_mode(path) == "database" else path.read_bytes()
    return adapter.parse(path, data, offset=0, state={}, final=True, home=home).turns


def _rows(turns: list[Turn], suffix: str) -> list[NewMemory]:
    return [
        NewMemory(
            t.platform,
            t.role,
            t.text + suffix,  # type: ignore[arg-type]
            external_uuid=t.external_uuid,
            session_id=t.session_id,
            message_at=t.message_at,
        )
        for t in turns
    ]


@pytest.mark.parametrize("platform", names())
def test_every_adapter_keeps_two_sessions_with_the_same_message_ids_apart(
    platform: str, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    first = _place(platform, tmp_path, "one")
    second = _place(platform, tmp_path, "two")
    turns_one = _parse(platform, first, tmp_path)
    sessions = {str(t.session_id).split(":")[0] for t in turns_one}
    for path in second.parent.iterdir() if platform == "grok" else [second]:
        _rename_sessions(path, sessions)  # grok's summary.json names the session too
    turns_two = _parse(platform, second, tmp_path)
    assert turns_one and len(turns_two) == len(turns_one)
    assert {t.session_id for t in turns_one}.isdisjoint({t.session_id for t in turns_two})

    user = ensure_user(conn, "me")
    insert_memories(conn, user, _rows(turns_one, ""))
    before = conn.execute("SELECT id, session_id, message FROM memory ORDER BY id").fetchall()
    counts = insert_memories(conn, user, _rows(turns_two, " (in the other session)"))

    shared = {t.external_uuid for t in turns_one} & {t.external_uuid for t in turns_two}
    assert (counts.inserted, counts.updated, counts.collisions) == (len(turns_two), 0, len(shared))
    after = conn.execute(
        "SELECT id, session_id, message FROM memory WHERE id = ANY(%s) ORDER BY id",
        ([r[0] for r in before],),
    ).fetchall()
    assert after == before
    assert _history(conn) == 0


# --- the reported case through the real CLI ------------------------------------------------


def _assistant(session: str, text: str, minute: int) -> bytes:
    record = {
        "type": "assistant",
        "sessionId": session,
        "cwd": "/work/proj",
        "uuid": f"{session}-a-{minute}",
        "timestamp": (AT + timedelta(minutes=minute)).isoformat().replace("+00:00", "Z"),
        "message": {
            "id": "msg_1",  # a proxy or a local model server numbering from 1 in every session
            "model": "local-model",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
        },
    }
    return (json.dumps(record) + "\n").encode()


def test_backfill_of_two_sessions_reusing_msg_1_keeps_both_answers(
    tmp_path: Path, db_url: str
) -> None:
    projects = tmp_path / ".claude" / "projects" / "-work-proj"
    projects.mkdir(parents=True)
    (projects / "s-one.jsonl").write_bytes(
        claude_user("s-one", "how do we rotate the keys?", 1)
        + _assistant("s-one", "Use vault rotate.", 2)
    )
    (projects / "s-two.jsonl").write_bytes(
        claude_user("s-two", "which port does staging use?", 600)
        + _assistant("s-two", "Staging listens on 8443.", 601)
    )

    first = memory_capture(tmp_path, db_url, "backfill", "--json")
    second = memory_capture(tmp_path, db_url, "backfill", "--json")
    shown = memory_capture(tmp_path, db_url, "backfill")

    assert first.returncode == 0, first.stderr
    totals = json.loads(first.stdout)["platforms"]["claude-code"]
    assert (totals["inserted"], totals["updated"], totals["collisions"]) == (4, 0, 1)
    again = json.loads(second.stdout)["platforms"]["claude-code"]
    assert (again["inserted"], again["updated"]) == (0, 0)
    assert "0 rows stored, 4 already stored" in " ".join(shown.stdout.split())
    status = memory_capture(tmp_path, db_url, "status", "--json")
    said = memory_capture(tmp_path, db_url, "status")
    assert json.loads(status.stdout)["platforms"]["claude-code"]["stored_apart"] == 1
    assert "claude-code: 1 turn(s) reuse a message id" in " ".join(said.stdout.split())
    with psycopg.connect(db_url) as db:
        answers = db.execute(
            "SELECT session_id, message FROM memory WHERE role = 'assistant' ORDER BY session_id"
        ).fetchall()
        history = db.execute("SELECT count(*) FROM memory_history").fetchone()
    assert answers == [("s-one", "Use vault rotate."), ("s-two", "Staging listens on 8443.")]
    assert history == (0,)


@pytest.mark.parametrize("forgotten", ["s-one", "s-two"])
def test_forgetting_one_sessions_msg_1_neither_buries_the_other_nor_comes_back(
    forgotten: str, tmp_path: Path, db_url: str
) -> None:
    """``s-one`` holds the key itself, ``s-two`` its scoped key: either tombstone buries only
    its own session's turn."""
    projects = tmp_path / ".claude" / "projects" / "-work-proj"
    projects.mkdir(parents=True)
    one, two = projects / "s-one.jsonl", projects / "s-two.jsonl"
    one.write_bytes(_assistant("s-one", "The secret plan is in plan.md.", 2))
    two.write_bytes(_assistant("s-two", "Staging listens on 8443.", 601))
    assert memory_capture(tmp_path, db_url, "backfill").returncode == 0
    env = env_for(db_url, tmp_path)

    forgot = run("mcp-agents-memory", "forget", "--session", forgotten, "-y", env=env)
    one.write_bytes(b"")  # truncated and written again: both files are read from the start
    two.write_bytes(b"")
    memory_capture(tmp_path, db_url, "backfill")
    one.write_bytes(_assistant("s-one", "The secret plan is in plan.md.", 2))
    two.write_bytes(_assistant("s-two", "Staging listens on 8443.", 601))
    again = memory_capture(tmp_path, db_url, "backfill")

    assert forgot.returncode == 0, forgot.stderr
    assert again.returncode == 0, again.stderr
    with psycopg.connect(db_url) as db:
        left = db.execute("SELECT session_id, message FROM memory ORDER BY id").fetchall()
    kept = {"s-one": "The secret plan is in plan.md.", "s-two": "Staging listens on 8443."}
    del kept[forgotten]
    assert dict(left) == kept
