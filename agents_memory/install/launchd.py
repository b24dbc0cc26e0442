"""A launchd agent for the capture daemon on macOS (``~/Library/LaunchAgents``).

The daemon supervises the Cold Path itself (one process tree), so one agent is enough. The
plist is an ordinary plan edit (backed up, diffed, removed on uninstall) rendered with
:mod:`plistlib`; loading it is ``launchctl load -w`` through an injected runner.
"""

from __future__ import annotations

import plistlib
from pathlib import Path

from agents_memory.adapters.base import Commands, FileEdit, InstallPlan, WholeFile

PLATFORM = "launchd"
LABEL = "io.github.mcp-agents-memory.capture"


def agent_path(home: Path) -> Path:
    return home / "Library" / "LaunchAgents" / f"{LABEL}.plist"


def render_agent(commands: Commands, log_dir: Path) -> str:
    """The agent's plist: run ``memory-capture run`` at login, again when it exits."""
    data = {
        "Label": LABEL,
        "ProgramArguments": [str(commands.memory_capture), "run"],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 10,
        "EnvironmentVariables": {"PYTHONUNBUFFERED": "1"},
        "StandardOutPath": str(log_dir / "capture.log"),
        "StandardErrorPath": str(log_dir / "capture.log"),
    }
    return plistlib.dumps(data, sort_keys=True).decode("utf-8")


def agent_plan(home: Path, commands: Commands, log_dir: Path) -> InstallPlan:
    path = agent_path(home)
    edit = FileEdit(path, "file", (WholeFile(render_agent(commands, log_dir)),), "launchd agent")
    return InstallPlan(PLATFORM, (edit,))


def removal_plan(home: Path) -> InstallPlan:
    edit = FileEdit(agent_path(home), "file", (WholeFile(""),), "launchd agent")
    return InstallPlan(PLATFORM, (edit,))
