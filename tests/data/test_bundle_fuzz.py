"""Fuzzing the bundle reader (issue 35): generated hostile bundles (random bytes, truncated and
bit-flipped zips, bad JSON lines, deep nesting, huge lines, rows and manifests of the wrong
types) are each refused in one line or imported cleanly; never another exception, never a row
changed that the bundle does not hold, and the process's memory under a stated cap.

Bounded: :data:`CASES` cases from one seed, under :data:`SECONDS` seconds, lines capped at
:data:`LINE_CAP` for the run so the huge-line cases stay cheap.
"""

from __future__ import annotations

import io
import json
import random
import re
import time
import zipfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.errors import BundleError
from agents_memory.ops import bundle_format as fmt
from agents_memory.ops.bundle_reader import ReadLimits
from agents_memory.ops.export import ExportRequest, export
from agents_memory.ops.importer import import_bundle
from agents_memory.store.identity import SCOPED_KEY_PATTERN
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.data.hostile import manifest_for

CASES = 200
SECONDS = 60.0
"""The whole run's bound: 33 s measured on a shared 2-core machine under load, most of it the
database round trips of the imports that get past the checks (about 0.15 s each)."""
MiB = 1024 * 1024
LINE_CAP = 2 * MiB
RSS_GROWTH_CAP = 96 * MiB
"""The process's peak resident memory grows at most this much over the run (VmHWM)."""
TABLES = ("memory", "users", "project_tags", "memory_history", "tag_summaries")

Mutation = Callable[[random.Random, dict[str, bytes]], bytes]
"""Makes a hostile bundle's bytes from the real bundle's members."""


def _zip(members: dict[str, bytes], manifest: bytes | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            if name != fmt.MANIFEST:
                archive.writestr(name, data)
        archive.writestr(fmt.MANIFEST, manifest or manifest_for(_data(members)))
    return out.getvalue()


def _data(members: dict[str, bytes]) -> dict[str, bytes]:
    return {n: d for n, d in members.items() if n != fmt.MANIFEST}


def _with_line(members: dict[str, bytes], rnd: random.Random, line: bytes) -> bytes:
    """The bundle with ``line`` put into one data member (a sound manifest around it)."""
    changed = dict(members)
    name = rnd.choice(sorted(_data(members)))
    lines = changed[name].splitlines(keepends=True)
    lines.insert(rnd.randint(0, len(lines)), line + b"\n")
    changed[name] = b"".join(lines)
    return _zip(changed)


_ODD = ("not a date", "2026-13-45T99:99:99Z", True)


def _wrong_value(rnd: random.Random) -> Any:
    return rnd.choice(
        [
            *_ODD,
            None,
            0,
            -1,
            2**70,
            1.5,
            "",
            "x" * 300,
            "\u0000",
            "\ud800",
            [],
            [1, "a"],
            {},
            {"a": []},
        ]
    )


def _mutate_row(rnd: random.Random, members: dict[str, bytes]) -> bytes:
    """A real row of a real member with fields dropped, retyped or added."""
    changed = dict(members)
    name = rnd.choice([n for n, d in sorted(_data(members).items()) if d.strip()])
    lines = changed[name].splitlines()
    at = rnd.randrange(len(lines))
    row = json.loads(lines[at])
    for _ in range(rnd.randint(1, 3)):
        key = rnd.choice([*sorted(row), "extra", 'col"; DROP TABLE memory; --'])
        if rnd.random() < 0.3:
            row.pop(key, None)
        else:
            row[key] = _wrong_value(rnd)
    lines[at] = json.dumps(row).encode()
    changed[name] = b"\n".join(lines) + b"\n"
    return _zip(changed)


def _manifest_types(rnd: random.Random, members: dict[str, bytes]) -> bytes:
    manifest = json.loads(members[fmt.MANIFEST])
    key = rnd.choice(["sha256", "schema_version", "format", "counts", "embedding", "vectors"])
    manifest[key] = _wrong_value(rnd)
    return _zip(members, json.dumps(manifest).encode())


MUTATIONS: list[tuple[str, Mutation]] = [
    ("random bytes", lambda rnd, m: rnd.randbytes(rnd.randint(0, 4096))),
    ("random bytes behind a zip magic", lambda rnd, m: b"PK\x03\x04" + rnd.randbytes(2000)),
    ("truncated zip", lambda rnd, m: (z := _zip(m))[: rnd.randint(0, len(z) - 1)]),
    (
        "bit-flipped zip",
        lambda rnd, m: bytes(
            b ^ (1 << rnd.randrange(8)) if rnd.random() < 0.002 else b for b in _zip(m)
        ),
    ),
    ("bad JSON line", lambda rnd, m: _with_line(m, rnd, rnd.choice([b"{", b"nul", b"[1,]"]))),
    ("not an object", lambda rnd, m: _with_line(m, rnd, rnd.choice([b"[]", b"1", b'"s"']))),
    ("deep nesting", lambda rnd, m: _with_line(m, rnd, b"[" * rnd.randint(10_000, 200_000))),
    (
        "deep object",
        lambda rnd, m: _with_line(m, rnd, b'{"a":' * 50_000 + b"1" + b"}" * 50_000),
    ),
    ("huge line", lambda rnd, m: _with_line(m, rnd, b'{"x": "' + rnd.randbytes(3 * MiB) + b'"}')),
    ("invalid UTF-8", lambda rnd, m: _with_line(m, rnd, b'{"message": "\xff\xfe"}')),
    ("wrong field types", _mutate_row),
    ("wrong manifest types", _manifest_types),
    ("sound bundle", lambda rnd, m: _zip(m)),
]


def _snapshot(url: str) -> dict[str, set[str]]:
    """Every row of the tables an import writes; memory rows as ``key md5(row)``."""
    with psycopg.connect(url) as conn:
        found = {
            t: set(map(repr, conn.execute(f"SELECT * FROM {t}").fetchall()))
            for t in TABLES
            if t not in ("memory", "users")
        }
        # A bundle may fill a user's empty profile (what it holds): a user is kept by id and name.
        found["users"] = set(
            map(repr, conn.execute("SELECT user_id, user_name FROM users").fetchall())
        )
        found["memory"] = {
            f"{key} {digest}"
            for key, digest in conn.execute(
                "SELECT external_uuid, md5(m::text) FROM memory m"
            ).fetchall()
        }
    return found


def _check_rows(before: dict[str, set[str]], after: dict[str, set[str]], holds: str) -> None:
    """No row of ``before`` changed or went; a new memory's key is one the bundle holds, or its
    session-scoped form (the bundle's row reused a key another session's turn holds here)."""
    for table in TABLES:
        assert before[table] <= after[table], f"a {table} row was changed or removed"
    old_keys = {row.rsplit(" ", 1)[0] for row in before["memory"]}
    for row in after["memory"] - before["memory"]:
        key = row.rsplit(" ", 1)[0]
        assert key not in old_keys, f"memory {key} was rewritten"
        assert re.sub(SCOPED_KEY_PATTERN, "", key) in holds, f"memory {key} is not in the bundle"


def _vm_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


@pytest.fixture
def real_members(make_settings: Any, db_url: str, tmp_path: Path) -> Iterator[dict[str, bytes]]:
    """The members of a real export of a small pool (which stays in the database)."""
    settings: Settings = make_settings(database_url=db_url, embedding_backend="none")
    at = datetime(2026, 3, 1, tzinfo=UTC)
    with psycopg.connect(db_url) as conn:
        uid = ensure_user(conn, "tester")
        insert_memories(
            conn,
            uid,
            [
                NewMemory(
                    "claude-code",
                    "user" if n % 2 == 0 else "assistant",
                    f"turn {n} about the orbit release",
                    external_uuid=f"fuzz:{n}",
                    session_id="s-fuzz",
                    message_at=at + timedelta(minutes=n),
                    device_name="test-device",
                )
                for n in range(6)
            ],
        )
        conn.commit()
    path = tmp_path / "real.zip"
    export(settings, ExportRequest(path), now=datetime.now(UTC))
    with zipfile.ZipFile(path) as archive:
        yield {name: archive.read(name) for name in archive.namelist()}


def test_hostile_bundles_are_refused_in_one_line_or_imported_cleanly(
    real_members: dict[str, bytes], make_settings: Any, db_url: str, tmp_path: Path
) -> None:
    settings: Settings = make_settings(database_url=db_url, embedding_backend="none")
    limits = ReadLimits(line_bytes=LINE_CAP)
    rnd = random.Random(35)
    path = tmp_path / "hostile.zip"
    before = _snapshot(db_url)
    Path("/proc/self/clear_refs").write_text("5")  # resets the peak (VmHWM) to now
    start_rss = _vm_kib("VmRSS") * 1024
    started = time.monotonic()
    seen: dict[str, int] = {}
    for case in range(CASES):
        kind, mutation = MUTATIONS[case % len(MUTATIONS)]
        body = mutation(rnd, real_members)
        path.write_bytes(body)
        dry_run = case % 2 == 0
        try:
            report = import_bundle(settings, path, home=tmp_path, dry_run=dry_run, limits=limits)
        except BundleError as exc:
            message = str(exc)
            assert message and "\n" not in message and len(message) < 600, (kind, message)
            seen[f"{kind}: refused"] = seen.get(f"{kind}: refused", 0) + 1
            assert _snapshot(db_url) == before, (case, kind, message)
            continue
        except Exception as exc:  # the point of the test: nothing else escapes
            pytest.fail(f"case {case} ({kind}) raised {type(exc).__name__}: {exc}"[:2000])
        seen[f"{kind}: imported"] = seen.get(f"{kind}: imported", 0) + 1
        assert report.tables, (case, kind)
        after = _snapshot(db_url)
        _check_rows(before, after, _text(path))
        before = after
    elapsed = time.monotonic() - started
    growth = _vm_kib("VmHWM") * 1024 - start_rss
    assert elapsed < SECONDS, f"{CASES} cases took {elapsed:.1f} s"
    assert growth < RSS_GROWTH_CAP, f"peak memory grew {growth / MiB:.0f} MiB"
    refused = sum(n for k, n in seen.items() if k.endswith("refused"))
    assert refused >= CASES // 2 and any(k.endswith("imported") for k in seen), seen


def _text(path: Path) -> str:
    with zipfile.ZipFile(path) as archive:
        return " ".join(archive.read(n).decode("utf-8", "replace") for n in archive.namelist())
