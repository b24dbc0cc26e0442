"""The MCP server through the SDK's real client (in process and over stdio)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from agents_memory.adapters import platform_for_client
from agents_memory.admission.echo import BRIEF_MARKER
from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from agents_memory.store.memories import NewMemory, insert_memories


def _call(server: Any, tool: str, args: dict[str, Any], client: str = "claude-code") -> Any:
    async def go() -> Any:
        async with Client(server, client_info=Implementation(name=client, version="1")) as c:
            return await c.call_tool(tool, args)

    return anyio.run(go)


def _json(result: Any) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def _seed(state: ServerState) -> None:
    with state.pool.connection() as conn:
        insert_memories(
            conn,
            state.user_id,
            [
                NewMemory(
                    "codex-cli",
                    "user",
                    "We chose PostgreSQL with pgvector for the pool",
                    external_uuid="m:1",
                    device_name="test-device",
                ),
                NewMemory(
                    "codex-cli",
                    "assistant",
                    "Noted: the capture daemon uses inotify",
                    external_uuid="m:2",
                    agent_model="gpt-5",
                    device_name="test-device",
                ),
            ],
        )


def test_tools_are_listed_with_descriptions_for_a_model(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)

    async def go() -> Any:
        async with Client(server) as c:
            return await c.list_tools(), c.instructions

    tools, instructions = anyio.run(go)
    names = {t.name: t for t in tools.tools}
    assert set(names) == {
        "memory_startup",
        "search_memory",
        "read_memory",
        "manage_knowledge",
        "save_message",
        "manage_project_tags",
        "task_pin",
    }
    for tool in names.values():
        assert tool.description and len(tool.description) > 40
        hints = tool.annotations
        assert hints is not None and hints.read_only_hint is not None
        assert hints.destructive_hint is False and hints.idempotent_hint is not None
    read_only = {n for n, t in names.items() if t.annotations and t.annotations.read_only_hint}
    assert read_only == {"memory_startup", "search_memory", "read_memory"}
    props = names["search_memory"].input_schema["properties"]
    assert {
        "query",
        "project",
        "since",
        "until",
        "role",
        "platform",
        "device_scope",
        "limit",
        "include_archived",
        "as_of",
        "queries",
        "detail",
    } <= set(props)  # the older names still work but are not advertised
    assert not {"p_tag", "date_range", "agent_platform"} & set(props)
    assert all(p.get("description") for p in props.values())
    assert instructions is not None and len(instructions) <= 1900
    assert "memory_startup" in instructions and BRIEF_MARKER in instructions


def test_memory_startup_returns_the_brief(state: ServerState, server_settings: Settings) -> None:
    _seed(state)
    result = _call(
        create_server(server_settings, state), "memory_startup", {"agent_platform_filter": False}
    )
    assert not result.is_error
    text = result.content[0].text
    assert text.startswith(BRIEF_MARKER) and "pgvector for the pool" in text


def test_search_memory_finds_by_words_and_explains_why(
    state: ServerState, server_settings: Settings
) -> None:
    _seed(state)
    server = create_server(server_settings, state)
    found = _json(
        _call(server, "search_memory", {"detail": "full", "query": "pgvector pools", "limit": 5})
    )
    assert found["used"] == "fulltext" and found["count"] == 1
    hit = found["results"][0]
    assert "PostgreSQL" in hit["message"] and hit["why"]["arms"] == ["fulltext"]
    # A word inside a longer word is found by the word-level fallback.
    partial = _json(_call(server, "search_memory", {"detail": "full", "query": "postgres"}))
    assert partial["used"] == "ilike" and partial["count"] == 1
    newest = _json(_call(server, "search_memory", {"detail": "full"}))
    assert newest["used"] == "recency" and newest["count"] == 2


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"since": "sometime soon"}, "since 'sometime soon' not understood"),
        ({"date_range": "sometime soon"}, "since 'sometime soon' not understood"),
        ({"limit": 500}, "limit"),
        ({"device_scope": "galaxy"}, "device_scope"),
    ],
)
def test_bad_search_arguments_are_tool_errors_the_model_can_act_on(
    state: ServerState, server_settings: Settings, args: dict[str, Any], fragment: str
) -> None:
    result = _call(create_server(server_settings, state), "search_memory", args)
    assert result.is_error
    assert fragment in result.content[0].text


def test_search_memory_takes_the_short_platform_names_of_the_command_line(
    state: ServerState, server_settings: Settings
) -> None:
    _seed(state)
    server = create_server(server_settings, state)
    for name in ("codex", "CODEX-CLI", "codex-cli"):
        found = _json(_call(server, "search_memory", {"detail": "full", "platform": name}))
        assert found["count"] == 2, name
    assert (
        _json(_call(server, "search_memory", {"detail": "full", "platform": "claude"}))["count"]
        == 0
    )
    old = _json(
        _call(server, "search_memory", {"detail": "full", "agent_platform": "codex"})
    )  # the old name
    assert old["count"] == 2
    with state.pool.connection() as conn:  # a client with no adapter, as save_message names it
        insert_memories(conn, state.user_id, [NewMemory("cursor", "user", "Cursor saved this")])
    assert (
        _json(_call(server, "search_memory", {"detail": "full", "platform": "cursor"}))["count"]
        == 1
    )
    refused = _call(server, "search_memory", {"detail": "full", "platform": "Codx"})
    assert refused.is_error
    assert "unknown platform 'Codx' (did you mean 'codex'?)" in refused.content[0].text
    assert "claude-code" in refused.content[0].text and "gemini" in refused.content[0].text


@pytest.mark.parametrize("name", ["project", "p_tag"])
def test_a_misspelt_project_is_an_error_naming_the_close_projects(
    state: ServerState, server_settings: Settings, name: str
) -> None:
    with state.pool.connection() as conn:
        conn.execute("INSERT INTO project_tags (name) VALUES ('quokka-api')")
    result = _call(
        create_server(server_settings, state),
        "search_memory",
        {"detail": "full", "query": "x", name: "quokka"},
    )
    assert result.is_error
    text = result.content[0].text
    assert "no project 'quokka' (did you mean 'quokka-api'?)" in text
    assert "without project" in text


def test_the_old_argument_names_are_accepted_with_the_same_meaning(
    state: ServerState, server_settings: Settings
) -> None:
    _seed(state)
    server = create_server(server_settings, state)
    new = _json(
        _call(server, "search_memory", {"detail": "full", "since": "today", "platform": "codex"})
    )
    old = _json(
        _call(
            server,
            "search_memory",
            {"detail": "full", "date_range": "today", "agent_platform": "codex"},
        )
    )
    assert new["count"] == old["count"] == 2
    none = _json(_call(server, "search_memory", {"detail": "full", "until": "2000-01-01"}))
    assert none["count"] == 0


def test_manage_knowledge_add_update_remove_keeps_history(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)
    added = _json(
        _call(
            server,
            "manage_knowledge",
            {"action": "add", "content": "The staging database listens on port 5433"},
        )
    )
    assert added["stored"] and added["is_pinned"] and added["embedded"] == "disabled"
    memory_id = added["id"]
    updated = _json(
        _call(
            server,
            "manage_knowledge",
            {
                "action": "update",
                "memory_id": memory_id,
                "content": "The staging database listens on port 6543",
            },
        )
    )
    assert updated["stored"] and updated["tagged"] == "ok"  # tagged in the same call
    with state.pool.connection() as conn:
        row = conn.execute(
            "SELECT message, tag_processed, is_pinned FROM memory WHERE id = %s", (memory_id,)
        ).fetchone()
        history = conn.execute(
            "SELECT old_message FROM memory_history WHERE memory_id = %s", (memory_id,)
        ).fetchall()
    assert row == ("The staging database listens on port 6543", True, True)  # no tagger model
    assert history == [("The staging database listens on port 5433",)]
    removed = _json(_call(server, "manage_knowledge", {"action": "remove", "memory_id": memory_id}))
    assert removed["stored"] and removed["is_pinned"] is False
    gone = _json(_call(server, "search_memory", {"detail": "full", "query": "staging"}))
    assert gone["count"] == 0
    back = _json(
        _call(
            server,
            "search_memory",
            {"detail": "full", "query": "staging", "include_archived": True},
        )
    )
    assert back["count"] == 1


def test_manage_knowledge_errors_name_the_fix(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)
    missing = _call(server, "manage_knowledge", {"action": "remove", "memory_id": 987654})
    assert missing.is_error and "search_memory" in missing.content[0].text
    no_id = _call(server, "manage_knowledge", {"action": "update", "content": "x"})
    assert no_id.is_error and "memory_id" in no_id.content[0].text
    empty = _call(server, "manage_knowledge", {"action": "add"})
    assert empty.is_error and "content" in empty.content[0].text


def test_sub_profile_edits_are_recorded(state: ServerState, server_settings: Settings) -> None:
    server = create_server(server_settings, state)
    _json(
        _call(
            server,
            "manage_knowledge",
            {"action": "add", "target": "sub_profile", "content": "Works on memory capture"},
        )
    )
    second = _json(
        _call(
            server,
            "manage_knowledge",
            {"action": "add", "target": "sub_profile", "content": "Prefers short answers"},
        )
    )
    assert second["sub_profile"] == "Works on memory capture\nPrefers short answers"
    _json(_call(server, "manage_knowledge", {"action": "remove", "target": "sub_profile"}))
    with state.pool.connection() as conn:
        changes = conn.execute("SELECT count(*) FROM profile_history").fetchone()
    assert changes == (3,)


def test_save_message_refuses_captured_clients_and_stores_others(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)
    refused = _json(
        _call(server, "save_message", {"role": "user", "message": "hi"}, client="claude-code")
    )
    assert refused == {
        "stored": False,
        "skipped": "auto-capture active",
        "id": None,
        "role": None,
        "created_at": None,
    } or refused["skipped"] == ("auto-capture active")
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    stored = _json(
        _call(
            server,
            "save_message",
            {"role": "user", "message": f"my token is {secret} <private>and this</private>"},
            client="cursor",
        )
    )
    assert stored["stored"] and stored["role"] == "user"
    with state.pool.connection() as conn:
        row = conn.execute(
            "SELECT agent_platform, message, source FROM memory WHERE id = %s", (stored["id"],)
        ).fetchone()
    assert row is not None and row[0] == "cursor" and row[2] == "save_message"
    assert secret not in row[1] and "and this" not in row[1]


def test_client_names_map_to_platforms() -> None:
    assert platform_for_client("claude-code") == "claude-code"
    assert platform_for_client("codex-mcp-client") == "codex-cli"
    assert platform_for_client("gemini-cli-mcp-client") == "gemini-cli"
    assert platform_for_client("Cursor") == "cursor"
    assert platform_for_client(None) is None


def test_stdio_server_answers_a_real_client(
    server_settings: Settings, db_url: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "MEMORY_"))}
    env.update(
        DATABASE_URL=db_url,
        EMBEDDING_BACKEND="none",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "cfg"),
        USER_NAME="tester",
    )
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "mcp-agents-memory"), args=[], env=env
    )

    async def go() -> Any:
        async with Client(params) as c:
            tools = await c.list_tools()
            added = await c.call_tool(
                "manage_knowledge", {"action": "add", "content": "stdio works"}
            )
            found = await c.call_tool("search_memory", {"detail": "full", "query": "stdio"})
            return tools, added, found

    tools, added, found = anyio.run(go)
    assert len(tools.tools) == 7
    assert json.loads(added.content[0].text)["stored"]
    assert json.loads(found.content[0].text)["count"] == 1


def test_every_platform_a_captured_client_writes_counts_as_captured(
    state: ServerState, server_settings: Settings
) -> None:
    assert {"codex-cli", "codex-desktop", "claude-code"} <= state.captured_platforms
    refused = _json(
        _call(
            create_server(server_settings, state),
            "save_message",
            {"role": "user", "message": "hi", "agent_platform": "codex-desktop"},
            client="some-ui",
        )
    )
    assert refused["skipped"] == "auto-capture active"


def test_the_new_tools_answer_over_stdio(
    server_settings: Settings, db_url: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "MEMORY_"))}
    env.update(
        DATABASE_URL=db_url,
        EMBEDDING_BACKEND="none",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "cfg"),
        USER_NAME="tester",
    )
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "mcp-agents-memory"), args=[], env=env
    )

    async def go() -> list[Any]:
        async with Client(params) as c:
            pin = await c.call_tool(
                "task_pin", {"action": "create", "to": "codex-cli", "title": "Review the PR"}
            )
            pins = await c.call_tool("task_pin", {"action": "query", "to": "codex-cli"})
            fact = await c.call_tool(
                "manage_knowledge", {"action": "add", "content": "port 5433", "slot": "db.port"}
            )
            fact_id = json.loads(fact.content[0].text)["id"]
            around = await c.call_tool("read_memory", {"memory_id": fact_id, "after": 2})
            tags = await c.call_tool("manage_project_tags", {"action": "list_suggestions"})
            bad = await c.call_tool("task_pin", {"action": "update", "pin": 424242})
            return [pin, pins, fact, around, tags, bad]

    pin, pins, fact, around, tags, bad = anyio.run(go)
    assert json.loads(pin.content[0].text)["pins"][0]["status"] == "pending"
    assert json.loads(pins.content[0].text)["pins"][0]["title"] == "Review the PR"
    stored = json.loads(fact.content[0].text)
    assert stored["slot"] == "db.port"
    read = json.loads(around.content[0].text)
    assert [t["message"] for t in read["turns"]] == ["port 5433"] and read["session_turns"] == 1
    assert json.loads(tags.content[0].text)["new_tags"] == []
    assert bad.is_error and "status" in bad.content[0].text
