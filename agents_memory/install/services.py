"""systemd user units for the capture daemon and the Cold Path.

The unit templates ship in the package (``install/units/``); install fills in the absolute paths
of the console scripts, writes them to ``~/.config/systemd/user/`` as ordinary plan edits, then
asks ``systemctl --user`` to reload and start them. Where there is no usable user systemd
(containers, macOS, no login session) it says how to run the daemon instead and never fails.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from string import Template

from agents_memory.adapters.base import Commands, FileEdit, InstallPlan, WholeFile

PLATFORM = "systemd"
CAPTURE_UNIT = "mcp-agents-memory-capture.service"
COLDPATH_UNIT = "mcp-agents-memory-coldpath.service"

SystemctlRunner = Callable[[Sequence[str]], int]
"""Runs ``systemctl --user <args>`` and returns its exit status."""


def unit_dir(home: Path) -> Path:
    return home / ".config" / "systemd" / "user"


def template(name: str) -> str:
    return resources.files("agents_memory.install").joinpath("units", name).read_text("utf-8")


def _quote(path: Path) -> str:
    """A path as one ExecStart word (systemd quoting; ``%`` is a specifier there)."""
    text = str(path).replace("%", "%%")
    if any(c.isspace() or c in "\"'\\;" for c in text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def render_unit(name: str, commands: Commands) -> str:
    return Template(template(name)).safe_substitute(
        memory_capture=_quote(commands.memory_capture),
        mcp_agents_memory=_quote(commands.mcp_server),
    )


def unit_plan(home: Path, commands: Commands, *, cold_path: bool) -> InstallPlan:
    """The unit files to write: the capture daemon, and the Cold Path when it is enabled."""
    names = [CAPTURE_UNIT] + ([COLDPATH_UNIT] if cold_path else [])
    edits = tuple(
        FileEdit(unit_dir(home) / name, "file", (WholeFile(render_unit(name, commands)),), name)
        for name in names
    )
    return InstallPlan(PLATFORM, edits)


def removal_plan(home: Path) -> InstallPlan:
    """Every unit file we may have written (uninstall deletes the ones that exist)."""
    edits = tuple(
        FileEdit(unit_dir(home) / name, "file", (WholeFile(""),), name)
        for name in (CAPTURE_UNIT, COLDPATH_UNIT)
    )
    return InstallPlan(PLATFORM, edits)


def systemctl_runner(
    systemctl: str, timeout: float = 60.0, *, user: bool = True
) -> SystemctlRunner:
    """Runs ``systemctl --user ARGS`` (or, ``user=False``, the tool with ARGS: launchctl)."""

    def run(args: Sequence[str]) -> int:
        try:
            done = subprocess.run(
                [systemctl, *(["--user"] if user else []), *args],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return 127
        return done.returncode

    return run


def how_to_run(commands: Commands, log_dir: Path) -> str:
    log = log_dir / "capture.log"
    return (
        "No systemd user session here, so nothing was started. Run the capture daemon yourself: "
        f"`{commands.memory_capture} run` in a terminal, or in the background "
        f"`nohup {commands.memory_capture} run >>{log} 2>&1 &`."
    )


def start(runner: SystemctlRunner, *, units_changed: bool, coldpath_written: bool) -> list[str]:
    """Reload and start what install wrote; messages for the user (never raises)."""
    notes: list[str] = []
    if units_changed and runner(["daemon-reload"]) != 0:
        return [
            "`systemctl --user daemon-reload` failed; start the daemon with `memory-capture run`"
        ]
    running = runner(["is-enabled", "--quiet", CAPTURE_UNIT]) == 0 and (
        runner(["is-active", "--quiet", CAPTURE_UNIT]) == 0
    )
    if units_changed or not running:
        if runner(["enable", "--now", CAPTURE_UNIT]) == 0:
            notes.append(f"started and enabled {CAPTURE_UNIT}")
        else:
            notes.append(
                f"could not start {CAPTURE_UNIT} (see `journalctl --user -u {CAPTURE_UNIT}`)"
            )
    if coldpath_written and (units_changed or runner(["is-active", "--quiet", COLDPATH_UNIT]) != 0):
        status = runner(["enable", "--now", COLDPATH_UNIT])
        notes.append(
            f"started and enabled {COLDPATH_UNIT}"
            if status == 0
            else f"could not start {COLDPATH_UNIT}"
        )
    return notes


def stop(runner: SystemctlRunner, present: Sequence[str]) -> list[str]:
    """Stop and disable the units about to be removed."""
    if not present:
        return []
    status = runner(["disable", "--now", *present])
    if status != 0:
        return [
            f"`systemctl --user disable --now` failed (exit {status}) for {', '.join(present)}: "
            "they may still run until the next log-in; their unit files are removed"
        ]
    return [f"stopped and disabled {', '.join(present)}"]


def reload(runner: SystemctlRunner) -> None:
    runner(["daemon-reload"])
