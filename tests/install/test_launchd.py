"""The macOS launchd agent, generated on any system (the platform is injected)."""

from __future__ import annotations

import plistlib
from pathlib import Path

from agents_memory.adapters.base import Commands
from agents_memory.install import launchd
from agents_memory.install.installer import Installer


def test_install_on_macos_writes_the_agent_loads_it_and_uninstall_unloads_and_removes_it(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    calls: list[list[str]] = []

    def launchctl(args: object) -> int:
        assert isinstance(args, list)
        calls.append(args)
        return 0

    commands = Commands(Path("/opt/bin/memory-capture"), Path("/opt/bin/mcp-agents-memory"))
    state = tmp_path / "state"
    installer = Installer(
        home=home,
        commands=commands,
        state_dir=state,
        platform="darwin",
        launchctl=launchctl,
        which=lambda _name: None,
    )
    report = installer.run("install", ("grok",))
    path = home / "Library" / "LaunchAgents" / "io.github.mcp-agents-memory.capture.plist"
    assert plistlib.loads(path.read_bytes()) == {
        "Label": "io.github.mcp-agents-memory.capture",
        "ProgramArguments": ["/opt/bin/memory-capture", "run"],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 10,
        "EnvironmentVariables": {"PYTHONUNBUFFERED": "1"},
        "StandardOutPath": str(state / "capture.log"),
        "StandardErrorPath": str(state / "capture.log"),
    }
    assert calls == [["load", "-w", str(path)]]
    assert any("launchd agent" in note for note in report.notes)

    again = installer.run("install", ("grok",))
    assert not [c for c in again.changes if c.platform == launchd.PLATFORM]

    calls.clear()
    installer.run("uninstall")
    assert calls == [["unload", "-w", str(path)]]
    assert not path.exists()


def test_no_agent_is_written_on_linux(tmp_path: Path) -> None:
    commands = Commands(Path("/opt/bin/memory-capture"), Path("/opt/bin/mcp-agents-memory"))
    installer = Installer(
        home=tmp_path, commands=commands, state_dir=tmp_path / "s", platform="linux"
    )
    plans = installer.plans("install", ("grok",))
    assert launchd.PLATFORM not in {p.platform for p in plans}
