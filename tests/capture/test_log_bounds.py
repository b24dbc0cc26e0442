"""The capture log stays bounded (issue 35): 20,000 garbage lines give a handful of warnings and
one line with the count, not 20,001 lines; ``capture.log`` is created 0600 and rotated past
its cap, its rotated files 0600 too, the process's own stderr following the current file."""

from __future__ import annotations

import logging
import os
import re
import stat
import sys
from pathlib import Path

from agents_memory.capture.logfile import CaptureLog, open_private
from agents_memory.capture.warnlimit import SHOWN_PER_READ
from tests.capture.cli import memory_capture
from tests.capture.transcripts import claude_exchange, claude_session_path

GARBAGE = 20_000


def test_20000_garbage_lines_give_a_bounded_log_that_names_the_count(
    tmp_path: Path, db_url: str
) -> None:
    path = claude_session_path(tmp_path, "s-garbage")
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"not json {n} {{".encode() for n in range(GARBAGE)]
    path.write_bytes(claude_exchange("s-garbage", 1) + b"\n".join(lines) + b"\n")

    done = memory_capture(tmp_path, db_url, "backfill", "--json")

    assert done.returncode == 0, done.stderr[-3000:]
    warnings = [line for line in done.stderr.splitlines() if " WARNING " in line]
    assert len(warnings) <= 3 * (SHOWN_PER_READ + 1), len(warnings)
    assert len(done.stderr) < 20_000, len(done.stderr)
    counted = [int(n) for n in re.findall(r"\((\d+) in all;", done.stderr)]
    assert sum(counted) == GARBAGE, warnings


def test_the_daemon_log_is_created_0600(tmp_path: Path) -> None:
    log = tmp_path / "state" / "capture.log"
    log.parent.mkdir()
    log.write_text("an older log, made 0644\n")
    log.chmod(0o644)
    os.close(open_private(log))
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert log.read_text() == "an older log, made 0644\n"
    fresh = tmp_path / "state" / "fresh.log"
    os.close(open_private(fresh))
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600


def test_start_runs_the_daemon_logging_to_a_0600_capture_log(tmp_path: Path, db_url: str) -> None:
    log = tmp_path / ".state" / "mcp-agents-memory" / "capture.log"
    started = memory_capture(tmp_path, db_url, "start", COLD_PATH_ENABLED="false")
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert "started" in started.stdout, started.stdout
    finally:
        stopped = memory_capture(tmp_path, db_url, "stop")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    text = log.read_text()
    assert " INFO " in text, text


def test_the_log_rotates_past_its_cap_keeping_a_few_0600_files(tmp_path: Path) -> None:
    path = tmp_path / "capture.log"
    handler = CaptureLog(path, max_bytes=2_000, backups=2)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("test.capture.rotation")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        for n in range(200):
            logger.warning("line %d %s", n, "x" * 50)
    finally:
        logger.removeHandler(handler)
        handler.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["capture.log", "capture.log.1", "capture.log.2"], files
    for name in files:
        assert (tmp_path / name).stat().st_size <= 2_000
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600
    assert "line 199" in path.read_text()


def test_run_with_a_log_file_sends_stderr_to_it_and_rotates(tmp_path: Path) -> None:
    """Through the real entry point's helper in a child process: records and raw stderr go
    to the file, and after a rotation raw stderr follows the new file."""
    log = tmp_path / "capture.log"
    script = (
        "import logging, sys\n"
        "from pathlib import Path\n"
        "from agents_memory.cli.common import configure_logging\n"
        "from agents_memory.capture.logfile import log_to\n"
        "configure_logging('INFO')\n"
        f"log_to(Path({str(log)!r}), max_bytes=3000, backups=1)\n"
        "sys.stderr.write('raw before\\n'); sys.stderr.flush()\n"
        "for n in range(100): logging.getLogger('t').warning('record %d %s', n, 'y' * 40)\n"
        "sys.stderr.write('raw after\\n'); sys.stderr.flush()\n"
    )
    done = memory_capture_python(script, tmp_path)
    assert done == "", done
    text = log.read_text()
    assert "raw after" in text and "record 99" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["capture.log", "capture.log.1"]
    assert log.stat().st_size <= 3000


def test_the_cold_path_childs_output_follows_the_rotation(tmp_path: Path) -> None:
    """The supervised worker's output is relayed into the current capture.log, not into a
    rotated (and later deleted) file the child happened to start with."""
    log = tmp_path / "capture.log"
    child = (
        "import time\n"
        "for n in range(40):\n"
        "    print('child line', n, flush=True)\n"
        "    time.sleep(0.05)\n"
    )
    script = (
        "import logging, sys, threading, time\n"
        "from pathlib import Path\n"
        "from agents_memory.cli.common import configure_logging\n"
        "from agents_memory.capture.logfile import log_to\n"
        "from agents_memory.capture.supervisor import ColdPathSupervisor\n"
        "configure_logging('INFO')\n"
        f"log_to(Path({str(log)!r}), max_bytes=4000, backups=2)\n"
        f"worker = ColdPathSupervisor([sys.executable, '-c', {child!r}])\n"
        "worker.start(threading.Event())\n"
        f"logs = Path({str(tmp_path)!r}).glob\n"
        "logged = lambda text: any(text in p.read_text() for p in logs('capture.log*'))\n"
        "deadline = time.monotonic() + 30\n"
        "while not logged('child line 0') and time.monotonic() < deadline: time.sleep(0.01)\n"
        "for n in range(60): logging.getLogger('t').warning('record %d %s', n, 'z' * 60)\n"
        "worker.process.wait(timeout=30)\n"
        "while not logged('child line 39') and time.monotonic() < deadline: time.sleep(0.01)\n"
    )
    assert memory_capture_python(script, tmp_path) == ""
    assert "child line 39" in log.read_text()


def memory_capture_python(script: str, cwd: Path) -> str:
    """Run ``script`` in a fresh interpreter of this environment; its terminal stderr."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    return done.stderr
