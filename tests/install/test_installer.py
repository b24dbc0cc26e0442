"""The applier: foreign settings survive, idempotency, backups, uninstall, errors, refresh."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from agents_memory.adapters import names
from agents_memory.adapters.base import BLOCK_BEGIN, BLOCK_END, Commands, is_our_hook_command
from agents_memory.install.fileio import BACKUP_TAG
from agents_memory.install.installer import installed_entries, refresh_context_blocks
from tests.install.conftest import CODEX_CONFIG, GROK_CONFIG, load, seed_home

ALL = tuple(names())


def without_ours(value: Any) -> Any:
    """``value`` minus every entry install adds (containers it empties are dropped too)."""
    value = copy.deepcopy(value)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "mcp-agents-memory":
                continue
            if (
                isinstance(item, dict)
                and "command" in item
                and is_our_hook_command(item["command"])
            ):
                continue
            cleaned = without_ours(item)
            if isinstance(item, dict | list) and item and not cleaned:
                continue
            out[key] = cleaned
        return out
    if isinstance(value, list):
        out_list = []
        for item in value:
            if isinstance(item, dict) and is_our_hook_command(item.get("command")):
                continue
            cleaned = without_ours(item)
            if isinstance(item, dict) and item.get("hooks") and not cleaned.get("hooks"):
                continue
            out_list.append(cleaned)
        return out_list
    return value


def backups(home: Path) -> list[Path]:
    return sorted(p for p in home.rglob("*") if BACKUP_TAG in p.name)


def test_install_keeps_every_foreign_setting_comment_and_hook(home: Path, make_installer) -> None:
    originals = seed_home(home)
    before = {path: load(path) for path in originals}
    report = make_installer().run("install", ALL)
    assert not report.errors
    for path in originals:
        after = load(path)
        if path.suffix == ".md":
            assert str(after).startswith(str(before[path]))
            assert BLOCK_BEGIN in str(after)
            continue
        if path.name == "settings.json" and path.parent.name == ".gemini":
            assert after["hooksConfig"] == {"enabled": True}  # type: ignore[index]
            after.pop("hooksConfig")  # type: ignore[union-attr]
        if path.name == "config.toml" and path.parent.name == ".codex":
            assert after.pop("mcp_optional_startup_grace_ms") == 5000  # type: ignore[union-attr]
        assert without_ours(after) == before[path], path
    codex = (home / ".codex" / "config.toml").read_text(encoding="utf-8")
    for comment in ("# Codex settings — hand edited", "# the fast one", "# docs server, keep me"):
        assert comment in codex
    assert "# inline comment survives" in (home / ".grok" / "config.toml").read_text("utf-8")


def test_install_writes_what_each_client_reads(home: Path, make_installer, commands) -> None:
    seed_home(home)
    make_installer().run("install", ALL)
    server = str(commands.mcp_server)
    claude = load(home / ".claude.json")
    assert claude["mcpServers"]["mcp-agents-memory"] == {  # type: ignore[index]
        "type": "stdio",
        "command": server,
        "args": [],
        "env": {},
    }
    settings = load(home / ".claude" / "settings.json")
    start = settings["hooks"]["SessionStart"]  # type: ignore[index]
    assert start[1]["matcher"] == "startup|resume|clear|compact"
    assert start[1]["hooks"][0]["command"].endswith("hook session-start --platform claude-code")
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"].endswith("hook flush")  # type: ignore[index]
    gemini = load(home / ".gemini" / "settings.json")
    brief = gemini["hooks"]["SessionStart"][0]["hooks"][0]  # type: ignore[index]
    assert brief["timeout"] == 10000 and brief["name"] == "mcp-agents-memory-brief"
    assert {"AfterAgent", "SessionEnd"} <= set(gemini["hooks"])  # type: ignore[index]
    codex = load(home / ".codex" / "config.toml")
    assert codex["mcp_servers"]["mcp-agents-memory"] == {  # type: ignore[index]
        "command": server,
        "args": [],
        "startup_timeout_sec": 30,
    }
    assert codex["mcp_optional_startup_grace_ms"] == 5000
    agy = load(home / ".gemini" / "config" / "mcp_config.json")
    assert agy["mcpServers"]["mcp-agents-memory"]["command"] == server  # type: ignore[index]
    rules = (home / ".grok" / "rules" / "mcp-agents-memory.md").read_text("utf-8")
    assert rules.startswith(BLOCK_BEGIN) and rules.rstrip().endswith(BLOCK_END)


def test_json_keeps_its_indentation_and_key_order(home: Path, make_installer) -> None:
    seed_home(home)
    make_installer().run("install", ("claude-code",))
    text = (home / ".claude.json").read_text("utf-8")
    assert text.startswith('{\n\t"numStartups": 42,\n\t"mcpServers": {')
    assert "проект" in text
    settings = (home / ".claude" / "settings.json").read_text("utf-8")
    assert settings.startswith('{\n    "model": "opus",\n    "permissions"')
    assert list(json.loads(settings)) == ["model", "permissions", "hooks", "zzz_unknown"]


def test_second_install_changes_nothing_and_makes_no_backup(home: Path, make_installer) -> None:
    seed_home(home)
    first = make_installer().run("install", ALL)
    assert first.changes and len(first.backups) == 8
    snapshot = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in home.rglob("*") if p.is_file()}
    second = make_installer().run("install", ALL)
    assert second.changes == []
    assert second.backups == []
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in home.rglob("*") if p.is_file()}
    assert after == snapshot


def test_backup_holds_the_original_bytes(home: Path, make_installer) -> None:
    originals = seed_home(home)
    report = make_installer().run("install", ("codex-cli",))
    by_name = {b.name.split(BACKUP_TAG)[0]: b for b in report.backups}
    assert by_name["config.toml"].read_text("utf-8") == originals[home / ".codex" / "config.toml"]


def test_uninstall_restores_the_original_files(home: Path, make_installer) -> None:
    originals = seed_home(home)
    before = {path: load(path) for path in originals}
    make_installer().run("install", ALL)
    report = make_installer().run("uninstall", ALL)
    assert not report.errors
    for path in originals:
        assert load(path) == before[path], path
    assert (home / ".codex" / "config.toml").read_text("utf-8") == CODEX_CONFIG
    assert (home / ".grok" / "config.toml").read_text("utf-8") == GROK_CONFIG
    assert not (home / ".grok" / "rules" / "mcp-agents-memory.md").exists()
    assert all(not entries for entries in installed_entries(home).values())


def test_uninstall_removes_files_and_containers_install_created(home: Path, make_installer) -> None:
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text('{"theme": "dark"}\n', encoding="utf-8")
    make_installer().run("install", ("gemini-cli", "codex-cli"))
    assert load(home / ".gemini" / "settings.json")["hooksConfig"] == {"enabled": True}  # type: ignore[index]
    make_installer().run("uninstall", ("gemini-cli", "codex-cli"))
    assert load(home / ".gemini" / "settings.json") == {"theme": "dark"}
    assert not (home / ".codex" / "hooks.json").exists()
    assert not (home / ".codex" / "config.toml").exists()


def test_uninstall_keeps_a_container_that_gained_other_content(home: Path, make_installer) -> None:
    make_installer().run("install", ("claude-code",))
    path = home / ".claude" / "settings.json"
    data = json.loads(path.read_text("utf-8"))
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "mine.sh"}]})
    path.write_text(json.dumps(data), encoding="utf-8")
    make_installer().run("uninstall", ("claude-code",))
    assert load(path) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine.sh"}]}]}
    }


def test_uninstall_on_a_never_installed_home_is_a_no_op(home: Path, make_installer) -> None:
    originals = seed_home(home)
    report = make_installer().run("uninstall")
    assert report.changes == [] and not report.errors
    for path, text in originals.items():
        assert path.read_text("utf-8") == text
    assert backups(home) == []


def test_gemini_hooks_switched_off_by_the_user_stay_off(home: Path, make_installer) -> None:
    (home / ".gemini").mkdir()
    settings = home / ".gemini" / "settings.json"
    settings.write_text('{"hooksConfig": {"enabled": false}}', encoding="utf-8")
    make_installer().run("install", ("gemini-cli",))
    assert load(settings)["hooksConfig"] == {"enabled": False}  # type: ignore[index]
    make_installer().run("uninstall", ("gemini-cli",))
    assert load(settings) == {"hooksConfig": {"enabled": False}}


def test_malformed_config_is_reported_in_one_line_and_other_clients_install(
    home: Path, make_installer
) -> None:
    seed_home(home)
    broken = home / ".claude.json"
    broken.write_text('{"mcpServers": {', encoding="utf-8")
    bad_toml = home / ".grok" / "config.toml"
    bad_toml.write_text("[mcp_servers\n", encoding="utf-8")
    report = make_installer().run("install", ALL)
    assert len(report.errors) == 2
    assert all("\n" not in error for error in report.errors)
    assert str(broken) in report.errors[0] and "not valid JSON" in report.errors[0]
    assert str(bad_toml) in report.errors[1] and "not valid TOML" in report.errors[1]
    assert broken.read_text("utf-8") == '{"mcpServers": {'
    assert bad_toml.read_text("utf-8") == "[mcp_servers\n"
    # the client is skipped as a whole: its other file is not half-installed
    assert "mcp-agents-memory" not in (home / ".claude" / "settings.json").read_text("utf-8")
    assert not (home / ".grok" / "rules").exists()
    entries = installed_entries(home)
    assert entries["codex-cli"] and entries["gemini-cli"] and entries["antigravity"]


def test_wrong_shape_is_an_error_not_an_overwrite(home: Path, make_installer) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "hooks.json").write_text('{"hooks": {"Stop": "nope"}}', encoding="utf-8")
    report = make_installer().run("install", ("codex-cli",))
    assert report.errors and "`hooks.Stop` is not a list" in report.errors[0]
    assert not (home / ".codex" / "config.toml").exists()


def test_reinstall_from_a_new_location_replaces_our_entries(
    home: Path, make_installer, tmp_path: Path
) -> None:
    seed_home(home)
    make_installer().run("install", ("claude-code", "codex-cli"))
    moved = Commands(tmp_path / "new" / "memory-capture", tmp_path / "new" / "mcp-agents-memory")
    report = make_installer(commands=moved).run("install", ("claude-code", "codex-cli"))
    assert report.changes
    settings = load(home / ".claude" / "settings.json")
    commands = [
        h["command"]
        for groups in settings["hooks"].values()  # type: ignore[index]
        for g in groups
        for h in g["hooks"]
    ]
    ours = [c for c in commands if is_our_hook_command(c)]
    assert len(ours) == 4 and all(c.startswith(str(tmp_path / "new")) for c in ours)
    assert "/usr/local/bin/other start" in commands
    codex = load(home / ".codex" / "config.toml")
    assert codex["mcp_servers"]["mcp-agents-memory"]["command"] == str(moved.mcp_server)  # type: ignore[index]


def test_the_users_env_on_our_mcp_entry_is_kept(home: Path, make_installer) -> None:
    make_installer().run("install", ("claude-code",))
    path = home / ".claude.json"
    data = json.loads(path.read_text("utf-8"))
    data["mcpServers"]["mcp-agents-memory"]["env"] = {"DATABASE_URL": "postgresql://db/x"}
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    report = make_installer().run("install", ("claude-code",))
    assert report.changes == []
    assert load(path)["mcpServers"]["mcp-agents-memory"]["env"] == {  # type: ignore[index]
        "DATABASE_URL": "postgresql://db/x"
    }


def test_a_symlinked_config_is_written_through_and_keeps_its_mode(
    home: Path, make_installer, tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"a": 1}\n', encoding="utf-8")
    dotfiles.chmod(0o600)
    (home / ".claude.json").symlink_to(dotfiles)
    make_installer().run("install", ("claude-code",))
    assert (home / ".claude.json").is_symlink()
    assert "mcp-agents-memory" in dotfiles.read_text("utf-8")
    assert dotfiles.stat().st_mode & 0o777 == 0o600
    assert not list(dotfiles.parent.glob(".*.tmp"))


def test_dry_run_writes_nothing_and_shows_diffs(home: Path, make_installer) -> None:
    originals = seed_home(home)
    report = make_installer().run("install", ALL, dry_run=True)
    assert report.changes
    diff = next(c for c in report.changes if c.path.name == "config.toml").diff()
    assert "+[mcp_servers.mcp-agents-memory]" in diff
    for path, text in originals.items():
        assert path.read_text("utf-8") == text
    assert not (home / ".grok" / "rules").exists()
    assert not (home / ".codex" / "hooks.json").read_text("utf-8").count("memory-capture")
    assert not (home.parent / "state").exists()


def test_declining_the_confirmation_writes_nothing(home: Path, make_installer) -> None:
    originals = seed_home(home)
    seen = []
    report = make_installer().run(
        "install",
        ALL,
        confirm=lambda r: seen.append(sorted(str(c.path) for c in r.changes)) or False,
    )
    # the 8 seeded files, the new Grok rules file and OpenCode's new config and AGENTS.md; Hermes
    # has not run here, so it has no SOUL.md to hold the block
    assert seen == [
        sorted(
            [
                *(str(path) for path in originals),
                str(home / ".grok" / "rules" / "mcp-agents-memory.md"),
                str(home / ".config" / "opencode" / "opencode.json"),
                str(home / ".config" / "opencode" / "AGENTS.md"),
            ]
        )
    ]
    assert report.changes == []
    for path, text in originals.items():
        assert path.read_text("utf-8") == text


def test_installed_entries_names_what_is_present(home: Path, make_installer) -> None:
    assert installed_entries(home) == {**{name: [] for name in names()}, "systemd": []}
    seed_home(home)
    make_installer().run("install", ("claude-code", "grok"))
    entries = installed_entries(home)
    assert entries["claude-code"] == [
        "~/.claude/settings.json: SessionStart hook",
        "~/.claude/settings.json: UserPromptSubmit hook",
        "~/.claude/settings.json: Stop hook",
        "~/.claude/settings.json: SessionEnd hook",
        "~/.claude.json: mcpServers.mcp-agents-memory",
    ]
    assert entries["grok"] == [
        "~/.grok/config.toml: mcp_servers.mcp-agents-memory",
        "~/.grok/rules/mcp-agents-memory.md: managed block",
    ]
    assert entries["codex-cli"] == [] and entries["systemd"] == []


def test_refresh_rewrites_only_between_the_markers(home: Path, make_installer) -> None:
    seed_home(home)
    make_installer().run("install", ("grok", "antigravity"))
    gemini_md = home / ".gemini" / "GEMINI.md"
    gemini_md.write_text(gemini_md.read_text("utf-8") + "\nMy trailing note.\n", encoding="utf-8")
    changed = refresh_context_blocks(home, "## Memory\nYou prefer tabs.\n")
    assert sorted(changed) == sorted([home / ".grok" / "rules" / "mcp-agents-memory.md", gemini_md])
    text = gemini_md.read_text("utf-8")
    assert text.startswith("# My global rules\n\nAlways answer in English.\n")
    assert text.endswith("\nMy trailing note.\n")
    assert f"{BLOCK_BEGIN}\n## Memory\nYou prefer tabs.\n{BLOCK_END}" in text
    mtime = os.stat(gemini_md).st_mtime_ns
    assert refresh_context_blocks(home, "## Memory\nYou prefer tabs.\n") == []
    assert os.stat(gemini_md).st_mtime_ns == mtime
    # a second install leaves the refreshed content alone
    assert make_installer().run("install", ("grok", "antigravity")).changes == []
    assert "You prefer tabs." in gemini_md.read_text("utf-8")


def test_refresh_never_creates_files_or_breaks_the_markers(home: Path) -> None:
    assert refresh_context_blocks(home, "brief") == []
    assert not (home / ".gemini").exists()
    (home / ".gemini").mkdir()
    path = home / ".gemini" / "GEMINI.md"
    path.write_text(f"x\n{BLOCK_BEGIN}\nold\n{BLOCK_END}\n", encoding="utf-8")
    refresh_context_blocks(home, f"evil {BLOCK_END} text")
    text = path.read_text("utf-8")
    assert text.count(BLOCK_END) == 1 and "evil  text" in text


def test_codex_keeps_the_users_own_startup_grace(home: Path, make_installer) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    original = "mcp_optional_startup_grace_ms = 750  # mine\n\n[features]\nhooks = true\n"
    config.write_text(original, encoding="utf-8")
    make_installer().run("install", ("codex-cli",))
    installed = config.read_text("utf-8")
    assert "mcp_optional_startup_grace_ms = 750  # mine" in installed
    assert "startup_timeout_sec = 30" in installed
    make_installer().run("uninstall", ("codex-cli",))
    assert config.read_text("utf-8") == original


def test_files_install_created_are_never_backed_up(
    home: Path, make_installer, tmp_path: Path
) -> None:
    """Backups keep the user's text; a file install created held ours alone, so neither a
    later install that rewrites it nor the uninstall that removes it copies it."""
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "opus"}\n', encoding="utf-8")
    (home / ".codex").mkdir()
    clients = ("claude-code", "codex-cli")
    make_installer(stamp="20260101T000000").run("install", clients)
    moved = Commands(tmp_path / "new" / "memory-capture", tmp_path / "new" / "mcp-agents-memory")
    again = make_installer(commands=moved, stamp="20260101T000001").run("install", clients)
    assert {c.path.name for c in again.changes} == {
        "settings.json",
        ".claude.json",
        "hooks.json",
        "config.toml",
    }
    make_installer(stamp="20260101T000002").run("uninstall", clients)
    assert not (home / ".claude.json").exists() and not (home / ".codex" / "hooks.json").exists()
    assert {b.name.split(BACKUP_TAG)[0] for b in backups(home)} == {"settings.json"}
    assert len(backups(home)) == 3  # the user's own file, before each of the three runs
