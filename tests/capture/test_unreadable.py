"""A transcript or a folder of transcripts the user cannot read is named, with the reason, by
``backfill`` (exit 1) and ``status``, and is captured once it is readable. Run as a plain user
(root reads mode 000 files): ``nobody``, with a home and an embedded database of its own."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents_memory.store.embedded import read_postmaster
from tests.capture.cli import memory_capture
from tests.capture.transcripts import claude_exchange, claude_session_path
from tests.conftest import postgres_processes, private_tmp_dir

USER = "nobody"
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")


@pytest.fixture
def home() -> Iterator[Path]:
    """A home owned by ``nobody``, who may run this venv's interpreter."""
    path = private_tmp_dir("am-unreadable-", in_memory=True)
    path.chmod(0o755)
    entry = pwd.getpwnam(USER)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    for target in (Path(sys.executable).resolve(), Path(sys.executable).parent):
        for parent in target.parents:
            mode = parent.stat().st_mode
            if not mode & stat.S_IXOTH:
                parent.chmod(mode | stat.S_IXOTH)
    yield path
    pgdata = path / ".data" / "mcp-agents-memory" / "pg"
    if read_postmaster(pgdata) is not None:
        subprocess.run(  # the user's server, stopped by the user
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path;"
                "from agents_memory.store.embedded import EmbeddedServer;"
                "EmbeddedServer(Path(sys.argv[1])).stop()",
                str(pgdata),
            ],
            user=entry.pw_uid,
            group=entry.pw_gid,
            extra_groups=[],
            check=True,
            cwd=path,
            timeout=60,
        )
    assert postgres_processes(pgdata) == []
    shutil.rmtree(path, ignore_errors=True)


def _owned_by_user(root: Path) -> None:
    entry = pwd.getpwnam(USER)
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.chown(Path(directory) / name, entry.pw_uid, entry.pw_gid)


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return memory_capture(home, None, *args, user=USER)


def _json(result: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(result.stdout)


def test_unreadable_transcript_and_folder_are_named_with_the_reason_then_captured_when_readable(
    home: Path,
) -> None:
    claude_session_path(home, "s-open").write_bytes(claude_exchange("s-open", 1))
    locked = claude_session_path(home, "s-locked")
    locked.write_bytes(claude_exchange("s-locked", 2))
    hidden = claude_session_path(home, "s-hidden", project="-work-secret")
    hidden.write_bytes(claude_exchange("s-hidden", 3))
    _owned_by_user(home / ".claude")
    locked.chmod(0)
    hidden.parent.chmod(0)
    lost = {str(locked): "Permission denied", str(hidden.parent): "Permission denied"}

    first = _run(home, "backfill", "--json")
    text = _run(home, "backfill")
    status = _run(home, "status", "--json")
    shown = _run(home, "status")

    assert first.returncode == 1, first.stderr
    report = _json(first)
    assert {u["path"]: u["reason"] for u in report["unreadable"]} == lost
    assert report["platforms"]["claude-code"]["inserted"] == 2
    assert text.returncode == 1, text.stderr
    for path in lost:
        line = f"claude-code: cannot read {path}: Permission denied"
        assert f"not imported: {line}" in text.stdout
        assert f"problem: {line}" in shown.stdout
    assert status.returncode == 1
    assert {u["path"]: u["reason"] for u in _json(status)["unreadable"]} == lost

    locked.chmod(0o600)
    hidden.parent.chmod(0o755)
    again = _run(home, "backfill", "--json")
    after = _run(home, "status", "--json")

    assert again.returncode == 0, again.stdout + again.stderr
    assert _json(again)["unreadable"] == []
    assert _json(again)["platforms"]["claude-code"]["inserted"] == 4
    assert _json(after)["unreadable"] == []
    assert _json(after)["platforms"]["claude-code"]["rows"] == 6
