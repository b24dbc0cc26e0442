"""The project registry through the real console scripts: ``tags set`` writes a project's
kind, paused flag and description; a paused project's turns are not captured (tombstoned
as ``paused``) and ``status`` names it; made active again, its new turns come in."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import psycopg

from agents_memory.store import tags as tag_store
from tests.capture.cli import memory_capture
from tests.capture.transcripts import claude_exchange, claude_session_path
from tests.data.pool import machine_env, run


def _repo(path: Path, remote: str) -> Path:
    path.mkdir(parents=True)
    for args in (["init", "-q"], ["remote", "add", "origin", remote]):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return path


def _texts(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [str(r[0]) for r in conn.execute("SELECT cwd FROM memory ORDER BY id")]


def test_a_paused_project_is_not_captured_and_status_says_so(db_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shop = _repo(tmp_path / "src" / "shop", "https://example.org/acme/shop.git")
    blog = _repo(tmp_path / "src" / "blog", "git@example.org:acme/blog.git")
    with psycopg.connect(db_url) as conn:
        tag_store.create_project_tag(
            conn, "shop", git_root=str(shop), git_remote="https://example.org/acme/shop.git"
        )
        conn.commit()
    env = machine_env(home, db_url)

    paused = run(
        env, "tags", "set", "shop", "--kind", "project", "--paused", "--description", "The shop"
    )
    assert paused.returncode == 0, paused.stderr
    assert paused.stdout.strip() == "'shop': kind project, paused, described as 'The shop'"
    listed = run(env, "tags", "list", "--json")
    tag = next(t for t in json.loads(listed.stdout)["tags"] if t["name"] == "shop")
    assert (tag["kind"], tag["paused"]) == ("project", True)

    path = claude_session_path(home, "s-shop")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(claude_exchange("s-shop", 1, cwd=str(shop)))
    other = claude_session_path(home, "s-blog")
    other.write_bytes(claude_exchange("s-blog", 2, cwd=str(blog)))
    done = memory_capture(home, db_url, "backfill")
    assert done.returncode == 0, done.stderr
    assert set(_texts(db_url)) == {str(blog)}  # the shop's turns were passed over
    with psycopg.connect(db_url) as conn:
        buried = conn.execute("SELECT count(*) FROM tombstones WHERE reason = 'paused'").fetchone()
    assert buried is not None and buried[0] == 2

    status = memory_capture(home, db_url, "status", "--json")
    assert json.loads(status.stdout)["paused_projects"] == ["shop"], status.stderr
    shown = memory_capture(home, db_url, "status")
    assert "paused projects (not captured): shop" in " ".join(shown.stdout.split())

    active = run(env, "tags", "set", "shop", "--active")
    assert active.returncode == 0 and "active" in active.stdout, active.stderr
    with path.open("ab") as out:
        out.write(claude_exchange("s-shop", 3, cwd=str(shop)))
    assert memory_capture(home, db_url, "backfill").returncode == 0
    assert _texts(db_url).count(str(shop)) == 2  # the new exchange only: the paused ones stay out
    gone = run(env, "tags", "set", "no-such", "--paused")
    assert gone.returncode == 1 and "no project tag 'no-such'" in gone.stderr
