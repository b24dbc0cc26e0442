"""``mcp-agents-memory ui``: serves on 127.0.0.1, prints one login URL, and the URL logs in."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import httpx2

from tests.data.pool import BIN, machine_env


def test_ui_prints_one_login_url_on_loopback_that_logs_in_once(db_url: str, tmp_path: Path) -> None:
    env = machine_env(tmp_path / "home", db_url)
    process = subprocess.Popen(
        [str(BIN / "mcp-agents-memory"), "ui", "--no-browser", "--port", "0"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.fullmatch(
            r"memory console: (http://127\.0\.0\.1:(\d+)/login\?token=\S+)\n", line
        )
        assert found, line
        url, port = found.group(1), found.group(2)
        with httpx2.Client(follow_redirects=False, timeout=30) as client:
            login = client.get(url)
            assert login.status_code == 303 and "HttpOnly" in login.headers["set-cookie"]
            status = client.get(f"http://127.0.0.1:{port}/")
            assert status.status_code == 200 and "Capture is" in status.text
            again = httpx2.get(url, timeout=30)
            assert again.status_code == 403
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout:
            process.stdout.close()
        if process.stderr:
            process.stderr.close()
