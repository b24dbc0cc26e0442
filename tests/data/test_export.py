"""Export: the filters, the Markdown tree, and one-line refusals of bad arguments."""

from __future__ import annotations

import json
import re
import zipfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.errors import BundleError
from agents_memory.ops.export import ExportRequest, export
from tests.data.pool import PINNED, PROFILE, machine_env, populate, run


@pytest.fixture
def pool(make_settings: Any, db_url: str, tmp_path: Path) -> Settings:
    settings: Settings = make_settings(database_url=db_url)
    with psycopg.connect(db_url) as conn:
        populate(settings, tmp_path / "a", conn)
    return settings


def _rows(bundle: Path, table: str) -> list[dict[str, Any]]:
    with zipfile.ZipFile(bundle) as archive:
        return [json.loads(line) for line in archive.read(f"{table}.jsonl").splitlines()]


def _now() -> datetime:
    return datetime.now().astimezone()


def test_project_filter_takes_the_project_and_its_aliases_only(
    pool: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "shop.zip"
    report = export(pool, ExportRequest(path, project="shop"), now=_now())

    memories = _rows(path, "memory")
    assert memories and report.counts["memory"] == len(memories)
    assert {m["p_tag"] for m in memories} == {"shop", "shop-old"}
    assert {t["name"] for t in _rows(path, "project_tags")} == {"shop", "shop-old"}
    assert [s["p_tag"] for s in _rows(path, "tag_summaries")] == ["shop"]


def test_platform_and_date_filters_keep_only_matching_turns(pool: Settings, tmp_path: Path) -> None:
    everything = tmp_path / "all.zip"
    export(pool, ExportRequest(everything), now=_now())
    times = sorted(datetime.fromisoformat(m["message_at"]) for m in _rows(everything, "memory"))
    middle = times[len(times) // 2].astimezone()
    day = middle.strftime("%Y-%m-%d")
    midnight = middle.replace(hour=0, minute=0, second=0, microsecond=0)

    codex, since, until = tmp_path / "codex.zip", tmp_path / "since.zip", tmp_path / "until.zip"
    export(pool, ExportRequest(codex, platform="codex-cli"), now=_now())
    export(pool, ExportRequest(since, since=day), now=_now())
    export(pool, ExportRequest(until, until=day), now=_now())

    assert {m["agent_platform"] for m in _rows(codex, "memory")} == {"codex-cli"}
    later = [datetime.fromisoformat(m["message_at"]) for m in _rows(since, "memory")]
    earlier = [datetime.fromisoformat(m["message_at"]) for m in _rows(until, "memory")]
    assert later and all(t >= midnight for t in later)
    assert earlier and all(t < midnight + timedelta(days=1) for t in earlier)
    assert len(later) < len(times) or len(earlier) < len(times)


def test_a_misspelt_platform_or_project_and_a_bad_date_are_refused(
    pool: Settings, db_url: str, tmp_path: Path
) -> None:
    env = machine_env(tmp_path / "a", db_url)
    platform = run(env, "export", str(tmp_path / "x.zip"), "--platform", "cluade")
    date = run(env, "export", str(tmp_path / "x.zip"), "--since", "someday")
    project = run(env, "export", str(tmp_path / "x.zip"), "--project", "nope")

    assert date.returncode == 1
    assert date.stderr.strip().count("\n") == 0 and date.stderr.startswith("error: ")
    assert "YYYY-MM-DD" in date.stderr
    assert platform.returncode == project.returncode == 2  # usage errors, as in every command
    assert "(did you mean 'claude'?)" in platform.stderr and "claude-code" in platform.stderr
    assert "no project 'nope'" in project.stderr and "projects: blog, shop" in project.stderr
    assert not (tmp_path / "x.zip").exists()
    with pytest.raises(BundleError, match="did you mean"):
        export(pool, ExportRequest(tmp_path / "y.zip", platform="cluade"), now=_now())


def test_markdown_tree_has_profile_and_pins_on_top_and_one_file_per_session(
    pool: Settings, db_url: str, tmp_path: Path
) -> None:
    tree = tmp_path / "tree"
    done = run(machine_env(tmp_path / "a", db_url), "export", str(tree), "--format", "markdown")
    assert done.returncode == 0, done.stderr

    readme = (tree / "README.md").read_text(encoding="utf-8")
    assert PROFILE in readme and PINNED in readme
    assert readme.index(PROFILE) < readme.index(PINNED)
    sessions = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.md"))
    assert {s.split("/")[0] for s in sessions if "/" in s} == {"shop", "blog"}
    assert "README.md" in sessions
    files = [s for s in sessions if s != "README.md"]
    assert all(re.fullmatch(r"[\w.-]+/\d{4}-\d{2}-\d{2}-[\w.-]+\.md", s) for s in files), files
    with psycopg.connect(db_url) as conn:
        codex = conn.execute(
            "SELECT session_id, count(*) FROM memory WHERE agent_platform = 'codex-cli'"
            " AND is_active GROUP BY 1"
        ).fetchall()
    ((session, turns),) = codex
    (path,) = [p for p in (tree / "shop").glob("*.md") if session in p.name]
    text = path.read_text(encoding="utf-8")
    headings = re.findall(r"^## (user|assistant)\S* · ([^·]+) · codex-cli", text, flags=re.M)
    assert len(headings) == turns
    stamps = [datetime.strptime(h[1].strip(), "%Y-%m-%d %H:%M:%S %z") for h in headings]
    assert stamps == sorted(stamps)
