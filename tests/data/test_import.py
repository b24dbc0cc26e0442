"""Import: idempotent, --dry-run writes nothing, refusals are one line and write nothing,
conflicts are reported and never overwritten, vectors kept only for the same model."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.ops import bundle_format as fmt
from agents_memory.ops.export import ExportRequest, export
from agents_memory.ops.importer import import_bundle
from agents_memory.store import migrate
from tests.conftest import TEST_DIM, TEST_MODEL
from tests.data.pool import machine_env, populate, run

TABLES = (
    "memory",
    "memory_history",
    "users",
    "profile_history",
    "project_tags",
    "tag_summaries",
    "project_tag_alias_suggestions",
    "project_tag_new_suggestions",
    "actions",
)


def _snapshot(url: str) -> dict[str, Any]:
    """Every row of every table an import writes (and the sequences' positions aside)."""
    with psycopg.connect(url) as conn:
        return {t: sorted(map(repr, conn.execute(f"SELECT * FROM {t}").fetchall())) for t in TABLES}


@pytest.fixture
def bundle(make_settings: Any, db_url: str, tmp_path: Path) -> Path:
    settings: Settings = make_settings(database_url=db_url)
    with psycopg.connect(db_url) as conn:
        populate(settings, tmp_path / "a", conn)
    path = tmp_path / "pool.zip"
    export(settings, ExportRequest(path, vectors=True), now=_now())
    return path


def _now() -> Any:
    from datetime import datetime

    return datetime.now().astimezone()


def _rewrite(source: Path, target: Path, change: Any) -> None:
    """Copy the bundle with ``change(name, bytes) -> bytes`` applied to each member."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            new.writestr(name, change(name, old.read(name)))


def test_second_import_changes_nothing_and_reports_everything_present(
    bundle: Path, empty_db_url: str, tmp_path: Path
) -> None:
    env = machine_env(tmp_path / "b", empty_db_url)
    assert run(env, "import", str(bundle)).returncode == 0
    after_first = _snapshot(empty_db_url)

    second = run(env, "import", str(bundle))

    assert second.returncode == 0, second.stderr
    assert _snapshot(empty_db_url) == after_first
    memory_line = next(line for line in second.stdout.splitlines() if "memory " in line)
    assert " 0 new" in memory_line and "conflicts" not in memory_line
    assert all(" 0 new" in line for line in second.stdout.splitlines() if "already" in line)


def test_dry_run_writes_nothing_and_prints_the_report_a_real_import_prints(
    bundle: Path, empty_db_url: str, tmp_path: Path
) -> None:
    env = machine_env(tmp_path / "b", empty_db_url)
    dry = run(env, "import", "--dry-run", str(bundle))
    assert dry.returncode == 0, dry.stderr
    assert all(rows == [] for rows in _snapshot(empty_db_url).values())

    real = run(env, "import", str(bundle))

    assert real.returncode == 0, real.stderr
    assert dry.stdout.splitlines()[1:] == real.stdout.splitlines()[1:]
    assert dry.stdout.startswith("dry run: would import")


def test_importing_a_bundle_back_into_its_own_pool_finds_every_row_present(
    bundle: Path, db_url: str, tmp_path: Path
) -> None:
    before = _snapshot(db_url)

    again = run(machine_env(tmp_path / "a", db_url), "import", str(bundle))

    assert again.returncode == 0, again.stderr
    assert _snapshot(db_url) == before
    assert "memory" in again.stdout and "conflict" not in again.stdout


def test_a_bundle_of_a_newer_schema_is_refused_in_one_line(
    bundle: Path, empty_db_url: str, tmp_path: Path
) -> None:
    newer = tmp_path / "newer.zip"

    def bump(name: str, data: bytes) -> bytes:
        if name != fmt.MANIFEST:
            return data
        manifest = json.loads(data)
        manifest["schema_version"] = migrate.latest_version() + 1
        return json.dumps(manifest).encode()

    _rewrite(bundle, newer, bump)
    refused = run(machine_env(tmp_path / "b", empty_db_url), "import", str(newer))

    assert refused.returncode == 1
    assert refused.stderr.strip().count("\n") == 0
    assert "newer than this mcp-agents-memory" in refused.stderr
    assert refused.stdout == ""


def test_a_corrupted_member_is_refused_in_one_line_and_nothing_is_written(
    bundle: Path, db_url: str, empty_db_url: str, tmp_path: Path
) -> None:
    damaged = tmp_path / "damaged.zip"
    _rewrite(
        bundle, damaged, lambda n, d: d.replace(b"tester", b"Tester") if n == "users.jsonl" else d
    )

    refused = run(machine_env(tmp_path / "b", db_url), "import", str(damaged))

    assert refused.returncode == 1
    assert (
        refused.stderr.strip()
        == "error: bundle member users.jsonl fails its checksum; the bundle is damaged"
    )
    with psycopg.connect(db_url) as conn:
        assert conn.execute("SELECT count(*) FROM users WHERE user_name = 'Tester'").fetchone() == (
            0,
        )


def test_a_changed_text_under_a_known_key_is_a_conflict_and_this_pool_keeps_its_text(
    bundle: Path, make_settings: Any, db_url: str, tmp_path: Path
) -> None:
    with psycopg.connect(db_url) as conn:
        key, text = conn.execute(
            "SELECT external_uuid, message FROM memory WHERE external_uuid IS NOT NULL"
            " ORDER BY id LIMIT 1"
        ).fetchone()  # type: ignore[misc]
        conn.execute("UPDATE memory SET message = 'changed here' WHERE external_uuid = %s", (key,))

    report = import_bundle(make_settings(database_url=db_url), bundle, home=tmp_path)

    assert report.tables["memory"].conflicts == 1
    assert len(report.refusals) == 1 and f"same key {key!r} as a stored row" in report.refusals[0]
    assert report.tables["memory"].new == 0
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT message FROM memory WHERE external_uuid = %s", (key,)).fetchone()
    assert row == ("changed here",) and text != "changed here"


def test_vectors_are_kept_for_the_same_model_and_left_to_the_cold_path_otherwise(
    bundle: Path, make_settings: Any, db_url: str, pg_server: Any, tmp_path: Path
) -> None:
    from tests.conftest import _clone

    _server, info = pg_server
    with psycopg.connect(db_url) as conn:
        conn.execute(
            "UPDATE memory SET embedding = array_fill(0.5, ARRAY[%s])::halfvec,"
            " embedding_model = %s",
            (TEST_DIM, TEST_MODEL),
        )
    path = tmp_path / "with-vectors.zip"
    export(make_settings(database_url=db_url), ExportRequest(path, vectors=True), now=_now())
    same = make_settings(
        database_url=info.conninfo(_clone(info)),
        embedding_backend="openai",
        embedding_model=TEST_MODEL,
        embedding_dim=TEST_DIM,
        embedding_base_url="http://127.0.0.1:9/v1",
    )
    other = make_settings(database_url=info.conninfo(_clone(info)), embedding_backend="none")

    kept = import_bundle(same, path, home=tmp_path)
    dropped = import_bundle(other, path, home=tmp_path)

    assert kept.vectors_kept and kept.reembed == 0
    assert not dropped.vectors_kept and dropped.reembed == dropped.tables["memory"].new > 0
    with psycopg.connect(same.database_url) as conn:
        assert conn.execute("SELECT count(*) FROM memory WHERE embedding IS NULL").fetchone() == (
            0,
        )
    with psycopg.connect(other.database_url) as conn:
        assert conn.execute(
            "SELECT count(*) FROM memory WHERE embedding IS NOT NULL"
        ).fetchone() == (0,)


def test_imported_text_passes_admission_and_rows_keep_their_own_source(
    bundle: Path, make_settings: Any, empty_db_url: str, tmp_path: Path
) -> None:
    private = tmp_path / "private.zip"

    def add_private(name: str, data: bytes) -> bytes:
        if name != "memory.jsonl":
            return data
        rows = [json.loads(line) for line in data.splitlines()]
        rows[0]["message"] = "<private>all of it</private>"
        rows[1]["message"] = "keep this <private>not this</private>"
        return b"".join(fmt.dump_line(r) for r in rows)

    _rewrite(bundle, private, add_private)
    with zipfile.ZipFile(private) as archive:
        manifest = json.loads(archive.read(fmt.MANIFEST))
        manifest["sha256"]["memory.jsonl"] = hashlib.sha256(
            archive.read("memory.jsonl")
        ).hexdigest()
    final = tmp_path / "final.zip"
    _rewrite(private, final, lambda n, d: json.dumps(manifest).encode() if n == fmt.MANIFEST else d)

    report = import_bundle(make_settings(database_url=empty_db_url), final, home=tmp_path)

    assert report.tables["memory"].refused == {"private-only": 1}
    with psycopg.connect(empty_db_url) as conn:
        texts = [r[0] for r in conn.execute("SELECT message FROM memory")]
        sources = {r[0] for r in conn.execute("SELECT DISTINCT source FROM memory")}
    assert any(t.startswith("keep this") for t in texts)
    assert not any("not this" in t or "all of it" in t for t in texts)
    assert sources == {"capture", "manage_knowledge"}
