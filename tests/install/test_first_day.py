"""The first day through the real console scripts, on a home without a systemd user session
(``systemctl --user`` answers, but offline): install says what it did and what to do next,
`status` says the Cold Path is starting while it warms up, `doctor` shows where the data
really is, and `uninstall --purge` says only true things and leaves nothing of ours."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents_memory.capture.daemon import running_pid
from agents_memory.install.fileio import BACKUP_TAG
from agents_memory.store.embedded import EmbeddedServer
from tests.install.conftest import CLAUDE_SETTINGS, fake_codex, fake_systemctl

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


class Home:
    """A throwaway home: Claude Code's settings (the user's own file), Codex and Hermes
    folders (files install creates), a `systemctl` whose user manager is offline, `codex`."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.claude_settings = self.home / ".claude" / "settings.json"
        self.claude_settings.parent.mkdir(parents=True)
        self.claude_settings.write_text(CLAUDE_SETTINGS, encoding="utf-8")
        (self.home / ".codex").mkdir()
        (self.home / ".hermes").mkdir()
        bin_dir = root / "bin"
        fake_systemctl(bin_dir, root / "systemctl.log", rc=1)
        fake_codex(bin_dir)  # trusts our hooks, as the real one does
        self.config = self.home / ".config" / "mcp-agents-memory"
        self.config.mkdir(parents=True)
        (self.config / ".env").write_text("COLD_PATH_WARMUP_SEC=300\n", encoding="utf-8")
        self.state = self.home / ".local" / "state" / "mcp-agents-memory"
        keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR")}
        self.env = keep | {
            "HOME": str(self.home),
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),  # this checkout's code, whichever the scripts point at
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "EMBEDDING_BACKEND": "none",
            "USER_NAME": "first-day",
            "DEVICE_NAME": "fresh",
        }
        self.server = EmbeddedServer(self.home / ".local" / "share" / "mcp-agents-memory" / "pg")

    def run(self, script: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(BIN / script), *args],
            env=self.env,
            cwd=self.home,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    def backups(self) -> list[Path]:
        return sorted(p for p in self.home.rglob("*") if BACKUP_TAG in p.name)


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Home]:
    made = Home(tmp_path)
    yield made
    pid = running_pid(made.state / "capture.pid")
    if pid is not None and pid > 0:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, 9)
    if made.server.running() is not None:
        made.server.stop()
    if made.server.pgdata.is_relative_to("/var/lib/mcp-agents-memory"):
        shutil.rmtree(made.server.pgdata, ignore_errors=True)
        for record in made.server.pgdata.parent.glob(f".{made.server.pgdata.name}.*"):
            record.unlink(missing_ok=True)


def _status_until(fresh: Home, wanted: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while True:
        line = next(
            (
                x
                for x in fresh.run("memory-capture", "status").stdout.splitlines()
                if "background worker" in x
            ),
            "",
        )
        if wanted in line or time.monotonic() > deadline:
            return line
        time.sleep(0.5)


def test_a_first_day_without_systemd_says_only_true_things(fresh: Home) -> None:
    installed = fresh.run("memory-capture", "install", "--yes")
    said = installed.stdout + installed.stderr

    assert "applying migration" not in said and " INFO " not in said, said
    assert "service: its own background daemon" in installed.stdout
    assert not (fresh.home / ".config" / "systemd").exists()  # systemd is offline: no units
    steps = installed.stdout.split("next steps:", 1)[1]
    for command in ("memory-capture status", "mcp-agents-memory search", "mcp-agents-memory ui"):
        assert command in steps
    assert running_pid(fresh.state / "capture.pid") is not None

    # The Cold Path waits COLD_PATH_WARMUP_SEC (300 s here) before its first pass: starting.
    said_status = _status_until(fresh, "summaries): starting")
    assert "background worker (tags, vectors, profile, summaries): starting" in said_status

    doctor = fresh.run("mcp-agents-memory", "doctor")
    shown = re.search(r"^data dir\s+(\S+) \(", doctor.stdout, re.MULTILINE)
    assert shown is not None, doctor.stdout
    data, cluster = Path(shown[1]), fresh.server.pgdata
    assert cluster == data or cluster.is_relative_to(data), (data, cluster)  # as root: placed
    assert (cluster / "PG_VERSION").exists()

    gone = fresh.run("memory-capture", "uninstall", "--purge", stdin="y\n")
    out = gone.stdout
    assert "Delete these for good?" in out and "MiB" in out  # the question shows sizes
    assert "stopped and disabled" not in out and "install again" not in out
    assert "stopped the capture daemon" in out and "stopped the embedded database" in out
    assert "pipx uninstall mcp-agents-memory" in out
    assert not fresh.state.exists() and not fresh.config.exists() and not cluster.exists()
    assert not (fresh.home / ".local" / "share" / "mcp-agents-memory").exists()
    assert not (fresh.home / ".codex" / "hooks.json").exists()
    # Only the user's own file was backed up (before install and before uninstall).
    assert {p.name.split(BACKUP_TAG)[0] for p in fresh.backups()} == {"settings.json"}
    assert fresh.claude_settings.read_text("utf-8") == CLAUDE_SETTINGS


def test_purge_asks_first_and_a_no_changes_nothing(fresh: Home) -> None:
    fresh.run("memory-capture", "install", "--yes", "--files-only")
    kept = fresh.run("memory-capture", "uninstall", "--purge", stdin="n\n")
    assert "nothing changed" in kept.stdout
    assert fresh.config.exists() and (fresh.home / ".codex" / "hooks.json").exists()
