"""Install registers our MCP server with Hermes through `hermes mcp add` (its config is YAML),
uninstall takes it out through `hermes mcp remove`.

The `hermes` here is a small script standing in for Hermes 0.19.0's CLI: it logs its argv and,
like Hermes, asks a question first and cancels on end of input (a `[Y/n]` answered by an empty
line takes the default), then writes the server under `mcp_servers:` in ~/.hermes/config.yaml
or takes it out again — or, like a Hermes without its `mcp` extra answering the default "no",
saves nothing. The real program does the same in the e2e suite (tests/e2e).
"""

from __future__ import annotations

import sys
from pathlib import Path

from agents_memory.adapters.base import Commands
from tests.install.conftest import make_executable

REGISTERING = """\
#!{python}
import sys
if sys.argv[1] != "mcp":  # the plugin's commands: tests/install/test_hermes_plugin.py
    sys.exit(0)
open({log!r}, "a").write(" ".join(sys.argv[1:]) + "\\n")
print("  Enable all 7 tools? [Y/n/select]: " if sys.argv[2] == "add" else "Remove? [Y/n]: ")
if sys.stdin.readline().strip() not in ("", "y", "Y"):
    print("  Cancelled.")
    sys.exit(0)
if sys.argv[2] == "add":
    name, command = sys.argv[3], sys.argv[5]
    with open({config!r}, "a") as f:
        f.write(f"mcp_servers:\\n  {{name}}:\\n    command: {{command}}\\n")
else:
    with open({config!r}) as f:
        kept = f.read().split("mcp_servers:")[0]
    with open({config!r}, "w") as f:
        f.write(kept)
"""

DECLINING = """\
#!{python}
import sys
open({log!r}, "a").write(" ".join(sys.argv[1:]) + "\\n")
print("  Failed to connect: the 'mcp' Python SDK is not installed")
print("  Save config anyway (you can test later)? [y/N]: ")
"""


def fake_hermes(tmp_path: Path, home: Path, script: str) -> tuple[Path, Path]:
    log = tmp_path / "hermes.log"
    config = home / ".hermes" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("model:\n  provider: custom\n", encoding="utf-8")
    text = script.format(python=sys.executable, log=str(log), config=str(config))
    return make_executable(tmp_path / "bin" / "hermes", text), log


def notes(report) -> list[str]:  # type: ignore[no-untyped-def]
    return [n for c in report.clients if c.platform == "hermes" for n in c.notes]


def test_install_runs_hermes_mcp_add_once_and_a_second_install_leaves_it(
    home: Path, tmp_path: Path, commands: Commands, make_installer
) -> None:
    hermes, log = fake_hermes(tmp_path, home, REGISTERING)
    installer = make_installer(which=lambda name: str(hermes) if name == "hermes" else None)
    first = installer.run("install", ("hermes",))
    assert log.read_text("utf-8").splitlines() == [
        f"mcp add mcp-agents-memory --command {commands.mcp_server}"
    ]
    assert any(n.startswith("registered the MCP server with `hermes mcp add") for n in notes(first))
    second = installer.run("install", ("hermes",))
    assert len(log.read_text("utf-8").splitlines()) == 1
    assert "Hermes already has the MCP server mcp-agents-memory" in notes(second)


def test_a_hermes_that_saves_nothing_is_reported_with_the_command_to_run(
    home: Path, tmp_path: Path, commands: Commands, make_installer
) -> None:
    hermes, log = fake_hermes(tmp_path, home, DECLINING)
    report = make_installer(which=lambda _name: str(hermes)).run("install", ("hermes",))
    said = [n for n in notes(report) if n.startswith("Hermes did not register")]
    assert len(said) == 1
    assert "mcp" in said[0] and f"--command {commands.mcp_server}" in said[0]
    assert log.exists()


def test_without_hermes_on_path_or_in_a_dry_run_the_command_is_only_shown(
    home: Path, tmp_path: Path, commands: Commands, make_installer
) -> None:
    shown = f"hermes mcp add mcp-agents-memory --command {commands.mcp_server}"
    absent = make_installer().run("install", ("hermes",))
    assert f"hermes is not on PATH: register the MCP server with `{shown}`" in notes(absent)
    hermes, log = fake_hermes(tmp_path, home, REGISTERING)
    dry = make_installer(which=lambda _name: str(hermes)).run("install", ("hermes",), dry_run=True)
    assert f"would run `{shown}`" in dry.notes
    assert not log.exists()


def test_uninstall_runs_hermes_mcp_remove_and_leaves_the_users_settings(
    home: Path, tmp_path: Path, commands: Commands, make_installer
) -> None:
    hermes, log = fake_hermes(tmp_path, home, REGISTERING)
    installer = make_installer(which=lambda name: str(hermes) if name == "hermes" else None)
    installer.run("install", ("hermes",))
    dry = installer.run("uninstall", ("hermes",), dry_run=True)
    assert "would run `hermes mcp remove mcp-agents-memory`" in dry.notes
    report = installer.run("uninstall", ("hermes",))
    assert log.read_text("utf-8").splitlines()[-1] == "mcp remove mcp-agents-memory"
    assert "removed the MCP server with `hermes mcp remove mcp-agents-memory`" in notes(report)
    config = (home / ".hermes" / "config.yaml").read_text("utf-8")
    assert "mcp-agents-memory" not in config and "provider: custom" in config
    again = installer.run("uninstall", ("hermes",))
    assert len(log.read_text("utf-8").splitlines()) == 2, "nothing left to remove, no command"
    assert not any("the MCP server" in n for n in notes(again)), notes(again)


def test_uninstall_without_hermes_on_path_says_how_to_take_our_entry_out(
    home: Path, tmp_path: Path, make_installer
) -> None:
    hermes, _log = fake_hermes(tmp_path, home, REGISTERING)
    make_installer(which=lambda _name: str(hermes)).run("install", ("hermes",))
    report = make_installer().run("uninstall", ("hermes",))
    shown = (
        "hermes is not on PATH: remove the MCP server with `hermes mcp remove mcp-agents-memory`"
    )
    assert shown in notes(report)
