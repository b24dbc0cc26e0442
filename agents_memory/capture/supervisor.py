"""The Cold Path as a child of the capture daemon (a :class:`~agents_memory.capture.daemon.
Companion`), so that a single machine without a service manager runs one process tree.

The child is ``mcp-agents-memory coldpath``: a process of its own, so the embedder's CPU and
memory never slow capture and a crash of either never takes the other down. The supervisor
starts it with the daemon, starts it again (after ``restart_sec``) whenever it exits, and at
shutdown sends SIGTERM and waits for the current batch to commit (SIGKILL after
``stop_timeout_sec``). On Linux the child also gets SIGTERM when the daemon dies without a
shutdown (``PR_SET_PDEATHSIG``). Its output is relayed line by line to the daemon's standard
error, so it lands in the daemon's log, after a rotation of ``capture.log`` too. A Cold Path
worker started elsewhere (a systemd unit, another machine of the pool) is harmless: the
worker's advisory lock keeps exactly one of them working and the others stand by.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
RELAY_LINE = 64 * 1024
"""The worker's output is relayed in pieces of at most this many bytes."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class ColdPathSupervisor:
    """Keeps one ``command`` (the Cold Path worker) running beside capture."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        restart_sec: float = 10.0,
        stop_timeout_sec: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.command = list(command)
        self.restart_sec = restart_sec
        self.stop_timeout_sec = stop_timeout_sec
        self.clock = clock
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._next_start = 0.0
        self._stop: threading.Event | None = None

    @property
    def pid(self) -> int | None:
        running = self.process is not None and self.process.poll() is None
        return self.process.pid if running and self.process is not None else None

    def start(self, stop: threading.Event) -> None:
        self._stop = stop
        self._spawn()

    def tick(self) -> None:
        """Start the worker again once it has been gone for ``restart_sec``."""
        if self._stop is not None and self._stop.is_set():
            return
        if self.process is not None and self.process.poll() is None:
            return
        if self.process is not None:
            code = self.process.returncode
            self.process = None
            self._next_start = self.clock() + self.restart_sec
            log.warning(
                "the Cold Path worker exited (status %s); starting it again in %.0f s",
                code,
                self.restart_sec,
            )
        if self.clock() >= self._next_start:
            self._spawn()

    def close(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=self.stop_timeout_sec)
        except subprocess.TimeoutExpired:
            log.warning("the Cold Path worker did not stop in time; killing it")
            process.kill()
            process.wait()

    def _spawn(self) -> None:
        try:
            self.process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,  # noqa: PLW1509
            )
        except OSError as exc:
            log.warning("cannot start the Cold Path worker (%s): %s", self.command[0], exc)
            self.process = None
            self._next_start = self.clock() + self.restart_sec
            return
        self.starts += 1
        relay = threading.Thread(target=_relay, args=(self.process,), name="coldpath-output")
        relay.daemon = True
        relay.start()
        log.info("Cold Path worker started (pid %d)", self.process.pid)


def _relay(process: subprocess.Popen[bytes]) -> None:
    """Copy the worker's output, line by line, to this process's standard error as it is now
    (``capture.log`` follows its rotation: :mod:`agents_memory.capture.logfile`)."""
    if process.stdout is None:
        return
    with process.stdout as output:
        for line in iter(lambda: output.readline(RELAY_LINE), b""):
            with contextlib.suppress(OSError):
                os.write(2, line)
