"""``doctor --secrets`` reaches actions (tool calls) through the real command: a secret
planted past admission (direct SQL) in an action's command, target or excerpt is reported by
kind and action id with the turns' two detectors, counted by the dry run, re-redacted by
``--fix`` (a clean action untouched, the full-text search following the new text), and gone
from the next scan."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.config import Settings
from agents_memory.store.memories import ensure_user
from tests.coldpath.embedding_helpers import cli_env

BIN = Path(sys.executable).parent
KNOWN = "sk-ant-api03-" + "Zx9" * 30 + "AA"
"""A format the redactor knows."""
UNKNOWN = "q7Xv2LmR9tBz4KpW8nYc3HdF6sJgA1eUoZ5iNr0T"
"""Random-looking and in no known format: only the second opinion flags it."""


def _action(conn: psycopg.Connection[Any], uid: int, key: str, **cols: Any) -> int:
    names = ["user_id", "agent_platform", "session_id", "external_key", "tool", "kind", "outcome"]
    names += list(cols)
    values = [uid, "claude-code", "s1", key, "Bash", "shell", "error", *cols.values()]
    row = conn.execute(
        f"INSERT INTO actions ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))})"
        " RETURNING id",
        values,
    ).fetchone()
    assert row is not None
    return int(row[0])


def _doctor(settings: Settings, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(str(settings.database_url), tmp_path, "http://127.0.0.1:9/v1")
    proc = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "doctor", "--secrets", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    for secret in (KNOWN, UNKNOWN):
        assert secret not in proc.stdout and secret not in proc.stderr
    return proc


def _texts(conn: psycopg.Connection[Any]) -> dict[int, tuple[Any, ...]]:
    rows = conn.execute("SELECT id, command, excerpt, targets FROM actions").fetchall()
    conn.commit()
    return {int(r[0]): tuple(r[1:]) for r in rows}


def test_doctor_finds_and_fixes_secrets_in_actions_with_the_turns_rules(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    uid = ensure_user(conn, settings.user_name)
    command = _action(
        conn, uid, "t1", command=f"curl -H 'x-api-key: {KNOWN}' https://api.anthropic.com"
    )
    excerpt = _action(conn, uid, "t2", command="make seed", excerpt=f"seed {UNKNOWN} rejected")
    target = _action(conn, uid, "t3", targets=["src/app.py", f"https://x.test/?token={KNOWN}"])
    clean = _action(conn, uid, "t4", command="pytest tests/unit -x", excerpt="1 failed")
    conn.commit()
    before = _texts(conn)

    scan = _doctor(settings, tmp_path, "--json")
    report = json.loads(scan.stdout)["secret_scan"]
    text = _doctor(settings, tmp_path)
    dry = _doctor(settings, tmp_path, "--fix", "--json")
    unchanged = _texts(conn)
    fixed = _doctor(settings, tmp_path, "--fix", "--yes")
    after = _texts(conn)
    again = json.loads(_doctor(settings, tmp_path, "--json").stdout)["secret_scan"]

    assert scan.returncode == 1 and report["actions_scanned"] == 4
    assert report["action_ids"] == {
        "redactor:anthropic_api_key": [command, target],
        "entropy:high_entropy": [excerpt],
    }
    assert "4 actions scanned; secrets found:" in text.stdout
    assert f"action ids {command}, {target}" in text.stdout
    assert json.loads(dry.stdout)["fix"]["actions"] == 3 and unchanged == before
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "and 3 actions" in fixed.stdout
    assert after[command][0] == "curl -H 'x-api-key: [redacted:anthropic_api_key]' " + (
        "https://api.anthropic.com"
    )
    assert UNKNOWN not in str(after[excerpt]) and "[redacted:" in str(after[excerpt][1])
    assert after[target][2][0] == "src/app.py" and KNOWN not in after[target][2][1]
    assert after[clean] == before[clean]
    assert again["action_ids"] == {} and not any(KNOWN in str(v) for v in after.values())
    hits = conn.execute(
        "SELECT count(*) FROM actions"
        " WHERE action_fts(tool, targets, command, excerpt) @@ to_tsquery('simple', 'redacted')"
    ).fetchone()
    assert hits is not None and hits[0] == 3
