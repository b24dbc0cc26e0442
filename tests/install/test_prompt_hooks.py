"""The per-prompt hook beside the session-start hook: install registers it for every client
that has one (the client's own event and time-out unit), uninstall removes it and leaves the
user's own hooks of that event; clients without one get none."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from agents_memory.adapters import get_adapter, names, opencode_plugin
from agents_memory.adapters.base import Commands, HookGroup
from agents_memory.adapters.opencode import RECALL_HEADER
from agents_memory.install.installer import installed_entries
from tests.install.conftest import load, seed_home

PER_PROMPT = [
    ("claude-code", ".claude/settings.json", "UserPromptSubmit", 5),
    ("codex-cli", ".codex/hooks.json", "UserPromptSubmit", 5),
    ("gemini-cli", ".gemini/settings.json", "BeforeAgent", 5000),
]
USERS_OWN = {"type": "command", "command": "/usr/local/bin/my-prompt-logger"}


def _handlers(data: Any, event: str) -> list[dict[str, Any]]:
    groups = (data or {}).get("hooks", {}).get(event, [])
    return [h for g in groups for h in g["hooks"]]


@pytest.mark.parametrize(("platform", "path", "event", "timeout"), PER_PROMPT)
def test_install_registers_the_per_prompt_hook_and_uninstall_removes_only_it(
    home: Path,
    make_installer: Any,
    commands: Commands,
    platform: str,
    path: str,
    event: str,
    timeout: int,
) -> None:
    seed_home(home)
    config = home / path
    config.parent.mkdir(parents=True, exist_ok=True)
    if not config.exists():
        config.write_text("{}\n", encoding="utf-8")

    data = json.loads(config.read_text(encoding="utf-8"))
    data.setdefault("hooks", {}).setdefault(event, []).append({"hooks": [USERS_OWN]})
    config.write_text(json.dumps(data), encoding="utf-8")

    make_installer().run("install", (platform,))
    ours = shlex.join([str(commands.memory_capture), "hook", "prompt", "--platform", platform])
    handlers = _handlers(load(config), event)
    assert [h["command"] for h in handlers] == [USERS_OWN["command"], ours]
    assert handlers[-1]["timeout"] == timeout
    assert get_adapter(platform).prompt_hook_event == event

    make_installer().run("install", (platform,))  # a second install changes nothing
    assert [h["command"] for h in _handlers(load(config), event)] == [USERS_OWN["command"], ours]

    make_installer().run("uninstall", (platform,))
    assert _handlers(load(config), event) == [USERS_OWN]


def test_opencode_gets_the_plugin_only_where_it_has_plugins_already(
    home: Path, make_installer: Any, commands: Commands
) -> None:
    seed_home(home)
    plugins = home / ".config" / "opencode" / "plugins"
    plugin = plugins / opencode_plugin.PLUGIN_FILE
    report = make_installer().run("install", ("opencode",))
    assert not plugin.exists()  # the first plugin would cost OpenCode an npm install per start
    assert opencode_plugin.SKIPPED in report.clients[0].notes

    users_own = home / ".config" / "opencode" / "plugin" / "mine.ts"
    users_own.parent.mkdir(parents=True)
    users_own.write_text("export {}\n", encoding="utf-8")
    make_installer().run("install", ("opencode",))
    source = plugin.read_text(encoding="utf-8")
    argv = [str(commands.memory_capture), "hook", "prompt", "--platform", "opencode"]
    assert f"const COMMAND = {json.dumps(argv)};" in source
    assert '"chat.message"' in source and '"experimental.chat.system.transform"' in source
    assert (
        "~/.config/opencode/plugins/mcp-agents-memory.js: per-prompt recall plugin"
        in (installed_entries(home)["opencode"])
    )
    output = get_adapter("opencode").prompt_hook_output("2026-01-02 codex-cli: a memory (id 7)")
    assert output.splitlines() == [RECALL_HEADER, "2026-01-02 codex-cli: a memory (id 7)"]
    users_own.unlink()  # ours alone still counts: uninstall finds it
    make_installer().run("uninstall", ("opencode",))
    assert not plugin.exists()


WITHOUT = sorted(set(names()) - {p for p, *_ in PER_PROMPT} - {"opencode", "hermes"})


@pytest.mark.parametrize("platform", WITHOUT)
def test_a_client_without_a_per_prompt_hook_gets_none(platform: str, home: Path) -> None:
    adapter = get_adapter(platform)
    assert adapter.prompt_hook_event is None
    assert adapter.prompt_hook_output("2026-01-02 claude-code: a memory (id 7)") == ""
    plan = adapter.install_plan(home, Commands(Path("/b/memory-capture"), Path("/b/mcp")))
    hooks = [e for edit in plan.edits for e in edit.entries if isinstance(e, HookGroup)]
    assert not any("hook prompt" in str(h.group) for h in hooks)
