"""The Cold Path supervisor: a real child process, started, restarted after it exits, stopped."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from agents_memory.capture.supervisor import ColdPathSupervisor


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_child_runs_is_restarted_after_its_pause_and_is_stopped_at_close(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "starts"
    script = (
        "import pathlib, sys, time\n"
        f"p = pathlib.Path({str(marker)!r})\n"
        "p.write_text(p.read_text() + 'x' if p.exists() else 'x')\n"
        "sys.exit(3) if len(p.read_text()) == 1 else time.sleep(600)\n"
    )
    clock = Clock()
    supervisor = ColdPathSupervisor(
        [sys.executable, "-c", script], restart_sec=10, stop_timeout_sec=10, clock=clock
    )
    supervisor.start(threading.Event())
    assert supervisor.process is not None
    supervisor.process.wait(timeout=30)  # the first run exits with status 3
    supervisor.tick()
    assert supervisor.process is None and supervisor.starts == 1  # waits restart_sec first
    clock.now = 10.0
    supervisor.tick()
    assert supervisor.starts == 2 and supervisor.pid is not None
    child = supervisor.process
    deadline = time.monotonic() + 30
    while marker.read_text() != "xx" and time.monotonic() < deadline:  # bounded: its start
        threading.Event().wait(0.05)
    supervisor.tick()  # running: nothing to do
    assert supervisor.starts == 2
    supervisor.close()
    assert child is not None and child.returncode is not None
    assert marker.read_text() == "xx"


def test_a_missing_command_is_retried_and_never_raises(tmp_path: Path) -> None:
    clock = Clock()
    supervisor = ColdPathSupervisor([str(tmp_path / "absent")], restart_sec=5, clock=clock)
    supervisor.start(threading.Event())
    assert supervisor.process is None and supervisor.starts == 0
    clock.now = 5.0
    supervisor.tick()
    assert supervisor.starts == 0
    supervisor.close()


def test_nothing_is_restarted_once_the_daemon_is_stopping(tmp_path: Path) -> None:
    stop = threading.Event()
    clock = Clock()
    supervisor = ColdPathSupervisor([sys.executable, "-c", "pass"], restart_sec=0, clock=clock)
    supervisor.start(stop)
    assert supervisor.process is not None
    supervisor.process.wait(timeout=30)
    stop.set()
    supervisor.tick()
    assert supervisor.starts == 1
