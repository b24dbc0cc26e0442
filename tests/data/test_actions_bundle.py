"""Actions (the agents' tool calls) travel in a bundle: the real Claude Code and Codex
fixtures captured with their actions, exported and imported into an empty database through
the real console script, every column the same; a second import finds them all present; an
import never replaces a stored action (a conflict is reported), keeps another session's
action with the same key, redacts a secret the bundle carries, refuses an action whose turn or
session it lacks or that this pool forgot, and still takes a bundle written before actions."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.ops import bundle_format as fmt
from tests.data.bundles import with_member
from tests.data.pool import machine_env, run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
PLACES = {
    "claude-code/spotter_v2.1.38_tool_heavy.jsonl": (
        ".claude/projects/-home-marco-projects-spotter/d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl"
    ),
    "claude-code/vct_v1.0.95_tools_thinking_unicode.jsonl": ".claude/projects/-p/a.jsonl",
    "codex/vct_v0.39.0_vscode_unicode.jsonl": ".codex/sessions/2025/09/19/rollout-b.jsonl",
}
SECRET = "ghp_" + "Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz1Xc3V"

_COLUMNS = (
    "u.user_name, a.agent_platform, a.session_id, a.external_key, a.turn_key,"
    " m.external_uuid AS turn, a.tool, a.kind, a.targets, a.command, a.outcome, a.exit_code,"
    " a.excerpt, a.lines_added, a.lines_removed, a.started_at, a.duration_ms, a.device_name,"
    " a.created_at"
)


def _actions(url: str) -> list[tuple[Any, ...]]:
    """Every action with every column that carries meaning (its turn by key, not by id)."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            f"SELECT {_COLUMNS} FROM actions a JOIN users u ON u.user_id = a.user_id"
            " LEFT JOIN memory m ON m.id = a.memory_id"
            " ORDER BY a.agent_platform, a.session_id, a.external_key"
        ).fetchall()


@pytest.fixture
def bundle(make_settings: Any, db_url: str, tmp_path: Path) -> Path:
    """The fixtures captured (with their actions) and exported through the CLI."""
    home = tmp_path / "a"
    for source, target in PLACES.items():
        dest = home / target
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / source, dest)
    settings: Settings = make_settings(database_url=db_url)
    backfill(settings, Catalog(all_adapters(), home))
    path = tmp_path / "pool.zip"
    done = run(machine_env(home, db_url), "export", str(path))
    assert done.returncode == 0, done.stderr
    (tmp_path / "source_url").write_text(db_url)
    return path


def _import(url: str, home: Path, bundle: Path) -> str:
    done = run(machine_env(home, url), "import", str(bundle))
    assert done.returncode == 0, done.stderr
    return done.stdout


def _line(report: str, table: str) -> str:
    return next(line for line in report.splitlines() if line.strip().startswith(table + " "))


def test_actions_survive_a_round_trip_column_for_column_and_a_second_import_adds_nothing(
    bundle: Path, empty_db_url: str, tmp_path: Path
) -> None:
    source = _actions((tmp_path / "source_url").read_text())
    with zipfile.ZipFile(bundle) as archive:
        manifest = json.loads(archive.read(fmt.MANIFEST))
        member = archive.read(fmt.member("actions"))

    first = _import(empty_db_url, tmp_path / "b", bundle)
    after = _actions(empty_db_url)
    second = _import(empty_db_url, tmp_path / "b", bundle)

    kinds = {r[7] for r in source}
    assert len(source) > 30 and {"shell", "edit", "read"} <= kinds
    assert {r[1] for r in source} == {"claude-code", "codex-cli"}
    linked = sum(r[5] is not None for r in source)
    assert 10 < linked < len(source)  # most with their turn, tool-only responses without
    assert manifest["counts"]["actions"] == len(source) == len(member.splitlines())
    assert manifest["sha256"]["actions.jsonl"] == hashlib.sha256(member).hexdigest()
    assert after == source
    assert f"{len(source)} rows: {len(source)} new, 0 already present" in _line(first, "actions")
    assert f"{len(source)} rows: 0 new, {len(source)} already present" in _line(second, "actions")
    assert _actions(empty_db_url) == after


def test_an_import_never_replaces_an_action_and_keeps_another_sessions_action(
    bundle: Path, empty_db_url: str, tmp_path: Path
) -> None:
    _import(empty_db_url, tmp_path / "b", bundle)
    with psycopg.connect(empty_db_url) as conn:
        key, platform, session = conn.execute(
            "SELECT external_key, agent_platform, session_id FROM actions"
            " WHERE kind = 'shell' ORDER BY id LIMIT 1"
        ).fetchone() or ("", "", "")
        conn.execute(
            "UPDATE actions SET excerpt = 'this pool says otherwise' WHERE external_key = %s",
            (key,),
        )
        # the same tool-call id in another session: another action
        conn.execute(
            "UPDATE actions SET session_id = 'another-session' WHERE id = (SELECT id FROM actions"
            " WHERE kind = 'read' ORDER BY id LIMIT 1) RETURNING external_key"
        )
    before = _actions(empty_db_url)

    again = _import(empty_db_url, tmp_path / "b", bundle)
    after = _actions(empty_db_url)

    line = _line(again, "actions")
    assert "1 new" in line and "1 refused (1 conflict)" in line
    assert f"action {key!r} of session {session!r}" in again
    assert set(map(repr, before)) <= set(map(repr, after)) and len(after) == len(before) + 1
    held = [r for r in after if r[3] == key and r[1] == platform]
    assert [r[12] for r in held] == ["this pool says otherwise"]


def _rows(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


def _dump(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(fmt.dump_line(r) for r in rows)


def test_imported_actions_are_redacted_and_refused_without_their_turn_or_session(
    bundle: Path, empty_db_url: str, tmp_path: Path
) -> None:
    def change(data: bytes) -> bytes:
        rows = _rows(data)
        shell = next(r for r in rows if r["kind"] == "shell")
        shell["command"] = f"curl -H 'Authorization: token {SECRET}' https://api.github.com"
        shell["targets"] = [*(shell["targets"] or []), f"https://x.test/?key={SECRET}"]
        shell["excerpt"] = f"401 Bad credentials for {SECRET}"
        orphan = {**rows[1], "external_key": "orphan-1", "turn": "no-such-turn"}
        stray = {**rows[2], "external_key": "stray-1", "turn": None, "session_id": "nowhere"}
        twice = {**rows[3], "excerpt": "the same call, told otherwise"}
        return _dump([*rows, orphan, stray, twice, rows[4]])

    path = tmp_path / "secret.zip"
    path.write_bytes(with_member(bundle.read_bytes(), fmt.member("actions"), change))

    report = _import(empty_db_url, tmp_path / "b", path)

    with psycopg.connect(empty_db_url) as conn:
        text = conn.execute(
            "SELECT string_agg(concat_ws(' ', command, excerpt, array_to_string(targets, ' ')),"
            " ' ') FROM actions"
        ).fetchone()
        keys = {r[0] for r in conn.execute("SELECT external_key FROM actions")}
    assert text is not None and SECRET not in text[0] and "[redacted" in text[0]
    assert "orphan-1" not in keys and "stray-1" not in keys
    line = _line(report, "actions")
    assert "1 unknown memory" in line and "1 unknown session" in line
    assert "1 already present" in line and "1 same key, other text" in line
    assert "its turn 'no-such-turn' is in neither pool nor bundle" in report


def test_a_forgotten_action_stays_forgotten_and_an_old_bundle_without_actions_imports(
    bundle: Path, empty_db_url: str, tmp_path: Path
) -> None:
    with zipfile.ZipFile(bundle) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    manifest = json.loads(members.pop(fmt.MANIFEST))
    del members[fmt.member("actions")], manifest["sha256"]["actions.jsonl"]
    del manifest["counts"]["actions"]
    old = tmp_path / "old.zip"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(fmt.MANIFEST, json.dumps(manifest))
        for name, data in members.items():
            archive.writestr(name, data)
    old.write_bytes(out.getvalue())

    report = _import(empty_db_url, tmp_path / "b", old)
    with psycopg.connect(empty_db_url) as conn:
        conn.execute(
            "INSERT INTO action_tombstones (user_id, agent_platform, session_id, external_key,"
            " reason) SELECT a.user_id, a.agent_platform, a.session_id, a.external_key,"
            " 'forgotten' FROM (SELECT u.user_id, r->>'agent_platform' AS agent_platform,"
            " r->>'session_id' AS session_id, r->>'external_key' AS external_key"
            " FROM users u, jsonb_array_elements(%s::jsonb) r) a",
            (json.dumps(_rows(_member(bundle))[:3]),),
        )
    full = _import(empty_db_url, tmp_path / "b", bundle)

    assert "memory" in report and "actions" not in report
    assert _actions(empty_db_url) and "3 refused (3 forgotten)" in _line(full, "actions")
    assert len(_actions(empty_db_url)) == len(_rows(_member(bundle))) - 3


def _member(bundle: Path) -> bytes:
    with zipfile.ZipFile(bundle) as archive:
        return archive.read(fmt.member("actions"))


def test_the_markdown_export_lists_each_assistant_turns_actions_under_it(
    bundle: Path, tmp_path: Path
) -> None:
    tree = tmp_path / "tree"
    done = run(
        machine_env(tmp_path / "a", (tmp_path / "source_url").read_text()),
        "export",
        "--format",
        "markdown",
        str(tree),
    )
    assert done.returncode == 0, done.stderr
    text = "\n".join(p.read_text() for p in sorted(tree.rglob("*.md")))

    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert "- edit go.mod +3/-3 → ok" in lines  # a Codex edit, under its turn
    failed = "- shell \\`applypatch \\<\\< 'PATCH'…\\` → error: patch rejected: empty patch"
    assert failed in lines  # the command's backticks and brackets escaped
    turn = text.split(failed)[0].rsplit("\n## ", 1)[1]
    assert turn.startswith("assistant") and "codex-cli" in turn.splitlines()[0]
