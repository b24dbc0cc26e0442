"""Every adapter's ``parse`` fed generated hostile input: random bytes, truncated lines, invalid
UTF-8, JSON of the wrong types and shapes, deeply nested JSON, huge lines and mutations of the
real fixtures; for the SQLite-store clients, copies of their fixture databases with corrupt
pages, wrong column types and missing tables or columns.

Bounded in count, time and memory: a fixed seed per adapter, :data:`CASES` inputs per adapter
(:data:`DB_CASES` for a database), the whole module well under 30 s, each parse of a file within
the stated cap (:data:`MEMORY_FIXED` plus :data:`MEMORY_PER_INPUT_BYTE` per input byte). For
each input: nothing escapes ``parse`` (bad records are issues), each turn is a user or assistant
turn of this platform under a non-empty key of at most :data:`MAX_KEY` characters, the state
survives JSON (the daemon stores it), the resume offset lies within the data, and parsing again
gives the same turns."""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import sqlite3
import tracemalloc
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import pytest

from agents_memory.adapters import get_adapter, names
from agents_memory.adapters.base import Adapter, ParseResult
from tests.adapters.test_contract import FIXTURES, transcripts

CASES: Final = 300
DB_CASES: Final = 60
MEMORY_FIXED: Final = 32 * 1024 * 1024
MEMORY_PER_INPUT_BYTE: Final = 24
"""The stated memory cap: one parse of a hostile input allocates at most 32 MiB plus 24 times
the input's size at its peak (traced by :mod:`tracemalloc`)."""
MAX_KEY: Final = 512
HUGE: Final = 1_500_000
"""Characters of a huge line."""
DEEP: Final = 50_000
"""Nesting depth of the deeply nested JSON."""

FILE_ADAPTERS = [n for n in names() if get_adapter(n).read_mode(transcripts(n)[0]) != "database"]
DB_ADAPTERS = [n for n in names() if n not in FILE_ADAPTERS]


def check(adapter: Adapter, path: Path, data: bytes) -> ParseResult:
    """``data`` parsed twice (no exception may escape) and the result's promises checked."""
    first = adapter.parse(path, data, offset=0, state={}, final=True)
    again = adapter.parse(path, data, offset=0, state={}, final=True)
    assert [t.external_uuid for t in again.turns] == [t.external_uuid for t in first.turns]
    assert again.turns == first.turns
    assert 0 <= first.resume_offset <= len(data) or adapter.read_mode(path) == "database"
    json.dumps(first.state)
    if adapter.read_mode(path) == "append" and b"\n" in data[:-1]:
        cut = data.index(b"\n", len(data) // 2 if b"\n" in data[len(data) // 2 : -1] else 0) + 1
        head = adapter.parse(path, data[:cut], offset=0, state={}, final=False)
        state = json.loads(json.dumps(head.state))
        rest = data[head.resume_offset :]
        tail = adapter.parse(path, rest, offset=head.resume_offset, state=state, final=True)
        for turn in [*head.turns, *tail.turns]:
            assert turn.role in ("user", "assistant") and turn.external_uuid
    for turn in first.turns:
        assert turn.role in ("user", "assistant"), turn
        assert isinstance(turn.external_uuid, str) and turn.external_uuid, turn
        assert len(turn.external_uuid) <= MAX_KEY, turn.external_uuid[:80]
        assert isinstance(turn.text, str) and turn.platform in adapter.platforms
        assert turn.session_id is None or isinstance(turn.session_id, str), turn
        assert turn.message_at is None or isinstance(turn.message_at, datetime), turn
    return first


# --- values and mutations of JSON ------------------------------------------------------------


def wrong_value(rng: random.Random) -> Any:
    return rng.choice(
        [
            None,
            0,
            -1,
            2**70,
            1e308,
            float("nan") if rng.random() < 0.1 else 3.5,
            "",
            "x" * rng.randint(1, 3000),
            "\ud800" if rng.random() < 0.2 else "\u0000",
            True,
            [],
            {},
            [None, 1, "a", {}],
            {"type": None, "content": 5, "text": [], "role": {}, "id": []},
            "2026-13-45T99:99:99Z",
        ]
    )


def mutate_json(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """``value`` with one node somewhere replaced by a wrong type or shape."""
    if depth > 6 or not isinstance(value, dict | list) or not value or rng.random() < 0.15:
        return wrong_value(rng)
    if isinstance(value, dict):
        key = rng.choice(list(value))
        copy = dict(value)
        if rng.random() < 0.2:
            del copy[key]
        else:
            copy[key] = mutate_json(rng, value[key], depth + 1)
        return copy
    index = rng.randrange(len(value))
    items = list(value)
    items[index] = mutate_json(rng, value[index], depth + 1)
    return items


FIELDS: Final = frozenset(
    {
        "type",
        "role",
        "content",
        "text",
        "message",
        "id",
        "uuid",
        "parentUuid",
        "sessionId",
        "session_id",
        "timestamp",
        "payload",
        "parts",
        "model",
        "messages",
        "isSidechain",
        "cwd",
        "toolUseResult",
        "subtype",
        "kind",
        "data",
        "thoughts",
        "name",
        "items",
        "item",
    }
)
"""Keys the adapters read: their values are the ones worth breaking."""


def mutate_fields(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """``value`` with the values of keys adapters read given wrong types, at every depth."""
    if depth > 8:
        return value
    if isinstance(value, list):
        return [mutate_fields(rng, v, depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    return {
        k: wrong_value(rng)
        if k in FIELDS and rng.random() < 0.3
        else mutate_fields(rng, v, depth + 1)
        for k, v in value.items()
    }


def deep_json(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "[" * DEEP + "]" * DEEP
    return '{"a":' * DEEP + "1" + "}" * DEEP


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines()


def _mutate_line(rng: random.Random, line: bytes) -> bytes:
    try:
        value = json.loads(line)
    except ValueError:
        return line
    changed = mutate_fields(rng, value) if rng.random() < 0.5 else mutate_json(rng, value)
    return json.dumps(changed, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")


def _garbage(rng: random.Random, base: bytes) -> bytes:
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 400))).replace(b"\n", b" ")


def _truncated(rng: random.Random, base: bytes) -> bytes:
    return base[: rng.randint(0, len(base))]


def _bad_utf8(rng: random.Random, base: bytes) -> bytes:
    cut = rng.randint(0, len(base))
    return base[:cut] + rng.choice([b"\xff\xfe", b"\xed\xa0\x80", b"\xc3", b"\x80"]) + base[cut:]


def _deep(rng: random.Random, base: bytes) -> bytes:
    return deep_json(rng).encode()


def _wrong_top(rng: random.Random, base: bytes) -> bytes:
    return json.dumps(wrong_value(rng)).encode("utf-8", "surrogatepass")


def _huge(rng: random.Random, base: bytes) -> bytes:
    """The record with one field a huge string or deeply nested."""
    try:
        value = json.loads(base)
    except ValueError:
        value = {}
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        value[key] = rng.choice(["y" * HUGE, deep_json(rng), json.loads("[" * 200 + "]" * 200)])
    return json.dumps(value).encode()


LINE_MUTATIONS: Final = (_garbage, _truncated, _bad_utf8, _deep, _wrong_top, _huge)


def _hostile_line(rng: random.Random, lines: list[bytes]) -> bytes:
    base = rng.choice(lines) if lines else b"{}"
    kind = rng.randrange(len(LINE_MUTATIONS) + 2)
    if kind < len(LINE_MUTATIONS):
        return LINE_MUTATIONS[kind](rng, base)
    return _mutate_line(rng, base)


def mutate_lines(rng: random.Random, data: bytes) -> bytes:
    """A JSONL fixture with a few lines made hostile, dropped, doubled or swapped."""
    lines = _lines(data)
    out = list(lines)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(5)
        at = rng.randrange(len(out) + 1)
        if op == 0 or not out:
            out.insert(at, _hostile_line(rng, lines))
        elif op == 1:
            out[at % len(out)] = _hostile_line(rng, lines)
        elif op == 2:
            del out[at % len(out)]
        elif op == 3:
            out.insert(at, out[at % len(out)])
        else:
            i, j = rng.randrange(len(out)), rng.randrange(len(out))
            out[i], out[j] = out[j], out[i]
    return b"".join(line + b"\n" for line in out)


def mutate_document(rng: random.Random, data: bytes) -> bytes:
    """A whole-file JSON fixture made hostile."""
    kind = rng.randrange(6)
    if kind == 0:
        return data[: rng.randint(0, len(data))]
    if kind == 1:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 2000)))
    if kind == 2:
        return deep_json(rng).encode()
    if kind == 3:
        cut = rng.randint(0, len(data))
        return data[:cut] + b"\xff\xed\xa0\x80" + data[cut:]
    value = json.loads(data)
    if kind == 4:
        return json.dumps(mutate_fields(rng, value)).encode("utf-8", "surrogatepass")
    for _ in range(rng.randint(1, 5)):
        value = mutate_json(rng, value)
    return json.dumps(value).encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("name", FILE_ADAPTERS)
def test_hostile_transcripts_never_raise_and_parse_deterministically(
    name: str, tmp_path: Path
) -> None:
    adapter = get_adapter(name)
    rng = random.Random(f"fuzz:{name}")
    fixtures = transcripts(name)
    tracemalloc.start()
    try:
        for case in range(CASES):
            source = rng.choice(fixtures)
            path = tmp_path / source.relative_to(FIXTURES)
            whole = adapter.read_mode(source) == "whole"
            data = source.read_bytes()
            data = mutate_document(rng, data) if whole else mutate_lines(rng, data)
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            try:
                check(adapter, path, data)
            except Exception as exc:  # name the input that broke it
                raise AssertionError(f"{name} case {case} ({source.name}): {exc!r}") from exc
            peak = tracemalloc.get_traced_memory()[1] - before
            cap = MEMORY_FIXED + MEMORY_PER_INPUT_BYTE * len(data)
            assert peak <= cap, f"{name} case {case}: {peak:,} bytes at peak (cap {cap:,})"
    finally:
        tracemalloc.stop()


# --- databases -------------------------------------------------------------------------------


def _tables(path: Path) -> dict[str, list[str]]:
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            t: [c[1] for c in conn.execute(f'PRAGMA table_info("{t}")')]
            for t in tables
            if not t.startswith("sqlite_")
        }


def _corrupt_pages(rng: random.Random, path: Path) -> None:
    data = bytearray(path.read_bytes())
    for _ in range(rng.randint(1, 20)):
        at = rng.randrange(100 if rng.random() < 0.2 else 0, len(data))
        data[at : at + rng.randint(1, 64)] = bytes(rng.randrange(256) for _ in range(8)) * 8
    path.write_bytes(bytes(data[: len(data) if rng.random() < 0.8 else rng.randrange(len(data))]))


def _wrong_columns(rng: random.Random, path: Path, tables: dict[str, list[str]]) -> None:
    with sqlite3.connect(path) as conn:
        for _ in range(rng.randint(1, 4)):
            table = rng.choice(list(tables))
            column = rng.choice(tables[table])
            value = rng.choice(
                [
                    None,
                    -1,
                    2**62,
                    1e300,
                    b"\xff\xfe\x00",
                    "",
                    "not json {",
                    json.dumps(wrong_value(rng)),
                    deep_json(rng),
                    "z" * 100_000,
                    '{"role": 5, "parts": {}, "time": "soon"}',
                ]
            )
            where = "" if rng.random() < 0.3 else " WHERE rowid % 3 = 0"
            with contextlib.suppress(sqlite3.DatabaseError):  # a constraint said no
                conn.execute(f'UPDATE "{table}" SET "{column}" = ?{where}', (value,))


def _json_columns(rng: random.Random, path: Path, tables: dict[str, list[str]]) -> None:
    """JSON held in text columns given the wrong types and shapes."""
    with sqlite3.connect(path) as conn:
        for table, columns in tables.items():
            for column in columns:
                try:
                    rows = conn.execute(f'SELECT rowid, "{column}" FROM "{table}"').fetchall()
                except sqlite3.OperationalError:
                    break  # a table WITHOUT ROWID
                for rowid, text in rows:
                    if not isinstance(text, str) or not text.startswith(("{", "[")):
                        continue
                    if rng.random() < 0.5:
                        continue
                    try:
                        value = mutate_json(rng, json.loads(text))
                    except ValueError:
                        continue
                    conn.execute(
                        f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?',
                        (
                            json.dumps(value)
                            .encode("utf-8", "surrogatepass")
                            .decode("utf-8", "replace"),
                            rowid,
                        ),
                    )


def _drop(rng: random.Random, path: Path, tables: dict[str, list[str]]) -> None:
    with sqlite3.connect(path) as conn:
        table = rng.choice(list(tables))
        try:
            if rng.random() < 0.5:
                conn.execute(f'DROP TABLE "{table}"')
            else:
                column = rng.choice(tables[table])
                conn.execute(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')
        except sqlite3.DatabaseError:
            try:
                conn.execute(f'ALTER TABLE "{table}" RENAME TO "{table}_old"')
            except sqlite3.DatabaseError:
                conn.execute(f'DELETE FROM "{table}"')


DB_MUTATIONS: Final[list[Callable[..., None]]] = [_wrong_columns, _json_columns, _drop]


@pytest.mark.parametrize("name", DB_ADAPTERS)
def test_hostile_databases_never_raise_and_parse_deterministically(
    name: str, tmp_path: Path
) -> None:
    adapter = get_adapter(name)
    rng = random.Random(f"fuzz-db:{name}")
    source = transcripts(name)[0]
    tables = _tables(source)
    for case in range(DB_CASES):
        path = tmp_path / str(case) / source.name
        path.parent.mkdir()
        shutil.copyfile(source, path)
        kind = rng.randrange(len(DB_MUTATIONS) + 1)
        if kind == len(DB_MUTATIONS):
            _corrupt_pages(rng, path)
        else:
            DB_MUTATIONS[kind](rng, path, tables)
        try:
            check(adapter, path, b"")
        except Exception as exc:
            raise AssertionError(f"{name} case {case} (mutation {kind}): {exc!r}") from exc
        shutil.rmtree(path.parent)


# --- what the fuzz found, kept as fixed cases ------------------------------------------------

GEMINI_LEGACY = FIXTURES / "gemini-cli" / "vct_legacy_json_2025-10_gemini-2.5-pro.json"


def test_a_message_type_that_is_an_object_and_a_key_of_a_megabyte_are_survived(
    tmp_path: Path,
) -> None:
    adapter = get_adapter("gemini-cli")
    document = json.loads(GEMINI_LEGACY.read_bytes())
    messages = document["messages"]
    messages[0]["type"] = {"not": "a string"}
    messages[1]["id"] = "[" * HUGE
    result = check(adapter, tmp_path / GEMINI_LEGACY.name, json.dumps(document).encode())
    assert result.unknown_kinds["message:(no type)"] == 1
    assert any(
        t.external_uuid.startswith("gemini-cli:") and "#" in t.external_uuid for t in result.turns
    )


def test_a_grok_record_whose_type_is_an_object_is_an_unknown_kind(tmp_path: Path) -> None:
    adapter = get_adapter("grok")
    source = FIXTURES / "grok" / "session" / "chat_history.jsonl"
    data = b'{"type": {"x": 1}, "content": "?"}\n' + source.read_bytes()
    result = check(adapter, tmp_path / source.relative_to(FIXTURES), data)
    assert result.unknown_kinds["(no type)"] == 1 and result.turns


def _opencode(tmp_path: Path, *statements: tuple[str, tuple[Any, ...]]) -> ParseResult:
    source = transcripts("opencode")[0]
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    with sqlite3.connect(path) as conn:
        for sql, args in statements:
            conn.execute(sql, args)
    return check(get_adapter("opencode"), path, b"")


def test_opencode_rows_with_text_times_huge_times_blob_ids_and_lone_surrogates(
    tmp_path: Path,
) -> None:
    result = _opencode(
        tmp_path,
        ("UPDATE message SET time_updated = 'soon' WHERE rowid = 1", ()),
        ("UPDATE part SET time_updated = x'ff' WHERE rowid = 2", ()),
        ("UPDATE part SET data = ? WHERE rowid = 3", ('{"type": ["text"]}',)),
        ("UPDATE message SET data = json_set(data, '$.time.created', 1e300) WHERE rowid = 4", ()),
        ("UPDATE message SET session_id = x'fffe' WHERE rowid = 5", ()),
        (
            "UPDATE part SET data = json_set(data, '$.text', json(?)) WHERE data LIKE '%\"text\"%'",
            ('"\\ud800 x"',),
        ),
    )
    assert result.turns
    assert any("is not text" in i.reason for i in result.issues)


def test_hermes_with_a_blob_session_id_and_a_text_sequence(tmp_path: Path) -> None:
    source = transcripts("hermes")[0]
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE messages SET session_id = x'fffe' WHERE id = 3")
        conn.execute("UPDATE sqlite_sequence SET seq = 'many' WHERE name = 'messages'")
    result = check(get_adapter("hermes"), path, b"")
    assert result.turns and any("session id is not text" in i.reason for i in result.issues)
