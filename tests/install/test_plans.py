"""Every adapter's install plan, applied to real files: idempotent and fully reversible."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_memory.adapters import get_adapter, names
from agents_memory.adapters.base import Commands, is_our_hook_command
from agents_memory.install.edits import Record, render_install, render_uninstall
from agents_memory.install.fileio import read_text, write_atomic
from tests.install.conftest import load, seed_home


@pytest.mark.parametrize("platform", names())
def test_every_adapter_plan_is_idempotent_and_reversible(
    platform: str, home: Path, commands: Commands
) -> None:
    originals = seed_home(home)
    plan = get_adapter(platform).install_plan(home, commands)
    assert plan.platform == platform
    assert plan.edits, "every client gets at least the MCP server entry"
    records: dict[Path, Record] = {}
    for edit in plan.edits:
        assert edit.path.is_relative_to(home)
        before = read_text(edit.path)
        first = render_install(edit, before)
        assert first.text != before
        write_atomic(edit.path, first.text)
        records[edit.path] = first.record
        again = render_install(edit, first.text)
        assert again.text == first.text, f"second install of {edit.path} changed it"
        assert not again.record.created_keys
    for edit in plan.edits:
        gone = render_uninstall(edit, read_text(edit.path), records[edit.path])
        write_atomic(edit.path, gone.text)
        original = originals.get(edit.path)
        if original is None:
            assert not edit.path.exists(), f"{edit.path} was created by install"
        else:
            assert load(edit.path) == load_text(edit.path, original)


def load_text(path: Path, text: str) -> object:
    tmp = path.with_name(path.name + ".expected" + path.suffix)
    tmp.write_text(text, encoding="utf-8")
    try:
        return load(tmp)
    finally:
        tmp.unlink()


@pytest.mark.parametrize("platform", names())
def test_every_hook_command_in_a_plan_is_recognised_as_ours(
    platform: str, home: Path, commands: Commands
) -> None:
    plan = get_adapter(platform).install_plan(home, commands)
    for edit in plan.edits:
        for entry in edit.entries:
            group = getattr(entry, "group", None)
            if group is not None:
                for handler in group["hooks"]:
                    assert is_our_hook_command(handler["command"])
                    assert handler["command"].startswith(str(commands.memory_capture))


def test_foreign_hook_commands_are_not_ours() -> None:
    assert not is_our_hook_command("/usr/bin/memory-capture-other hook flush")
    assert not is_our_hook_command("memory-capture run")
    assert not is_our_hook_command("echo memory-capture hook")
    assert not is_our_hook_command('unbalanced "quote')
    assert is_our_hook_command("'/opt/my venv/bin/memory-capture' hook flush")


def test_antigravity_writes_every_mcp_config_whose_directory_exists(
    home: Path, commands: Commands
) -> None:
    plan = get_adapter("antigravity").install_plan(home, commands)
    assert [e.path for e in plan.edits if e.format == "json"] == [
        home / ".gemini" / "antigravity-cli" / "mcp_config.json"
    ]
    (home / ".gemini" / "config").mkdir(parents=True)
    (home / ".gemini" / "antigravity-cli").mkdir(parents=True)
    plan = get_adapter("antigravity").install_plan(home, commands)
    assert {e.path.parent.name for e in plan.edits if e.format == "json"} == {
        "config",
        "antigravity-cli",
    }
