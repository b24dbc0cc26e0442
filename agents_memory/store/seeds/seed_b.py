"""Reading a unified-memory-mcp database (unified-memory-mcp's SQLite file), read-only.

The file is opened through a ``file:…?mode=ro`` URI: nothing here can change it, and a path
that is not there is an error rather than a new empty database. Its tables are described in
``reference/seeds.md`` B.3; an older file lacks ``owner``, ``valid_until`` and
``superseded_by``, which read as their defaults.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

from agents_memory.errors import DatabaseError
from agents_memory.store.seeds.sqlite_source import SQLiteSource


@dataclass(frozen=True, slots=True)
class SeedBMessage:
    id: int
    session_id: str
    owner: str
    role: str
    content: str
    created_at: float
    source: str
    externalized_ref: str | None


@dataclass(frozen=True, slots=True)
class SeedBFact:
    id: int
    owner: str
    category: str
    name: str
    body: str
    importance: float
    created_at: float
    updated_at: float
    valid_until: float
    superseded_by: int


@dataclass(frozen=True, slots=True)
class SeedBVector:
    owner_table: str
    owner_id: int
    embedding: bytes
    model: str


_MESSAGE = {
    "id": None,
    "session_id": None,
    "owner": "''",
    "role": None,
    "content": None,
    "created_at": None,
    "source": "'unknown'",
    "externalized_ref": "NULL",
}
_FACT = {
    "id": None,
    "owner": "''",
    "category": None,
    "name": None,
    "body": None,
    "importance": "0.5",
    "created_at": None,
    "updated_at": "created_at",
    "valid_until": "0",
    "superseded_by": "0",
}
COUNTED_TABLES = ("um_summaries", "um_entities", "um_edges", "um_links")
"""unified-memory-mcp tables with no counterpart here: counted for the report, not read."""


class SeedBSource(SQLiteSource):
    """An open, read-only connection to a unified-memory-mcp SQLite file and its readers."""

    LABEL = "seed B"
    REQUIRED = "um_messages"

    def identity(self) -> str:
        """A short, stable name for this file's content (its oldest message and fact), the
        same for a copy of the file elsewhere."""
        first = self._conn.execute("SELECT min(id), min(created_at) FROM um_messages").fetchone()
        fact = (
            self._conn.execute("SELECT min(id), min(created_at) FROM um_facts").fetchone()
            if self.has_table("um_facts")
            else None
        )
        return hashlib.sha256(f"{first}|{fact}".encode()).hexdigest()[:12]

    def meta(self) -> dict[str, str]:
        if not self.has_table("um_meta"):
            return {}
        return {str(k): str(v) for k, v in self._conn.execute("SELECT key, value FROM um_meta")}

    def count(self, table: str) -> int:
        if not self.has_table(table):
            return 0
        row = self._conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row else 0

    def _select(self, table: str, wanted: dict[str, str | None]) -> str:
        present = self.columns(table)
        parts = []
        for name, default in wanted.items():
            if name in present:
                parts.append(name)
            elif default is None:
                raise DatabaseError(f"the seed B table {table} has no column {name}")
            else:
                parts.append(f"{default} AS {name}")
        return f"SELECT {', '.join(parts)} FROM {table}"

    def messages(self, *, batch: int = 1000) -> Iterator[list[SeedBMessage]]:
        cur = self._conn.execute(self._select("um_messages", _MESSAGE) + " ORDER BY id")
        while rows := cur.fetchmany(batch):
            yield [SeedBMessage(*row) for row in rows]

    def facts(self) -> list[SeedBFact]:
        if not self.has_table("um_facts"):
            return []
        rows = self._conn.execute(self._select("um_facts", _FACT) + " ORDER BY id").fetchall()
        return [SeedBFact(*row) for row in rows]

    def vectors(self, owner_table: str, ids: list[int]) -> dict[int, SeedBVector]:
        """The stored vectors of ``owner_table`` rows ``ids`` (one per row: the last wins)."""
        if not ids or not self.has_table("um_vectors"):
            return {}
        marks = ", ".join("?" * len(ids))
        rows = self._conn.execute(
            "SELECT owner_table, owner_id, embedding, model FROM um_vectors"
            f" WHERE owner_table = ? AND owner_id IN ({marks}) ORDER BY id",
            (owner_table, *ids),
        ).fetchall()
        return {int(r[1]): SeedBVector(str(r[0]), int(r[1]), bytes(r[2]), str(r[3])) for r in rows}
