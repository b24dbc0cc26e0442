"""The brief's "recent work" from the real Claude Code and Codex fixtures captured with their
actions: inside a project, the files its sessions' actions touched most and the last failing
command with its error line (the project's own first; another project's failure marked
elsewhere); nothing from another project's files; within a compact brief's budget."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.store.memories import ensure_user

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
PLACES = {
    "claude-code/vct_v1.0.95_tools_thinking_unicode.jsonl": ".claude/projects/-p/a.jsonl",
    "codex/vct_v0.39.0_vscode_unicode.jsonl": ".codex/sessions/2025/09/19/rollout-b.jsonl",
}
NOW = datetime(2025, 9, 20, tzinfo=UTC)


def _capture(settings: Settings, home: Path, conn: psycopg.Connection[Any]) -> int:
    for source, target in PLACES.items():
        dest = home / target
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / source, dest)
    backfill(settings, Catalog(all_adapters(), home))
    uid = ensure_user(conn, settings.user_name)
    conn.commit()
    return uid


def _repos(conn: psycopg.Connection[Any], tmp_path: Path) -> tuple[Path, Path]:
    """The Claude session in project ``web``, the Codex session in project ``api``."""
    web, api = tmp_path / "web", tmp_path / "api"
    for repo in (web, api):
        (repo / ".git").mkdir(parents=True)
    conn.execute(
        "UPDATE memory SET git_root = CASE agent_platform WHEN 'claude-code' THEN %s ELSE %s END",
        (str(web), str(api)),
    )
    conn.commit()
    return web, api


def _section(text: str, title: str) -> str:
    assert title in text, text
    return text.split(title)[1].split("\n## ", maxsplit=1)[0]


def _brief(conn: Any, settings: Settings, uid: int, cwd: Path | None, **kw: Any) -> str:
    request = BriefRequest(
        platform="claude-code",
        model=None,
        device="dev",
        cwd=str(cwd) if cwd else None,
        short_term_days=60,
        **kw,
    )
    return build_brief(conn, settings, uid, request, now=NOW)


def test_a_projects_brief_lists_its_files_and_the_last_failing_command_its_own_first(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    uid = _capture(settings, tmp_path / "home", conn)
    web, api = _repos(conn, tmp_path)

    in_api = _brief(conn, settings, uid, api)
    in_web = _brief(conn, settings, uid, web)

    work = _section(in_api, "## Recent work in api")
    assert "go.mod" in work and "README.zh-TW.md" in work and ".python-version" in work
    assert "版本需求" not in work  # the other project's files
    assert "last failing command (09-19 09:08 codex-cli): `applypatch << 'PATCH' …`" in work
    assert "patch rejected: empty patch" in work
    mine = _section(in_web, "## Recent work in web")
    files = mine.split("files most touched: ")[1].splitlines()[0]
    assert "go.mod" in files and "Pydantic_Field_Usage_Guide.md" in files
    assert "README.zh-TW.md" not in files
    assert "(09-19 09:08 codex-cli, elsewhere: api)" in mine  # web has no failure of its own
    positions = [in_web.index(h) for h in ("## Recent work in web", "## Recent in web")]
    assert positions == sorted(positions)


def test_recent_work_fits_a_compact_brief_and_a_failure_in_the_project_comes_first(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    uid = _capture(settings, tmp_path / "home", conn)
    web, _api = _repos(conn, tmp_path)
    conn.execute(
        "UPDATE actions SET outcome = 'error', exit_code = 2,"
        " excerpt = 'E   ModuleNotFoundError: No module named pydantic' || chr(10) || 'more'"
        " WHERE tool = 'Bash' AND id = (SELECT min(id) FROM actions WHERE tool = 'Bash')"
        " RETURNING command"
    )
    conn.commit()

    text = _brief(conn, settings, uid, web)
    compact = _brief(conn, settings, uid, web, mode="compact", max_chars=1500)

    work = _section(text, "## Recent work in web")
    assert "elsewhere" not in work and "→ exit 2: E   ModuleNotFoundError" in work
    assert len(compact) <= 1500
    files = _section(compact, "## Recent work in web").split("files most touched: ")[1]
    assert len(files.splitlines()[0].split(", ")) == 3
