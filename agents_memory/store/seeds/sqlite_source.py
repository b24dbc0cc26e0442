"""An outside system's SQLite file, opened read-only, with what every reader of one needs
(claude-mem's :mod:`~agents_memory.store.seeds.claude_mem`, seed B's
:mod:`~agents_memory.store.seeds.seed_b`): one rule for opening it and refusing a file that is
not the system's in one line."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import ClassVar, Self
from urllib.parse import quote

from agents_memory.errors import DatabaseError


class SQLiteSource:
    """An open, read-only connection to a system's SQLite file (``?mode=ro``)."""

    LABEL: ClassVar[str] = "SQLite"
    """The system's name, as a refusal says it ("no claude-mem database at …")."""
    REQUIRED: ClassVar[str] = "sqlite_master"
    """A table every file of the system has: a file without it is refused."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    @classmethod
    def open(cls, path: Path) -> Self:
        """Open ``path`` read-only; a file without :attr:`REQUIRED` is refused in one line."""
        if not path.is_file():
            raise DatabaseError(f"no {cls.LABEL} database at {path}")
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            raise DatabaseError(f"{path} is not a readable SQLite database: {exc}") from None
        source = cls(conn, path)
        if not source.has_table(cls.REQUIRED):
            conn.close()
            raise DatabaseError(
                f"{path} is not a {cls.LABEL} database (it has no {cls.REQUIRED} table)"
            )
        return source

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def columns(self, table: str) -> set[str]:
        return {str(r[1]) for r in self._conn.execute(f"PRAGMA table_info({table})")}

    def has_table(self, table: str) -> bool:
        row = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        return row is not None
