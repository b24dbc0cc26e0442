"""Starting and stopping ``memory-capture run`` against a bench database (shared by the capture
latency and footprint benches)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg

from bench.common import BenchDB

CAPTURE = str(Path(sys.executable).with_name("memory-capture"))


def count(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM memory").fetchone()
    return int(row[0]) if row else 0


def wait_rows(url: str, n: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if count(url) >= n:
            return True
        time.sleep(0.1)
    return False


@contextlib.contextmanager
def capture_daemon(db: BenchDB, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """``memory-capture run`` in the foreground of a child process; SIGTERM at the end."""
    log = (db.base / "daemon.log").open("wb")
    proc = subprocess.Popen(
        [CAPTURE, "run"],
        env=db.env(EMBEDDING_BACKEND="none", **env),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
