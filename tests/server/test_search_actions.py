"""``search_memory`` (through the SDK's real client) finds actions and takes ``kind`` and
``file``: a hit found through an action says so and carries it; a kind it does not know is
refused by the tool's schema. The real Codex fixture captured by the real backfill."""

from __future__ import annotations

from pathlib import Path

from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from tests.search.test_actions_found import captured
from tests.server.mcpcall import call, error, ok


def test_search_memory_finds_actions_and_filters_by_kind_and_file(
    state: ServerState, server_settings: Settings, tmp_path: Path
) -> None:
    captured(server_settings, tmp_path)
    server = create_server(server_settings, state)

    full = {"detail": "full"}
    found = ok(call(server, "search_memory", {"query": "what error did the patch hit", **full}))
    edits = ok(call(server, "search_memory", {"kind": "edit", "file": "README.zh-TW.md", **full}))
    shell = ok(call(server, "search_memory", {"query": "phx server", "kind": "shell", **full}))
    bad = call(server, "search_memory", {"query": "x", "kind": "teleport"})

    top = found["results"][0]
    assert top["found_by_action"] and "action" in top["why"]["arms"]
    assert top["actions"][0]["excerpt"] == "patch rejected: empty patch"
    assert top["actions"][0]["line"].endswith("→ error: patch rejected: empty patch")
    [edit] = edits["results"]
    assert [a["targets"] for a in edit["actions"]] == [["README.zh-TW.md"]]
    assert {a["kind"] for h in shell["results"] for a in h["actions"]} == {"shell"}
    assert shell["results"][0]["actions"][0]["command"] == "mix phx.server"
    assert "kind" in error(bad)
