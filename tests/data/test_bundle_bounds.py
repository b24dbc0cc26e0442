"""A bundle is read within caps (issue 35): a zip bomb member, an over-long line, an oversized
manifest are each refused in one line naming the member and the cap, with bounded memory
(a 205 KB zip of 200 MB of zeros used to take 473 MB), and nothing is written."""

from __future__ import annotations

import base64
import os
import tracemalloc
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.errors import BundleError
from agents_memory.ops.bundle_reader import ReadLimits
from agents_memory.ops.importer import import_bundle
from tests.data.hostile import write_bundle
from tests.data.pool import machine_env, run

MiB = 1024 * 1024
PEAK_CAP = 48 * MiB
"""Python's allocations while a hostile bundle is refused stay under this (tracemalloc)."""


@pytest.fixture
def settings(make_settings: Any, db_url: str) -> Settings:
    made: Settings = make_settings(database_url=db_url, embedding_backend="none")
    return made


def _memory_rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM memory").fetchone()
    return int(row[0]) if row else 0


def _refused(settings: Settings, path: Path, tmp_path: Path, **limits: int) -> tuple[str, int]:
    """The one-line refusal of importing ``path`` and the peak of Python's memory meanwhile."""
    tracemalloc.start()
    try:
        with pytest.raises(BundleError) as caught:
            import_bundle(settings, path, home=tmp_path, limits=ReadLimits(**limits))
        _size, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(caught.value)
    assert "\n" not in message
    return message, peak


def test_a_zip_bomb_member_is_refused_with_bounded_memory(
    settings: Settings, db_url: str, tmp_path: Path
) -> None:
    bomb = write_bundle(tmp_path / "bomb.zip", {"memory.jsonl": bytes(200 * MiB)}, level=9)
    assert bomb.stat().st_size < 400_000

    message, peak = _refused(settings, bomb, tmp_path)

    assert message.startswith("bundle member memory.jsonl expands more than 100 times"), message
    assert "zip bomb" in message
    assert peak < PEAK_CAP, f"peak {peak / MiB:.0f} MiB"
    assert _memory_rows(db_url) == 0
    cli = run(machine_env(tmp_path / "home", db_url), "import", str(bomb))
    assert cli.returncode == 1 and cli.stdout == ""
    assert cli.stderr.strip() == f"error: {message}", cli.stderr


def test_an_over_long_line_is_refused_naming_member_and_line(
    settings: Settings, db_url: str, tmp_path: Path
) -> None:
    long_line = b'{"message": "' + base64.b64encode(os.urandom(3 * MiB // 2)) + b'"}\n'
    path = write_bundle(tmp_path / "long.zip", {"memory.jsonl": b"\n" + long_line})

    message, peak = _refused(settings, path, tmp_path, line_bytes=MiB)

    assert message == "bundle member memory.jsonl line 2 is longer than the cap of 1 MiB; refused"
    assert peak < PEAK_CAP
    assert _memory_rows(db_url) == 0


def test_an_oversized_manifest_is_refused(settings: Settings, tmp_path: Path) -> None:
    members = {"memory.jsonl": b""}
    padding = base64.b64encode(os.urandom(2 * MiB)).decode()
    from tests.data.hostile import manifest_for

    manifest = manifest_for({"users.jsonl": b""}, padding=padding)
    path = write_bundle(tmp_path / "manifest.zip", members, manifest=manifest)

    message, _peak = _refused(settings, path, tmp_path)

    assert message == (
        "bundle member manifest.json is larger than the cap of 1 MiB uncompressed; refused"
    )


def test_a_member_over_its_size_cap_is_refused(settings: Settings, tmp_path: Path) -> None:
    rows = b"".join(b'{"n": %d}\n' % n for n in range(200_000))
    path = write_bundle(tmp_path / "big.zip", {"memory_history.jsonl": rows})

    message, _peak = _refused(settings, path, tmp_path, member_bytes=MiB, ratio=1000)

    assert message == (
        "bundle member memory_history.jsonl is larger than the cap of 1 MiB uncompressed; refused"
    )
