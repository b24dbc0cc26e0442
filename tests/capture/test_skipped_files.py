"""What capture skips is named, with the reason, in ``status`` and ``status --json``: a FIFO
and a link to ``/dev/zero`` where a transcript would be (never opened), and each transcript
with bad records (how many, and why the last was skipped). Real CLI, real database."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.capture.cli import memory_capture
from tests.capture.transcripts import claude_exchange, claude_session_path


def test_a_fifo_a_device_link_and_bad_records_are_named_with_the_reason(
    tmp_path: Path, db_url: str
) -> None:
    claude_session_path(tmp_path, "s-good").write_bytes(claude_exchange("s-good", 1))
    fifo = claude_session_path(tmp_path, "s-fifo")
    os.mkfifo(fifo)
    zero = claude_session_path(tmp_path, "s-zero")
    zero.symlink_to("/dev/zero")
    bad = claude_session_path(tmp_path, "s-bad")
    bad.write_bytes(
        claude_exchange("s-bad", 2) + b"this is not json\n" + b'{"type": "user", "message": 7\n'
    )

    captured = memory_capture(tmp_path, db_url, "backfill", "--json")
    status = memory_capture(tmp_path, db_url, "status", "--json")
    shown = memory_capture(tmp_path, db_url, "status")

    assert json.loads(captured.stdout)["platforms"]["claude-code"]["inserted"] == 4
    report = json.loads(status.stdout)
    skipped = {u["path"]: u["reason"] for u in report["unreadable"]}
    assert skipped == {
        str(fifo): "a FIFO (named pipe), not a regular file: skipped",
        str(zero): "a link to /dev/zero, a character device, not a regular file: skipped",
    }
    assert report["platforms"]["claude-code"]["files_on_disk"] == 2
    assert report["platforms"]["claude-code"]["files_tracked"] == 2
    [bad_file] = report["bad_records"]
    assert bad_file["path"] == str(bad) and bad_file["count"] == 2, bad_file
    assert bad_file["last_issue"].startswith("offset "), bad_file
    problems = report["problems"]
    for path in (fifo, zero, bad):
        assert sum(str(path) in p for p in problems) == 1, problems
        assert str(path) in shown.stdout.replace("\n", ""), shown.stdout
    assert "2 bad records skipped (last: offset" in " ".join(problems)
