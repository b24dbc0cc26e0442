"""Our MCP server through the MCP Inspector's CLI (``@modelcontextprotocol/inspector --cli``,
installed once from npm into the e2e CLI cache): every tool listed with its annotations, and
each new tool called over stdio."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Ran, cli_root, run

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

PACKAGE = "@modelcontextprotocol/inspector"


@pytest.fixture(scope="module")
def inspector() -> Path:
    target = cli_root() / "inspector"
    binary = target / "node_modules" / ".bin" / "mcp-inspector"
    if not binary.exists():
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            pytest.skip("node and npm are needed for the MCP Inspector")
        target.mkdir(parents=True, exist_ok=True)
        (target / "package.json").write_text('{"private": true}\n', encoding="utf-8")
        argv = [npm, "install", "--no-fund", "--no-audit", "--no-update-notifier", PACKAGE]
        done = run(argv, env=os.environ, cwd=target, timeout=300)
        if done.returncode != 0 or not binary.exists():
            pytest.skip(f"`npm install {PACKAGE}` failed (registry unreachable?):\n{done.tail(8)}")
    return binary


def _inspect(inspector: Path, db_url: str, home: Path, *args: str) -> Any:
    server = str(Path(sys.executable).parent / "mcp-agents-memory")
    env_args = [
        f"-e DATABASE_URL={db_url}",
        "-e EMBEDDING_BACKEND=none",
        f"-e HOME={home}",
        "-e USER_NAME=inspector",
    ]
    argv = [str(inspector), "--cli", *" ".join(env_args).split(" "), server, *args]
    env = {**os.environ, "HOME": str(home)}
    done: Ran = run(argv, env=env, cwd=home, timeout=180)
    assert done.returncode == 0, done.tail()
    return json.loads(done.stdout)


def test_the_inspector_lists_every_tool_with_annotations(
    inspector: Path, db_url: str, tmp_path: Path
) -> None:
    listed = _inspect(inspector, db_url, tmp_path, "--method", "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}
    assert set(tools) == {
        "memory_startup",
        "search_memory",
        "read_memory",
        "manage_knowledge",
        "save_message",
        "manage_project_tags",
        "task_pin",
    }
    for tool in tools.values():
        hints = tool["annotations"]
        assert {"readOnlyHint", "destructiveHint", "idempotentHint"} <= set(hints), tool["name"]
    assert tools["read_memory"]["annotations"]["readOnlyHint"] is True
    assert tools["task_pin"]["annotations"]["readOnlyHint"] is False


def _call(inspector: Path, db_url: str, home: Path, tool: str, **args: str) -> Any:
    pairs = [a for k, v in args.items() for a in ("--tool-arg", f"{k}={v}")]
    return _inspect(inspector, db_url, home, "--method", "tools/call", "--tool-name", tool, *pairs)


def test_the_inspector_calls_the_new_tools(inspector: Path, db_url: str, tmp_path: Path) -> None:
    created = _call(
        inspector, db_url, tmp_path, "task_pin", action="create", to="codex-cli", title="Ship"
    )
    pin = json.loads(created["content"][0]["text"])["pins"][0]
    assert pin["status"] == "pending" and pin["to"] == "codex-cli"
    fact = _call(
        inspector,
        db_url,
        tmp_path,
        "manage_knowledge",
        action="add",
        content="port 5433",
        slot="db.port",
    )
    stored = json.loads(fact["content"][0]["text"])
    assert stored["slot"] == "db.port"
    read = _call(inspector, db_url, tmp_path, "read_memory", memory_id=str(stored["id"]))
    assert json.loads(read["content"][0]["text"])["turns"][0]["message"] == "port 5433"
    tags = _call(inspector, db_url, tmp_path, "manage_project_tags", action="list_new_tags")
    assert json.loads(tags["content"][0]["text"])["new_tags"] == []
    wrong = _call(inspector, db_url, tmp_path, "task_pin", action="update")
    assert wrong.get("isError") is True and "`pin`" in wrong["content"][0]["text"]


def test_the_inspector_lists_the_resources_and_the_recall_prompt(
    inspector: Path, db_url: str, tmp_path: Path
) -> None:
    resources = _inspect(inspector, db_url, tmp_path, "--method", "resources/list")
    assert {r["uri"] for r in resources["resources"]} == {"memory://brief", "memory://projects"}
    templates = _inspect(inspector, db_url, tmp_path, "--method", "resources/templates/list")
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == [
        "memory://session/{session_id}"
    ]
    brief = _inspect(
        inspector, db_url, tmp_path, "--method", "resources/read", "--uri", "memory://brief"
    )
    assert brief["contents"][0]["text"]
    prompts = _inspect(inspector, db_url, tmp_path, "--method", "prompts/list")
    assert [p["name"] for p in prompts["prompts"]] == ["recall"]
    got = _inspect(
        inspector, db_url, tmp_path, "--method", "prompts/get", "--prompt-name", "recall",
        "--prompt-args", "topic=invoice numbering",
    )  # fmt: skip
    assert "invoice numbering" in got["messages"][0]["content"]["text"]


def test_the_inspector_gets_a_compact_search_answer(
    inspector: Path, db_url: str, tmp_path: Path
) -> None:
    _call(inspector, db_url, tmp_path, "manage_knowledge", action="add", content="port 5433 db")
    found = _call(inspector, db_url, tmp_path, "search_memory", query="port 5433")
    text = found["content"][0]["text"]
    assert text.splitlines()[0].startswith("1 hits") and "#" in text and "read_memory" in text
    assert found["structuredContent"]["count"] == 1
