"""Seed B's SQLite schema as ``reference/seeds.md`` B.3 describes it, and realistic rows:
two sessions, Russian and Korean text, a system turn, a message moved to the archive file, a
secret, fact slots with a superseded and an expired value, persona traits, graph rows."""

from __future__ import annotations

import base64
import json
import sqlite3
import struct
from pathlib import Path

from tests.conftest import TEST_DIM, TEST_MODEL
from tests.seeds.seed_a_schema import SECRET

SCHEMA = """
CREATE TABLE um_messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,
    owner TEXT NOT NULL DEFAULT '', role TEXT NOT NULL, content TEXT NOT NULL,
    created_at REAL NOT NULL, source TEXT NOT NULL DEFAULT 'unknown', externalized_ref TEXT);
CREATE TABLE um_summaries (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,
    owner TEXT NOT NULL DEFAULT '', depth INTEGER NOT NULL DEFAULT 0, body TEXT NOT NULL,
    covers_from INTEGER, covers_to INTEGER, superseded_by INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL);
CREATE TABLE um_facts (id INTEGER PRIMARY KEY, owner TEXT NOT NULL DEFAULT '',
    category TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL,
    importance REAL NOT NULL DEFAULT 0.5, created_at REAL NOT NULL, updated_at REAL NOT NULL,
    valid_until REAL NOT NULL DEFAULT 0, superseded_by INTEGER NOT NULL DEFAULT 0);
CREATE TABLE um_vectors (id INTEGER PRIMARY KEY, owner_table TEXT NOT NULL,
    owner_id INTEGER NOT NULL, embedding BLOB NOT NULL, model TEXT NOT NULL,
    owner TEXT NOT NULL DEFAULT '');
CREATE TABLE um_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE um_entities (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
    display TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL, owner TEXT NOT NULL DEFAULT '',
    UNIQUE(name, owner));
CREATE TABLE um_edges (id INTEGER PRIMARY KEY,
    subject_id INTEGER NOT NULL REFERENCES um_entities(id), predicate TEXT NOT NULL,
    object_id INTEGER NOT NULL REFERENCES um_entities(id), session_id TEXT NOT NULL DEFAULT '',
    owner TEXT NOT NULL DEFAULT '', fact_id INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL, valid_until REAL NOT NULL DEFAULT 0);
CREATE TABLE um_links (id INTEGER PRIMARY KEY, src_table TEXT NOT NULL, src_id INTEGER NOT NULL,
    dst_table TEXT NOT NULL, dst_id INTEGER NOT NULL, rel TEXT NOT NULL,
    weight REAL NOT NULL DEFAULT 1.0, owner TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL,
    valid_until REAL NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX ux_um_facts_live ON um_facts(owner, category, name) WHERE valid_until = 0;
"""

T0 = 1_760_000_000.0  # 2025-10-09
RUSSIAN = "Давай хранить факты в слотах: один живой факт на слот"
KOREAN = "세션 요약은 나중에 하자"


def blob(first: float) -> bytes:
    return struct.pack(f"<{TEST_DIM}f", first, *([0.25] * (TEST_DIM - 1)))


def build(path: Path, *, model: str = TEST_MODEL) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA)
        conn.executemany(
            "INSERT INTO um_meta (key, value) VALUES (?, ?)",
            [("embedding_model", model), ("embedding_dim", str(TEST_DIM)), ("schema_version", "1")],
        )
        conn.executemany(
            "INSERT INTO um_messages (id, session_id, owner, role, content, created_at, source,"
            " externalized_ref) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (1, "sess-ru", "", "user", RUSSIAN, T0, "claude-code", None),
                (
                    2,
                    "sess-ru",
                    "",
                    "assistant",
                    "Сделано: mem_fact заменяет значение",
                    T0 + 5,
                    "claude-code",
                    None,
                ),
                (3, "sess-ko", "alice", "user", KOREAN, T0 + 60, "unknown", None),
                (
                    4,
                    "sess-ko",
                    "alice",
                    "system",
                    "You are a helpful agent",
                    T0 + 61,
                    "unknown",
                    None,
                ),
                (
                    5,
                    "sess-old",
                    "",
                    "user",
                    "[archived]",
                    T0 - 86400 * 400,
                    "hermes",
                    "archive.db#um_messages:5",
                ),
                (
                    6,
                    "sess-ru",
                    "",
                    "user",
                    f"token {SECRET} for deploy",
                    T0 + 10,
                    "claude-code",
                    None,
                ),
            ],
        )
        conn.executemany(
            "INSERT INTO um_vectors (owner_table, owner_id, embedding, model) VALUES (?, ?, ?, ?)",
            [("um_messages", 1, blob(0.5), model), ("um_messages", 6, blob(0.7), model)],
        )
        facts = [
            # id, category, name, body, importance, created, updated, valid_until, superseded_by
            (1, "user", "editor", "vim", 0.5, T0, T0, T0 + 100, 2),
            (2, "user", "editor", "neovim", 0.9, T0 + 100, T0 + 100, 0, 0),
            (3, "project", "deadline", "релиз в пятницу", 0.5, T0, T0, T0 + 200, 0),
            (4, "persona", "tone", "warm", 0.5, T0, T0, T0 + 50, 5),
            (5, "persona", "tone", "concise", 0.5, T0 + 50, T0 + 50, 0, 0),
            (6, "persona", "lang", "русский", 0.5, T0, T0, 0, 0),
        ]
        conn.executemany(
            "INSERT INTO um_facts (id, owner, category, name, body, importance, created_at,"
            " updated_at, valid_until, superseded_by) VALUES (?, '', ?, ?, ?, ?, ?, ?, ?, ?)",
            facts,
        )
        conn.execute(
            "INSERT INTO um_summaries (session_id, body, covers_from, covers_to, created_at)"
            " VALUES ('sess-ru', 'talked about slots', 1, 2, ?)",
            (T0 + 20,),
        )
        conn.executemany(
            "INSERT INTO um_entities (id, name, display, created_at) VALUES (?, ?, ?, ?)",
            [(1, "иван", "Иван", T0), (2, "neovim", "Neovim", T0)],
        )
        conn.execute(
            "INSERT INTO um_edges (subject_id, predicate, object_id, fact_id, created_at)"
            " VALUES (1, 'uses', 2, 2, ?)",
            (T0,),
        )
        conn.execute(
            "INSERT INTO um_links (src_table, src_id, dst_table, dst_id, rel, created_at)"
            " VALUES ('um_messages', 2, 'um_facts', 2, 'supports', ?)",
            (T0,),
        )


CONTENT_TABLES = (
    "um_messages",
    "um_summaries",
    "um_facts",
    "um_entities",
    "um_edges",
    "um_links",
    "um_vectors",
    "um_meta",
)
"""The tables seed B's exporter writes, in its order (``export.py`` ``CONTENT_TABLES``)."""


def dump(db: Path, out: Path, *, complete: bool = True) -> None:
    """Write the SQLite file ``db`` as seed B's ``mem_doctor export`` does (format
    ``um-export-jsonl``): a header, one ``{"table", "row"}`` line per row with BLOBs in
    base64 and, from the exporter that marks it ``complete``, a closing line."""
    with sqlite3.connect(db) as conn, out.open("w", encoding="utf-8") as f:
        counts = {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in CONTENT_TABLES
        }
        header: dict[str, object] = {
            "format": "um-export-jsonl",
            "schema_version": "1",
            "exported_at": T0 + 1000,
            "source_db": str(db),
            "counts": counts,
        }
        if complete:
            header["complete"] = True
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for table in CONTENT_TABLES:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            for values in conn.execute(f"SELECT * FROM {table}"):
                row = {
                    c: base64.b64encode(v).decode("ascii") if isinstance(v, bytes) else v
                    for c, v in zip(cols, values, strict=True)
                }
                f.write(json.dumps({"table": table, "row": row}, ensure_ascii=False) + "\n")
        if complete:
            f.write(json.dumps({"format": "um-export-jsonl-complete"}) + "\n")
