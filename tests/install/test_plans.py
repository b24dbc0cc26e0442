"""Install-plan details beyond the contract every adapter keeps (idempotent, reversible plans:
``tests/adapters/test_contract.py``)."""

from __future__ import annotations

from pathlib import Path

from agents_memory.adapters import get_adapter
from agents_memory.adapters.base import Commands, is_our_hook_command


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
