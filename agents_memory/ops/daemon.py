"""``memory-capture start|stop``: the capture daemon (and the Cold Path it supervises) without a
service manager.

``start`` runs ``memory-capture run`` detached (a session of its own, stdin closed, output
appended to ``capture.log`` in the state directory, 0600, which the daemon rotates) and waits
until the daemon holds its pid file. ``stop`` sends SIGTERM to the pid-file holder, waits for
it (the daemon stops its Cold Path child first), then SIGKILLs what is left of its process
group. Both are idempotent.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agents_memory.capture.daemon import running_pid
from agents_memory.capture.logfile import open_private

START_TIMEOUT_SEC = 30.0
STOP_TIMEOUT_SEC = 90.0
POLL_SEC = 0.1


def _wait(until: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_SEC)
    return True


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


@dataclass(slots=True)
class DaemonProcess:
    """The detached capture daemon of this user: ``memory_capture`` is the console script,
    ``pid_file`` the daemon's flock-ed pid file, ``log`` where its output goes."""

    memory_capture: Path
    pid_file: Path
    log: Path
    env: dict[str, str] | None = None
    start_timeout: float = START_TIMEOUT_SEC
    stop_timeout: float = STOP_TIMEOUT_SEC
    extra_args: list[str] = field(default_factory=list)

    def running(self) -> int | None:
        return running_pid(self.pid_file)

    def start(self) -> list[str]:
        pid = self.running()
        if pid is not None:
            return [f"the capture daemon is already running (pid {pid})"]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with os.fdopen(open_private(self.log), "ab") as out:
            process = subprocess.Popen(
                [str(self.memory_capture), "run", "--log-file", str(self.log), *self.extra_args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=self.env,
            )
        started = _wait(
            lambda: self.running() is not None or process.poll() is not None, self.start_timeout
        )
        if not started or self.running() is None:
            tail = _tail(self.log)
            return [
                f"the capture daemon did not start (see {self.log})"
                + (f":\n{tail}" if tail else "")
            ]
        return [
            f"started the capture daemon (pid {process.pid}; it runs the Cold Path too); "
            f"log: {self.log}; stop it with `memory-capture stop`"
        ]

    def stop(self) -> list[str]:
        pid = self.running()
        if pid is None:
            return ["the capture daemon is not running"]
        if pid <= 0:
            return [f"a capture daemon holds {self.pid_file} but its pid is unreadable"]
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if _wait(lambda: self.running() is None, self.stop_timeout):
            return [f"stopped the capture daemon (pid {pid})"]
        for kill in (os.killpg, os.kill):  # its process group when it leads one, else itself
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(pid, signal.SIGKILL)
        _wait(lambda: self.running() is None, 5.0)
        return [f"killed the capture daemon (pid {pid}): it did not stop in time"]
