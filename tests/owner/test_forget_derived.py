"""Forgetting reaches what was built from the forgotten turns: a profile the librarian distilled
from them is emptied and built again from the turns left (never merged with its old text), its
history entries holding that text go, summaries are dropped or rebuilt, a new-tag name proposed
from them goes, and the search's word statistics forget the words. Real transcripts captured by
the product, the real Cold Path (``mcp-agents-memory coldpath --once``) against a real
OpenAI-compatible HTTP server on 127.0.0.1, the real ``forget`` and ``export`` commands."""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.store.knowledge import set_profile
from agents_memory.store.memories import ensure_user
from tests.capture.transcripts import claude_assistant, claude_session_path, claude_user
from tests.coldpath.embedding_helpers import cli_env
from tests.coldpath.fake_llm import ChatRequest, FakeLLMServer, schema_example
from tests.embeddings.fake_openai import FakeEmbeddingServer
from tests.owner.helpers import BIN, count, env_for, run, run_backfill

WORD = "quokkazebra"
"""Said only in the session that is forgotten."""
GONE, KEPT = "gone-session", "kept-session"
SUB = "Prefers short answers."
"""The owner's own words in the sub profile: built from no turn, so no forget touches them."""
WEEK = 7 * 24 * 3600


def _words(text: str) -> list[str]:
    return sorted({w.lower() for w in re.findall(r"[A-Za-z]{4,}", text)})


def answer(request: ChatRequest) -> Any:
    """The fake model repeats what it was shown, so anything built from a turn carries its
    words: the librarian's core profile lists the words of the user turns (and of the current
    core profile, as a real model would keep them), the clusterer's summary those of the turns."""
    properties = (request.schema or {}).get("properties", {})
    if "d_tag" in properties:  # the tagger proposes a new project named after the word
        return {"p_tag": f"NEW:{WORD}" if WORD in request.user else None, "d_tag": ["notes"]}
    if "core_profile" in properties:
        shown = (
            request.user.split("Current sub_profile:")[0]
            + request.user.split("Recent messages from the user (oldest first):")[1].split(
                "The user writes mostly"
            )[0]
        )
        said = [w for w in _words(shown) if w not in {"current", "core", "profile", "empty"}]
        return {"core_profile": "Talks about " + " ".join(said), "sub_profile": None}
    if "title" in properties:  # a session's summary: the words of its turns
        turns = request.user.split("\n\n", 1)[1]
        return {"title": "Session", "summary": "Covered: " + " ".join(_words(turns))[:1400]}
    if "summary" in properties:
        return {"summary": "Covered: " + " ".join(_words(request.user.split("turns", 1)[1]))}
    return schema_example(request.schema)


def _write_sessions(home: Path) -> None:
    """The kept session (three user turns) and the one to forget: one turn a week before the
    rest (its summary has no other source) and one in the kept session's week."""
    kept = claude_session_path(home, KEPT)
    kept.write_bytes(
        b"".join(
            claude_user(KEPT, text, n) + claude_assistant(KEPT, f"Done: {text.lower()}", n)
            for n, text in (
                (10, "I maintain the capture daemon in Rust"),
                (20, "The capture daemon needs a cursor test"),
                (30, "Please review the cursor code tomorrow"),
            )
        )
    )
    gone = claude_session_path(home, GONE)
    gone.write_bytes(
        claude_user(GONE, f"My {WORD} hint lives in the drawer", -WEEK)
        + claude_assistant(GONE, f"Noted the {WORD} hint.", -WEEK)
        + claude_user(GONE, f"Remember the {WORD} drawer again", 40)
        + claude_assistant(GONE, "I will remember the drawer.", 40)
    )


def _coldpath(db_url: str, home: Path, embed: str, llm: str) -> None:
    env = cli_env(
        db_url,
        home,
        embed,
        LOCAL_LLM_BASE_URL=llm,
        LIBRARIAN_MSG_THRESHOLD="3",
        SHORT_TERM_DAYS="3",
    )
    done = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "coldpath", "--once"],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _places_holding(conn: psycopg.Connection[Any], word: str) -> list[str]:
    """Every table of ours (any column, arrays and JSON included) and PostgreSQL's statistics
    of ``memory`` where ``word`` still is."""
    tables = [
        str(r[0])
        for r in conn.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
        ).fetchall()
    ]
    found = [
        t
        for t in tables
        if count(conn, f'SELECT count(*) FROM "{t}" x WHERE x::text ILIKE %s', f"%{word}%")
    ]
    if count(
        conn,
        "SELECT count(*) FROM pg_stats WHERE tablename = 'memory'"
        " AND (most_common_elems::text ILIKE %s OR most_common_vals::text ILIKE %s)",
        f"%{word}%",
        f"%{word}%",
    ):
        found.append("pg_stats")
    return found


def _profiles(conn: psycopg.Connection[Any]) -> tuple[str | None, str | None]:
    row = conn.execute("SELECT core_profile, sub_profile FROM users").fetchone()
    conn.commit()
    assert row is not None
    return row[0], row[1]


def test_a_forgotten_turn_is_nowhere_afterwards_and_the_profile_is_built_again_from_the_rest(
    settings: Settings,
    db_url: str,
    tmp_path: Path,
    conn: psycopg.Connection[Any],
    embed_server: FakeEmbeddingServer,
) -> None:
    home = tmp_path / "home"
    _write_sessions(home)
    run_backfill(settings, home)
    user_id = ensure_user(conn, "tester")
    set_profile(conn, user_id, "sub_profile", SUB, changed_by="user")
    conn.commit()

    with FakeLLMServer(replies=answer) as llm:
        _coldpath(db_url, tmp_path, embed_server.base_url, llm.base_url)
        # Built from the turns: the profile, its history, both weeks' summaries, the search's
        # common words (everything the check below looks at, so it can fail).
        core, sub = _profiles(conn)
        assert core is not None and WORD in core and sub == SUB
        before = _places_holding(conn, WORD)
        assert set(before) == {
            *("memory", "users", "profile_history", "tag_summaries", "session_summaries"),
            "project_tag_new_suggestions",  # the name the tagger proposed from those turns
            *("search_lexemes", "pg_stats"),  # a small pool: every word is "common"
        }, before
        summaries = count(conn, "SELECT count(*) FROM tag_summaries")
        assert summaries == 2

        forgot = run(
            "mcp-agents-memory", "forget", "--session", GONE, "--yes", env=env_for(db_url, home)
        )
        assert forgot.returncode == 0, forgot.stderr
        assert "summaries: 1 dropped, 1 rebuilt" in forgot.stdout
        assert "profile: core profile built from forgotten turns emptied" in forgot.stdout
        assert "session summaries: 0 written again from the turns left, 1 dropped" in forgot.stdout
        # At once, before any Cold Path pass: the word is gone, the owner's own words stay.
        assert _places_holding(conn, WORD) == []
        assert _profiles(conn) == (None, SUB)

        shown = len(llm.chat_requests)
        _coldpath(db_url, tmp_path, embed_server.base_url, llm.base_url)
        asked = [r.user for r in llm.chat_requests[shown:]]

    librarian = [u for u in asked if "Recent messages from the user" in u]
    assert len(librarian) == 1  # the profile was built again …
    assert "Current core_profile:\n(empty)" in librarian[0]  # … from the turns, not its old text
    assert SUB in librarian[0]
    assert all(WORD not in u for u in asked)
    core, sub = _profiles(conn)
    assert core is not None and "daemon" in core and sub == SUB
    assert _places_holding(conn, WORD) == []
    history = conn.execute(
        "SELECT field, changed_by, new_value FROM profile_history ORDER BY id"
    ).fetchall()
    conn.commit()
    assert [(f, by) for f, by, _ in history] == [
        ("sub_profile", "user"),
        ("core_profile", "forget"),
        ("core_profile", "librarian"),
    ]
    assert count(conn, "SELECT count(*) FROM tag_summaries WHERE NOT stale") == 1

    env = env_for(db_url, home)
    bundle, tree = tmp_path / "out.zip", tmp_path / "tree"
    assert run("mcp-agents-memory", "export", str(bundle), env=env).returncode == 0
    assert (
        run("mcp-agents-memory", "export", str(tree), "--format", "markdown", env=env).returncode
        == 0
    )
    with zipfile.ZipFile(bundle) as archive:
        members = {name: archive.read(name).decode() for name in archive.namelist()}
    assert any("daemon" in text for text in members.values())
    assert [name for name, text in members.items() if WORD in text] == []
    written = [p for p in tree.rglob("*") if p.is_file()]
    assert written and not [p for p in written if WORD in p.read_text(encoding="utf-8")]


@pytest.fixture
def two_sessions(settings: Settings, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    _write_sessions(home)
    run_backfill(settings, home)
    return home


def _turn_ids(conn: psycopg.Connection[Any], session: str) -> list[int]:
    rows = conn.execute(
        "SELECT id FROM memory WHERE session_id = %s AND role = 'user' ORDER BY message_at",
        (session,),
    ).fetchall()
    conn.commit()
    return [int(r[0]) for r in rows]


def test_a_profile_of_unknown_provenance_goes_only_when_a_forgotten_turn_predates_it(
    two_sessions: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    """An imported profile names no turns: a forgotten user turn said before its last write
    may have fed it (dropped, history too); one said after cannot have (kept)."""
    user_id = ensure_user(conn, "tester")
    set_profile(conn, user_id, "core_profile", "Imported: a Rust person.", changed_by="import",
                sources=None)  # fmt: skip
    conn.execute(
        "UPDATE profile_history SET created_at = (SELECT min(message_at) FROM memory)"
        " + interval '1 minute'"
    )
    conn.commit()
    env = env_for(db_url, two_sessions)
    later = _turn_ids(conn, KEPT)[-1]

    kept = run("mcp-agents-memory", "forget", "--id", str(later), "--yes", env=env)

    assert kept.returncode == 0, kept.stderr
    assert "profile:" not in kept.stdout
    assert _profiles(conn)[0] == "Imported: a Rust person."
    earliest = _turn_ids(conn, GONE)[0]  # a week before the others, before the profile
    dropped = run("mcp-agents-memory", "forget", "--id", str(earliest), "--yes", env=env)
    assert dropped.returncode == 0, dropped.stderr
    assert "core profile built from forgotten turns emptied (1 history entries" in dropped.stdout
    assert _profiles(conn)[0] is None
    assert count(conn, "SELECT count(*) FROM profile_history WHERE new_value IS NOT NULL") == 0
    watermark = conn.execute("SELECT librarian_last_run_at, librarian_msg_count_at_run FROM users")
    assert watermark.fetchone() == (None, None)
    conn.commit()


def test_forgetting_a_turn_drops_the_vector_of_the_turn_after_it(
    two_sessions: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    """A turn's vector is made from its text and the end of the turn before it."""
    conn.execute("UPDATE memory SET embedding = array_fill(0.1, ARRAY[384])::halfvec")
    conn.commit()
    ids = [
        int(r[0])
        for r in conn.execute(
            "SELECT id FROM memory WHERE session_id = %s ORDER BY message_at, id", (KEPT,)
        ).fetchall()
    ]
    conn.commit()

    done = run("mcp-agents-memory", "forget", "--id", str(ids[2]), "--yes",
               env=env_for(db_url, two_sessions))  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert "vectors: 1 of the turns after them made again" in done.stdout
    missing = conn.execute("SELECT id FROM memory WHERE embedding IS NULL").fetchall()
    conn.commit()
    assert [int(r[0]) for r in missing] == [ids[3]]
