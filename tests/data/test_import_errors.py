"""A bundle whose member holds a bad line is refused by the real CLI in one line that names
the member, the line and what was expected (exit 1, nothing written), not with
``unexpected JSONDecodeError`` / ``KeyError`` / ``RecursionError``."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.ops.export import ExportRequest, export
from tests.data.bundles import DEEP, second_line, with_member, without_key
from tests.data.pool import machine_env, populate, run


@pytest.fixture
def bundle_bytes(make_settings: Any, db_url: str, tmp_path: Path) -> bytes:
    settings: Settings = make_settings(database_url=db_url)
    with psycopg.connect(db_url) as conn:
        populate(settings, tmp_path / "a", conn)
    path = tmp_path / "pool.zip"
    export(settings, ExportRequest(path), now=datetime.now().astimezone())
    return path.read_bytes()


CASES: dict[str, tuple[str, Callable[[bytes], bytes], tuple[str, ...]]] = {
    "bad-json-line": (
        "memory.jsonl",
        second_line(b'{"external_uuid": '),
        ("bundle member memory.jsonl line 2", "not valid JSON", "expected one JSON object"),
    ),
    "nested-50k-deep": (
        "memory.jsonl",
        second_line(DEEP),
        ("bundle member memory.jsonl line 2", "nested too deeply"),
    ),
    "not-utf8": (
        "memory.jsonl",
        second_line(b'{"message": "\xff"}'),
        ("bundle member memory.jsonl line 2", "not UTF-8"),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_member_line_is_refused_in_one_line_naming_member_and_line(
    bundle_bytes: bytes, empty_db_url: str, tmp_path: Path, case: str
) -> None:
    member, change, says = CASES[case]
    bad = tmp_path / "bad.zip"
    bad.write_bytes(with_member(bundle_bytes, member, change))

    refused = run(machine_env(tmp_path / "b", empty_db_url), "import", str(bad))

    assert refused.returncode == 1, refused.stderr
    said = [x for x in refused.stderr.splitlines() if " INFO " not in x]  # migrations' log
    assert len(said) == 1, refused.stderr
    line = said[0]
    assert line.startswith("error: bundle member"), line
    assert "unexpected" not in line and "Error:" not in line, line
    for words in says:
        assert words in line, line
    assert "nothing was imported" in line
    with psycopg.connect(empty_db_url) as conn:
        assert conn.execute("SELECT count(*) FROM memory").fetchone() == (0,)


def test_a_manifest_nested_50k_deep_is_no_readable_manifest(
    empty_db_url: str, tmp_path: Path
) -> None:
    deep = tmp_path / "deep.zip"
    with zipfile.ZipFile(deep, "w") as archive:
        archive.writestr("manifest.json", DEEP)

    refused = run(machine_env(tmp_path / "b", empty_db_url), "import", str(deep))

    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines()[-1] == (
        f"error: {deep} is not an export bundle (no readable manifest.json)"
    )


@pytest.mark.parametrize(
    ("member", "change"),
    [
        ("memory.jsonl", without_key("external_uuid")),
        ("users.jsonl", lambda data: data + b"[1, 2]\n"),
    ],
    ids=["missing-key", "not-an-object"],
)
def test_a_row_of_the_wrong_shape_is_refused_by_line_and_the_rest_comes_in(
    bundle_bytes: bytes,
    empty_db_url: str,
    tmp_path: Path,
    member: str,
    change: Callable[[bytes], bytes],
) -> None:
    bad = tmp_path / "bad.zip"
    bad.write_bytes(with_member(bundle_bytes, member, change))

    done = run(machine_env(tmp_path / "b", empty_db_url), "import", str(bad))

    assert done.returncode == 0, done.stderr
    assert f"{member.removesuffix('.jsonl')}.jsonl line" in done.stdout, done.stdout
    assert "refused" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    with psycopg.connect(empty_db_url) as conn:
        stored = conn.execute("SELECT count(*) FROM memory").fetchone()
    assert stored is not None and stored[0] > 0
