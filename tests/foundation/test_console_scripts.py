"""The two console scripts keep their names, and a verb typed to the wrong one names the other."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def _run(tmp_path: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
    env.update(
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    return subprocess.run(
        [str(BIN / script), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_distribution_installs_exactly_the_two_console_scripts() -> None:
    scripts = {
        entry.name: entry.value
        for entry in distribution("mcp-agents-memory").entry_points
        if entry.group == "console_scripts"
    }
    assert scripts == {
        "memory-capture": "agents_memory.cli.entry:main",
        "mcp-agents-memory": "agents_memory.cli.entry:memory_main",
    }


def test_an_old_python_gets_one_clear_line() -> None:
    import pytest

    from agents_memory.cli.entry import require_python

    with pytest.raises(SystemExit) as stopped:
        require_python((3, 10))
    message = str(stopped.value.code)
    assert "needs Python 3.11 or newer; this is Python 3.10" in message
    assert "\n" not in message
    require_python((3, 11))  # no exit


@pytest.mark.parametrize(
    ("script", "args", "message"),
    [
        (
            "mcp-agents-memory",
            ["backfill", "--since", "2025-01-01"],
            "`backfill` is a `memory-capture` command: run `memory-capture backfill --since "
            "2025-01-01`",
        ),
        ("mcp-agents-memory", ["install"], "run `memory-capture install`"),
        ("mcp-agents-memory", ["hook", "flush"], "run `memory-capture hook flush`"),
        ("memory-capture", ["doctor"], "`doctor` is a `mcp-agents-memory` command"),
        ("memory-capture", ["tags", "list"], "run `mcp-agents-memory tags list`"),
        (
            "memory-capture",
            ["serach", "fake echo"],
            "`search` is a `mcp-agents-memory` command: run `mcp-agents-memory search 'fake echo'`",
        ),
        ("mcp-agents-memory", ["backfil"], "run `memory-capture backfill`"),
    ],
)
def test_a_verb_of_the_other_script_names_that_script_and_exits_2(
    tmp_path: Path, script: str, args: list[str], message: str
) -> None:
    result = _run(tmp_path, script, *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert result.stdout == ""


def test_a_verb_neither_script_has_is_an_ordinary_usage_error(tmp_path: Path) -> None:
    result = _run(tmp_path, "memory-capture", "frobnicate")
    assert result.returncode == 2
    assert "No such command 'frobnicate'" in result.stderr
    assert "mcp-agents-memory" not in result.stderr.split("Error:")[1]


def test_a_typo_close_to_the_scripts_own_verb_gets_clicks_own_suggestion(tmp_path: Path) -> None:
    result = _run(tmp_path, "memory-capture", "statu")
    assert result.returncode == 2
    assert "mcp-agents-memory" not in result.stderr.split("Error:")[1]
    assert "status" in result.stderr


def test_bare_mcp_agents_memory_on_a_terminal_prints_help_and_exits(tmp_path: Path) -> None:
    import pty

    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [str(BIN / "mcp-agents-memory")],
            env=env,
            stdin=follower,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 0, done.stderr
    assert "Usage: mcp-agents-memory" in done.stdout and "serve" in done.stdout
