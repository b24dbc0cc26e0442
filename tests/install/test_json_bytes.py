"""Install edits a JSON settings file in place: the bytes of every part it does not own stay
as they were (a one-line block stays one line, key order, indentation, the last newline), and
uninstall gives back the original file byte for byte."""

from __future__ import annotations

from difflib import SequenceMatcher
from pathlib import Path

import pytest

from tests.install.conftest import CLAUDE_JSON, CODEX_HOOKS, GEMINI_SETTINGS, seed_home

ODD_CLAUDE_SETTINGS = (
    "{\n"
    '   "$schema": "https://json.schemastore.org/claude-code-settings.json",\n'
    '   "permissions": {"allow": ["Bash(ls:*)"]},\n'
    '   "env" : { "FOO":"1" },\n'
    '   "hooks": {\n'
    '      "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command",'
    ' "command": "guard.sh" } ] } ]\n'
    "   },\n"
    '   "statusLine": {"type": "command", "command": "~/.claude/line.sh", "padding": 0}\n'
    "}"
)
"""Three-space indent, compact one-line blocks, a space before a colon, no final newline."""
TAB_CLAUDE_SETTINGS = '{\n\t"model": "opus",\n\t"permissions": {"allow": ["Bash(ls:*)"]}\n}\n'
ONE_LINE_CLAUDE_SETTINGS = '{"model":"opus","permissions":{"allow":["Bash(ls:*)"]}}'

FILES = {
    "claude-settings-odd": (".claude/settings.json", ODD_CLAUDE_SETTINGS, "claude-code"),
    "claude-settings-tabs": (".claude/settings.json", TAB_CLAUDE_SETTINGS, "claude-code"),
    "claude-settings-one-line": (".claude/settings.json", ONE_LINE_CLAUDE_SETTINGS, "claude-code"),
    "claude-json": (".claude.json", CLAUDE_JSON, "claude-code"),
    "gemini-settings": (".gemini/settings.json", GEMINI_SETTINGS, "gemini-cli"),
    "codex-hooks": (".codex/hooks.json", CODEX_HOOKS, "codex-cli"),
}


def _seed(home: Path, case: str) -> tuple[Path, str, str]:
    relative, text, platform = FILES[case]
    seed_home(home)
    path = home / relative
    path.write_bytes(text.encode())
    return path, text, platform


def _inserted_into(line: str, new: str) -> bool:
    """Whether ``new`` is ``line`` with text inserted (a member added inside a one-line
    block, or a comma and a member after its last value): every character kept, in order."""
    rest = iter(new)
    return all(char in rest for char in line)


def _lines_changed(original: str, installed: str) -> list[str]:
    """Original lines that install changed beyond inserting into them (it only adds)."""
    old, new = original.splitlines(), installed.splitlines()
    lost = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            lost += [o for o in old[i1:i2] if not any(_inserted_into(o, n) for n in new[j1:j2])]
    return lost


@pytest.mark.parametrize("case", list(FILES))
def test_install_keeps_untouched_bytes_and_uninstall_restores_the_file_byte_for_byte(
    case: str, home: Path, make_installer
) -> None:
    path, original, platform = _seed(home, case)

    make_installer().run("install", (platform,))
    installed = path.read_bytes().decode()
    make_installer().run("install", (platform,))
    twice = path.read_bytes().decode()
    report = make_installer().run("uninstall", (platform,))

    assert not report.errors
    assert "memory-capture" in installed or "mcp-agents-memory" in installed
    assert twice == installed
    assert _lines_changed(original, installed) == []
    assert installed.endswith("\n") == original.endswith("\n")
    assert path.read_bytes() == original.encode()


def test_a_compact_permissions_block_stays_on_its_one_line(home: Path, make_installer) -> None:
    path, _original, platform = _seed(home, "claude-settings-odd")
    make_installer().run("install", (platform,))
    text = path.read_text("utf-8")
    assert '\n   "permissions": {"allow": ["Bash(ls:*)"]},\n' in text
    assert '\n   "env" : { "FOO":"1" },\n' in text
    # What install adds takes the file's own three-space indent.
    assert '\n      "SessionStart": [\n         {\n' in text
