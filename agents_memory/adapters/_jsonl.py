"""JSONL helpers shared by the line-oriented adapters.

Every JSONL transcript is read the same way: walk the complete lines of a bytes buffer, know each
line's absolute byte offset (for keys, resume offsets and issue reports) and its line number, decode
it with the stdlib ``json`` module, and report a line that is not a JSON object as a
:class:`~agents_memory.adapters.base.ParseIssue` without stopping.

:func:`peek_type` is an optional fast path: when a client always serialises the top-level kind
first (Claude's bookkeeping records, Codex's ``{"timestamp","ordinal","type",…}``), an adapter can
skip decoding a large record it would drop anyway.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, NamedTuple

from agents_memory.adapters.base import ParseIssue

__all__ = [
    "Line",
    "Record",
    "complete_end",
    "decode",
    "iter_lines",
    "iter_records",
    "loads",
    "parse_timestamp",
    "peek_type",
    "repaired",
]

_TYPE_KEY = b'"type":"'
_DECODE = json.JSONDecoder().decode
"""What ``json.loads`` runs on the text once it has decoded the bytes."""


class Line(NamedTuple):
    """One complete line of a buffer, without its trailing newline (a tuple: cheap per line)."""

    offset: int
    """Absolute byte offset of the first byte of the line."""
    end: int
    """Absolute byte offset just past the line's newline (where the next line starts)."""
    number: int
    """Line number (0-based, counted from ``first_line`` given to :func:`iter_lines`)."""
    raw: bytes


class Record(NamedTuple):
    """A line that decoded to a JSON object."""

    line: Line
    data: dict[str, Any]


def iter_lines(
    data: bytes, *, offset: int = 0, first_line: int = 0, complete_tail: bool = False
) -> Iterator[Line]:
    """Yield the complete lines of ``data`` (read from absolute ``offset``), blank lines included.

    A trailing fragment without ``\\n`` is yielded only when ``complete_tail`` is true (a whole file
    whose last line lacks a newline); otherwise it is an incomplete write and is left for later.
    A ``\\r`` before the newline is dropped.
    """
    pieces = data.split(b"\n")
    tail = pieces.pop()
    pos = offset
    number = first_line
    for raw in pieces:
        end = pos + len(raw) + 1
        yield Line(pos, end, number, raw[:-1] if raw.endswith(b"\r") else raw)
        pos = end
        number += 1
    if complete_tail and tail.strip():
        yield Line(pos, pos + len(tail), number, tail)


def complete_end(data: bytes, *, offset: int = 0) -> int:
    """Absolute offset just past the last ``\\n`` in ``data`` (``offset`` when there is none)."""
    return offset + data.rfind(b"\n") + 1


def decode(line: Line, issues: list[ParseIssue]) -> dict[str, Any] | None:
    """The JSON object on ``line``, or ``None`` (blank line, or an issue appended to ``issues``).

    A line that is JSON once its invalid UTF-8 bytes are replaced by U+FFFD is kept so, and a
    :func:`repaired` issue says so: one bad byte must not cost the whole turn.
    """
    if not line.raw.strip():
        return None
    try:
        value, was_repaired = loads(line.raw)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError
        issues.append(ParseIssue(line.offset, f"line {line.number}: invalid JSON: {exc}"))
        return None
    if was_repaired:
        issues.append(repaired(line.offset, f"line {line.number}"))
    if not isinstance(value, dict):
        issues.append(ParseIssue(line.offset, f"line {line.number}: not a JSON object"))
        return None
    return value


def loads(raw: bytes) -> tuple[Any, bool]:
    """``json.loads(raw)``, and whether invalid UTF-8 in ``raw`` had to be replaced (U+FFFD)
    for it to decode. Raises :class:`ValueError` when it is not JSON even so."""
    try:
        if raw[:1] == b"{" and raw[1:2] != b"\x00":
            # What json.loads(raw) does, minus its encoding sniffing: a line that starts with
            # "{" and no NUL after it is UTF-8 to json.detect_encoding too.
            return _DECODE(raw.decode("utf-8", "surrogatepass")), False
        return json.loads(raw), False
    except UnicodeDecodeError:
        return _DECODE(raw.decode("utf-8", "replace")), True


def repaired(offset: int, where: str) -> ParseIssue:
    """The issue that records a record kept with its invalid UTF-8 replaced by U+FFFD."""
    return ParseIssue(offset, f"{where}: invalid UTF-8 replaced by U+FFFD", repaired=True)


def iter_records(
    data: bytes,
    issues: list[ParseIssue],
    *,
    offset: int = 0,
    first_line: int = 0,
    complete_tail: bool = False,
) -> Iterator[Record]:
    """Decode every complete line of ``data``; bad lines become issues and are skipped."""
    for line in iter_lines(data, offset=offset, first_line=first_line, complete_tail=complete_tail):
        value = decode(line, issues)
        if value is not None:
            yield Record(line, value)


def peek_type(raw: bytes, *, within: int, key: bytes = _TYPE_KEY) -> str | None:
    """The string after the first ``key`` that starts before byte ``within``, else ``None``.

    Only a hint: it does not validate the line. Use it when the client's serializer writes the
    top-level ``type`` before any nested object, so the first ``"type":"`` (the default ``key``)
    is the record's own kind; ``key`` can name a nested position (``b'"payload":{"type":"'``).
    """
    start = raw.find(key, 0, within + len(key))
    if start < 0:
        return None
    value_start = start + len(key)
    value_end = raw.find(b'"', value_start, value_start + 64)
    if value_end < 0:
        return None
    return raw[value_start:value_end].decode("utf-8", "replace")


def parse_timestamp(value: object) -> datetime | None:
    """An ISO-8601 timestamp (``Z`` allowed) as an aware datetime; ``None`` if absent or invalid."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
