"""Codex hook trust: hashes from `codex app-server` hooks/list, written to config.toml."""

from __future__ import annotations

import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from agents_memory.adapters import codex_trust
from agents_memory.install.edits import render_install
from agents_memory.install.installer import installed_entries
from tests.install.conftest import CODEX_CONFIG, fake_codex, seed_home


def finds(codex: Path | str) -> Callable[[str], str | None]:
    """A PATH lookup that finds only ``codex``."""
    return lambda name: str(codex) if name == "codex" else None


def trust_state(home: Path) -> dict[str, dict[str, str]]:
    config = tomllib.loads((home / ".codex" / "config.toml").read_text("utf-8"))
    return config.get("hooks", {}).get("state", {})  # type: ignore[no-any-return]


def test_trust_edit_writes_codex_hashes_and_keeps_comments(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    hooks = [
        {"key": "/h/.codex/hooks.json:session_start:1:0", "currentHash": "sha256:ab"},
        {"key": "/h/.codex/hooks.json:stop:0:0", "currentHash": "sha256:cd"},
    ]
    edit = codex_trust.trust_edit(config, hooks)
    assert edit is not None
    text = render_install(edit, CODEX_CONFIG).text
    assert text is not None
    assert (
        '[hooks.state."/h/.codex/hooks.json:session_start:1:0"]\ntrusted_hash = "sha256:ab"' in text
    )
    assert "# the fast one" in text and "# docs server, keep me" in text
    state = tomllib.loads(text)["hooks"]["state"]
    assert state["/elsewhere/hooks.json:stop:0:0"] == {"trusted_hash": "sha256:0000"}
    assert codex_trust.trust_edit(config, []) is None


def test_only_our_untrusted_hooks_from_our_file_are_trusted(tmp_path: Path) -> None:
    hooks_json = tmp_path / "hooks.json"
    ours = "/v/bin/memory-capture hook flush"
    listed = [
        {"key": f"{hooks_json}:stop:0:0", "command": ours, "currentHash": "h1"},
        {
            "key": f"{hooks_json}:stop:0:1",
            "command": ours,
            "currentHash": "h2",
            "trustStatus": "trusted",
        },
        {"key": f"{hooks_json}:stop:1:0", "command": "notify-send x", "currentHash": "h3"},
        {"key": "/repo/.codex/hooks.json:stop:0:0", "command": ours, "currentHash": "h4"},
        {"key": f"{hooks_json}:stop:2:0", "command": ours, "currentHash": "h5", "isManaged": True},
    ]
    assert [h["currentHash"] for h in codex_trust.untrusted_ours(listed, hooks_json)] == ["h1"]


def test_hook_keys_follow_the_positions_of_our_handlers(tmp_path: Path) -> None:
    hooks_json = tmp_path / "hooks.json"
    data = {
        "hooks": {
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "other"}]},
                {"hooks": [{"type": "command", "command": "/b/memory-capture hook session-start"}]},
            ],
            "Stop": [{"hooks": [{"command": "x"}, {"command": "/b/memory-capture hook flush"}]}],
        }
    }
    assert codex_trust.hook_keys(hooks_json, data) == [
        f"{hooks_json}:session_start:1:0",
        f"{hooks_json}:stop:0:1",
    ]


def test_install_trusts_our_hooks_through_codex_and_uninstall_forgets_them(
    home: Path, make_installer, tmp_path: Path
) -> None:
    seed_home(home)
    codex = fake_codex(tmp_path / "bin")
    lister = codex_trust.app_server_lister(str(codex), home, timeout=20)
    report = make_installer(which=finds(codex)).run("install", ("codex-cli",))
    assert not report.errors
    notes = report.clients[0].notes
    assert notes == ["trusted 3 Codex hook(s) (verified with `codex app-server`)"]
    hooks_json = home / ".codex" / "hooks.json"
    state = trust_state(home)
    assert set(state) == {
        "/elsewhere/hooks.json:stop:0:0",
        f"{hooks_json}:session_start:1:0",
        f"{hooks_json}:user_prompt_submit:0:0",
        f"{hooks_json}:stop:0:0",
    }
    listed = lister(home / ".codex", home)
    mine = codex_trust.listed_ours(listed, hooks_json)
    assert [h["trustStatus"] for h in mine] == ["trusted"] * 3
    assert "~/.codex/config.toml: hook trust" in installed_entries(home)["codex-cli"]
    config_text = (home / ".codex" / "config.toml").read_text("utf-8")
    assert "# Codex settings — hand edited" in config_text

    again = make_installer(which=finds(codex)).run("install", ("codex-cli",))
    assert again.changes == [] and again.clients[0].notes == []

    make_installer(which=finds(codex)).run("uninstall", ("codex-cli",))
    assert (home / ".codex" / "config.toml").read_text("utf-8") == CODEX_CONFIG


def test_a_stale_trusted_hash_is_replaced(home: Path, make_installer, tmp_path: Path) -> None:
    codex = fake_codex(tmp_path / "bin")
    lister = codex_trust.app_server_lister(str(codex), home, timeout=20)
    make_installer(which=finds(codex)).run("install", ("codex-cli",))
    config = home / ".codex" / "config.toml"
    hooks_json = home / ".codex" / "hooks.json"
    stale = config.read_text("utf-8").replace(
        'trusted_hash = "sha256:', 'trusted_hash = "sha256:0', 1
    )
    config.write_text(stale, encoding="utf-8")  # what an older hook command left behind
    mine = codex_trust.listed_ours(lister(home / ".codex", home), hooks_json)
    assert "modified" in {h["trustStatus"] for h in mine}
    report = make_installer(which=finds(codex)).run("install", ("codex-cli",))
    assert report.clients[0].notes == ["trusted 1 Codex hook(s) (verified with `codex app-server`)"]
    mine = codex_trust.listed_ours(lister(home / ".codex", home), hooks_json)
    assert {h["trustStatus"] for h in mine} == {"trusted"}


def test_without_codex_on_path_the_user_is_told_to_trust_in_hooks(
    home: Path, make_installer
) -> None:
    report = make_installer().run("install", ("codex-cli",))
    assert report.clients[0].notes == [codex_trust.TRUST_INSTRUCTION]
    assert "/hooks" in codex_trust.TRUST_INSTRUCTION


def test_an_unanswering_codex_degrades_to_the_instruction(
    home: Path, make_installer, tmp_path: Path
) -> None:
    from tests.install.conftest import make_executable

    broken = make_executable(tmp_path / "bin" / "codex", "#!/bin/sh\nexit 3\n")
    report = make_installer(which=finds(broken)).run("install", ("codex-cli",))
    assert not report.errors
    (note,) = report.clients[0].notes
    assert note.startswith("could not record Codex hook trust") and "/hooks" in note
    assert (home / ".codex" / "hooks.json").exists()


@pytest.mark.e2e
def test_real_codex_trusts_the_installed_hooks(home: Path, make_installer) -> None:
    codex = shutil.which("codex")
    if codex is None:  # the copy the end-to-end group installs from npm (skips if it cannot)
        from tests.e2e.conftest import installed_cli

        codex = str(installed_cli("codex-cli").bin_dir / "codex")
    lister = codex_trust.app_server_lister(codex, home, timeout=60)
    report = make_installer(which=finds(codex)).run("install", ("codex-cli",))
    assert not report.errors, report.errors
    hooks_json = home / ".codex" / "hooks.json"
    mine = codex_trust.listed_ours(lister(home / ".codex", home), hooks_json)
    assert len(mine) == 3  # session start, the per-prompt recall, the flush
    assert {h["trustStatus"] for h in mine} == {"trusted"}
