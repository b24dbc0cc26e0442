"""Reading a unified-memory-mcp JSONL dump (its ``mem_doctor export``), read-only, with the
same readers as its SQLite file (:class:`~agents_memory.store.seeds.seed_b.SeedBSource`).

The format (``um-export-jsonl``, schema version 1): a header line ``{"format":
"um-export-jsonl", "schema_version", "exported_at", "source_db", "counts"[, "complete"]}``,
then one ``{"table": <name>, "row": {...}}`` line per row of ``um_messages``,
``um_summaries``, ``um_facts``, ``um_entities``, ``um_edges``, ``um_links``, ``um_vectors``
(BLOBs base64) and ``um_meta``; a later exporter closes with ``{"format":
"um-export-jsonl-complete"}`` and says ``"complete": true`` in the header, so a cut file is
refused. The file is read twice, line by line: once to index it (facts, meta, counts, where
each message and vector line starts), then messages in batches and vectors by their offset,
so a large dump is never held in memory. A dump of a database names itself as that database
does (:meth:`identity`): importing both brings nothing twice.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from agents_memory.errors import DatabaseError
from agents_memory.store.seeds.seed_b import SeedBFact, SeedBMessage, SeedBVector

FORMAT: Final = "um-export-jsonl"
CLOSING: Final = "um-export-jsonl-complete"
SUPPORTED: Final = ("1",)
MAX_LINE_BYTES: Final = 16 * 1024 * 1024
"""A dump line longer than this is refused (seed B caps a text at 200,000 characters)."""

_TABLES: Final = (
    "um_messages",
    "um_summaries",
    "um_summary_sources",
    "um_facts",
    "um_entities",
    "um_edges",
    "um_links",
    "um_vectors",
    "um_meta",
    "um_fts",
    "um_vecidx",
)


def is_dump(path: Path) -> bool:
    """Whether ``path`` starts like a JSON text rather than a SQLite file."""
    with path.open("rb") as f:
        head = f.read(64).lstrip()
    return head.startswith(b"{")


@dataclass(slots=True)
class _Index:
    meta: dict[str, str] = field(default_factory=dict)
    facts: list[SeedBFact] = field(default_factory=list)
    messages: list[int] = field(default_factory=list)
    vectors: dict[tuple[str, int], int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    first_message: tuple[int, float] | None = None
    first_fact: tuple[int, float] | None = None
    closed: bool = False


class SeedBDump:
    """An open seed B JSONL dump and its readers (those of :class:`SeedBSource`)."""

    def __init__(self, file: IO[bytes], path: Path, index: _Index) -> None:
        self._file = file
        self.path = path
        self._index = index

    @classmethod
    def open(cls, path: Path) -> SeedBDump:
        """Open and index ``path``; a file that is not a complete ``um-export-jsonl`` dump of
        a known schema version is refused in one line."""
        if not path.is_file():
            raise DatabaseError(f"no seed B dump at {path}")
        file = path.open("rb")
        try:
            return cls(file, path, _index(file, path))
        except BaseException:
            file.close()
            raise

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> SeedBDump:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def identity(self) -> str:
        """The identity :meth:`SeedBSource.identity` gives the database this was dumped from
        (its oldest message and fact)."""
        first = self._index.first_message or (None, None)
        fact = self._index.first_fact or (None, None)
        return hashlib.sha256(f"{first}|{fact}".encode()).hexdigest()[:12]

    def meta(self) -> dict[str, str]:
        return dict(self._index.meta)

    def count(self, table: str) -> int:
        return self._index.counts.get(table, 0)

    def facts(self) -> list[SeedBFact]:
        return sorted(self._index.facts, key=lambda f: f.id)

    def messages(self, *, batch: int = 1000) -> Iterator[list[SeedBMessage]]:
        offsets = self._index.messages
        for start in range(0, len(offsets), batch):
            yield [_message(self._row(o)) for o in offsets[start : start + batch]]

    def vectors(self, owner_table: str, ids: list[int]) -> dict[int, SeedBVector]:
        """The dumped vectors of ``owner_table`` rows ``ids`` (one per row: the last wins)."""
        found: dict[int, SeedBVector] = {}
        for row_id in ids:
            offset = self._index.vectors.get((owner_table, row_id))
            if offset is None:
                continue
            row = self._row(offset)
            blob = _blob(row.get("embedding"))
            if blob:
                found[row_id] = SeedBVector(owner_table, row_id, blob, str(row.get("model") or ""))
        return found

    def _row(self, offset: int) -> dict[str, Any]:
        self._file.seek(offset)
        line = self._file.readline(MAX_LINE_BYTES + 1)
        row = json.loads(line)["row"]
        assert isinstance(row, dict)
        return row


def _index(file: IO[bytes], path: Path) -> _Index:
    header = _header(file, path)
    index = _Index()
    while True:
        offset = file.tell()
        line = file.readline(MAX_LINE_BYTES + 1)
        if not line:
            break
        if len(line) > MAX_LINE_BYTES:
            raise DatabaseError(f"{path}: a line at byte {offset} is over {MAX_LINE_BYTES} bytes")
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise DatabaseError(f"{path}: the line at byte {offset} is not JSON") from None
        if not isinstance(obj, dict):
            raise DatabaseError(f"{path}: the line at byte {offset} is not a JSON object")
        if obj.get("format") == CLOSING:
            index.closed = True
            continue
        table, row = obj.get("table"), obj.get("row")
        if table not in _TABLES or not isinstance(row, dict):
            raise DatabaseError(f"{path}: the line at byte {offset} is no known table's row")
        _take(index, str(table), row, offset)
    if header.get("complete") is True and not index.closed:
        raise DatabaseError(f"{path} is cut short: the dump's closing line is missing")
    return index


def _header(file: IO[bytes], path: Path) -> dict[str, Any]:
    line = file.readline(MAX_LINE_BYTES + 1)
    while line and not line.strip():
        line = file.readline(MAX_LINE_BYTES + 1)
    try:
        head = json.loads(line)
    except ValueError:
        head = None
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        why = "a single-JSON dump of seed B before v0.8" if isinstance(head, dict) else "not JSONL"
        raise DatabaseError(f"{path} is not a seed B JSONL dump ({FORMAT}): {why}")
    version = str(head.get("schema_version") or "")
    if version not in SUPPORTED:
        raise DatabaseError(
            f"{path}: seed B dump schema version {version!r}; this import reads {SUPPORTED}"
        )
    return head


def _take(index: _Index, table: str, row: dict[str, Any], offset: int) -> None:
    index.counts[table] = index.counts.get(table, 0) + 1
    if table == "um_messages":
        index.messages.append(offset)
        index.first_message = _first(index.first_message, row)
    elif table == "um_facts":
        index.facts.append(_fact(row))
        index.first_fact = _first(index.first_fact, row)
    elif table == "um_vectors":
        index.vectors[(str(row.get("owner_table")), int(row.get("owner_id") or 0))] = offset
    elif table == "um_meta":
        index.meta[str(row.get("key"))] = str(row.get("value"))


def _first(current: tuple[int, float] | None, row: dict[str, Any]) -> tuple[int, float]:
    """``(min(id), min(created_at))`` so far, as SQLite's ``min`` would give them."""
    row_id, created = int(row["id"]), float(row.get("created_at") or 0.0)
    if current is None:
        return row_id, created
    return min(current[0], row_id), min(current[1], created)


def _message(row: dict[str, Any]) -> SeedBMessage:
    return SeedBMessage(
        id=int(row["id"]),
        session_id=str(row.get("session_id") or ""),
        owner=str(row.get("owner") or ""),
        role=str(row.get("role") or ""),
        content=str(row.get("content") or ""),
        created_at=float(row.get("created_at") or 0.0),
        source=str(row.get("source") or "unknown"),
        externalized_ref=row.get("externalized_ref") or None,
    )


def _fact(row: dict[str, Any]) -> SeedBFact:
    created = float(row.get("created_at") or 0.0)
    return SeedBFact(
        id=int(row["id"]),
        owner=str(row.get("owner") or ""),
        category=str(row.get("category") or ""),
        name=str(row.get("name") or ""),
        body=str(row.get("body") or ""),
        importance=float(row["importance"]) if row.get("importance") is not None else 0.5,
        created_at=created,
        updated_at=float(row.get("updated_at") or created),
        valid_until=float(row.get("valid_until") or 0.0),
        superseded_by=int(row.get("superseded_by") or 0),
    )


def _blob(value: Any) -> bytes:
    """A dumped embedding (base64 text) as bytes; a broken one as nothing."""
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""
