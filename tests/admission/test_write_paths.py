"""Every write path of memory text goes through admission.

Two halves: the code (only ``agents_memory/admission/`` makes an ``AdmittedText``, and the
store's only statements that write memory text take one, so mypy rejects any write path that
skips admission), and the behaviour (each real write path, fed a secret, a ``<private>`` span
and the brief's marker, leaves in PostgreSQL only what admission lets in).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from mcp import Client
from mcp.types import Implementation

import agents_memory
from agents_memory.adapters import get_adapter
from agents_memory.admission.echo import BRIEF_MARKER
from agents_memory.capture.pipeline import FileOutcome, Ingestor
from agents_memory.config import Settings
from agents_memory.recall.state import ServerState, open_state
from agents_memory.server.app import create_server
from agents_memory.store import database, knowledge
from agents_memory.store.memories import AdmittedText, NewMemory, ensure_user
from agents_memory.store.owner import bundle_import, rewrite
from tests.capture.transcripts import claude_session_path, claude_user

PACKAGE = Path(agents_memory.__file__).parent
FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
KEPT = "okapi-lantern"
"""A word only the kept part of the payload carries."""
HIDDEN = "vault pin 4471"
PAYLOAD = f"{KEPT}: deploy with token {SECRET} <private>the {HIDDEN}</private> then restart"
ECHO_WORD = "quokka-brief"
ECHO = f"{BRIEF_MARKER}\n# Memory brief\n{ECHO_WORD} from an earlier session"


# --- the code -------------------------------------------------------------------------------


def _makes_admitted_text(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if name == "AdmittedText":
        return True
    return name == "cast" and bool(node.args) and "AdmittedText" in ast.unparse(node.args[0])


def test_only_the_admission_package_makes_admitted_text() -> None:
    makers: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        count = sum(1 for node in ast.walk(tree) if _makes_admitted_text(node))
        if count:
            makers[str(path.relative_to(PACKAGE))] = count
    assert set(makers) == {"admission/admit.py"}, makers


_WRITES_MEMORY_TEXT = re.compile(
    r"INSERT\s+INTO\s+memory\s*\(|UPDATE\s+memory\s+SET\s+(?:[^\"']*?[\s,])?message\s*=",
    re.IGNORECASE,
)


def test_the_store_writes_memory_text_only_where_it_takes_admitted_text() -> None:
    writers = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if _WRITES_MEMORY_TEXT.search(path.read_text(encoding="utf-8"))
    }
    assert writers == {
        "store/memories.py",
        "store/knowledge.py",
        "store/owner/rewrite.py",
        "store/owner/bundle_import.py",
    }
    row = typing.get_type_hints(NewMemory)
    assert row["message"] is AdmittedText
    assert row["raw_message"] == AdmittedText | None
    assert typing.get_type_hints(knowledge.update_memory_text)["text"] is AdmittedText
    # a rewrite (doctor --secrets --fix, forget) writes what its text function admitted
    assert typing.get_type_hints(rewrite.rewrite_texts)["rewrite"] == Callable[[str], AdmittedText]
    imported = typing.get_type_hints(bundle_import.ImportedMemory)
    assert imported["message"] is AdmittedText
    assert imported["raw_message"] == AdmittedText | None


# --- the behaviour --------------------------------------------------------------------------


def _call(server: Any, tool: str, args: dict[str, Any], client: str = "cursor") -> Any:
    async def go() -> Any:
        async with Client(server, client_info=Implementation(name=client, version="1")) as c:
            return await c.call_tool(tool, args)

    return anyio.run(go)


def _ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    parsed: dict[str, Any] = json.loads(result.content[0].text)
    return parsed


Write = Callable[[str], Any]
"""Writes one text through a write path; returns what the path answered."""


def _capture(settings: Settings, home: Path) -> Write:
    """The capture pipeline over a real Claude Code transcript (its own turns captured first),
    then over each text appended to it as a user turn."""
    path = claude_session_path(home, "s-admission")
    shutil.copy(FIXTURES / "claude-code" / "spotter_v2.1.38_tool_heavy.jsonl", path)
    counter = iter(range(1, 1000))

    def ingest() -> FileOutcome:
        with database.connect(database.locate_database(settings)) as conn:
            user_id = ensure_user(conn, settings.user_name)
            conn.commit()
            ingestor = Ingestor(settings, user_id=user_id, has_vector=True, home=home)
            return ingestor.ingest_file(conn, path, get_adapter("claude-code"), final=True)

    assert ingest().stored > 0

    def write(text: str) -> FileOutcome:
        with path.open("ab") as f:
            f.write(claude_user("s-admission", text, next(counter)))
        return ingest()

    return write


def _tool(server: Any, tool: str, args: Callable[[str], dict[str, Any]]) -> Write:
    return lambda text: _call(server, tool, args(text))


def _update(server: Any) -> Write:
    added = _ok(_call(server, "manage_knowledge", {"action": "add", "content": "first wording"}))

    def write(text: str) -> Any:
        args = {"action": "update", "memory_id": added["id"], "content": text}
        return _call(server, "manage_knowledge", args)

    return write


PATHS = ["capture", "save_message", "manage_knowledge add", "manage_knowledge update", "profile"]


def _write_path(name: str, settings: Settings, state: ServerState, home: Path) -> Write:
    server = create_server(settings, state)
    if name == "capture":
        return _capture(settings, home)
    if name == "save_message":
        return _tool(server, "save_message", lambda t: {"role": "user", "message": t})
    if name == "manage_knowledge add":
        return _tool(server, "manage_knowledge", lambda t: {"action": "add", "content": t})
    if name == "manage_knowledge update":
        return _update(server)
    return _tool(
        server,
        "manage_knowledge",
        lambda t: {"action": "add", "target": "sub_profile", "content": t},
    )


def _stored(conn: psycopg.Connection[Any], word: str) -> list[str]:
    """Every stored text (memory, raw text, history, profiles) that carries ``word``."""
    like = f"%{word}%"
    rows = conn.execute(
        "SELECT message FROM memory WHERE message LIKE %(w)s"
        " UNION ALL SELECT raw_message FROM memory WHERE raw_message LIKE %(w)s"
        " UNION ALL SELECT old_message FROM memory_history WHERE old_message LIKE %(w)s"
        " UNION ALL SELECT sub_profile FROM users WHERE sub_profile LIKE %(w)s"
        " UNION ALL SELECT core_profile FROM users WHERE core_profile LIKE %(w)s",
        {"w": like},
    ).fetchall()
    return [str(r[0]) for r in rows]


def _everything(conn: psycopg.Connection[Any]) -> str:
    rows = conn.execute(
        "SELECT coalesce(string_agg(concat_ws(' ', message, raw_message), ' '), '') FROM memory"
    ).fetchone()
    profiles = conn.execute(
        "SELECT coalesce(string_agg(concat_ws(' ', core_profile, sub_profile), ' '), '') FROM users"
    ).fetchone()
    assert rows is not None and profiles is not None
    return f"{rows[0]} {profiles[0]}"


@pytest.fixture
def state(make_settings: Any, db_url: str, tmp_path: Path) -> Any:
    settings = make_settings(database_url=db_url, embedding_backend="none")
    opened = open_state(settings)
    opened.cwd = str(tmp_path / "project")
    yield opened
    opened.close()


@pytest.mark.parametrize("name", PATHS)
def test_every_write_path_stores_text_redacted_and_without_private_spans(
    name: str, state: ServerState, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    write = _write_path(name, state.settings, state, tmp_path)
    answer = write(PAYLOAD)
    if name != "capture":
        assert _ok(answer)["stored"] is True
    stored = _stored(conn, KEPT)
    assert stored, f"{name} stored nothing"
    assert all("[redacted:" in text and "then restart" in text for text in stored)
    everything = _everything(conn)
    assert SECRET not in everything
    assert HIDDEN not in everything and "<private>" not in everything


@pytest.mark.parametrize("name", PATHS)
def test_every_write_path_refuses_the_brief_coming_back(
    name: str, state: ServerState, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    write = _write_path(name, state.settings, state, tmp_path)
    answer = write(ECHO)
    if name == "capture":
        assert answer.dropped == 1 and answer.stored == 0
    elif name == "save_message":
        assert _ok(answer) == {
            "stored": False,
            "skipped": "brief echo: the text is the memory brief itself",
            "id": None,
            "role": None,
            "created_at": None,
        }
    else:
        assert answer.is_error and "brief" in answer.content[0].text
    assert _stored(conn, ECHO_WORD) == []
    assert BRIEF_MARKER not in _everything(conn)


@pytest.mark.parametrize("name", ["save_message", "manage_knowledge add"])
def test_saves_from_an_excluded_project_are_not_stored(
    name: str, make_settings: Any, db_url: str, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    project = tmp_path / "acme-private" / "api"
    project.mkdir(parents=True)
    settings = make_settings(
        database_url=db_url, embedding_backend="none", capture_exclude=("*-private",)
    )
    excluded = open_state(settings)
    try:
        excluded.cwd = str(project)
        answer = _write_path(name, settings, excluded, tmp_path)(PAYLOAD)
    finally:
        excluded.close()
    if name == "save_message":
        assert _ok(answer)["skipped"] == "excluded project (CAPTURE_EXCLUDE)"
    else:
        assert answer.is_error and "CAPTURE_EXCLUDE" in answer.content[0].text
    assert _stored(conn, KEPT) == []


@pytest.mark.parametrize("name", ["manage_knowledge add", "manage_knowledge update", "profile"])
def test_a_fact_that_is_all_private_is_an_error_and_nothing_is_stored(
    name: str, state: ServerState, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    answer = _write_path(name, state.settings, state, tmp_path)(f"<private>{KEPT}</private>")
    assert answer.is_error and "private" in answer.content[0].text
    assert _stored(conn, KEPT) == []
    empty = conn.execute("SELECT count(*) FROM memory WHERE btrim(message) = ''").fetchone()
    assert empty == (0,)
