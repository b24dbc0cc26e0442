"""Every ``bench`` command at least starts: its module imports and ``--help`` parses (the benches
themselves are measurements, run by hand as ``bench/README.md`` says, not by the test suite)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = sorted(
    p.stem for p in (ROOT / "bench").glob("*.py") if "def main(" in p.read_text(encoding="utf-8")
)


def test_every_bench_command_is_found() -> None:
    assert {"locomo", "search_latency", "ingest", "hook_latency"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_bench_command_help(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{command}", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:")
