"""The full-text configuration must index Korean, Russian and English usefully."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from agents_memory.store.memories import NewMemory, ensure_user, insert_memories

DOCS = [
    ("en", "We discussed the migrations of inotify events in the capture daemon"),
    ("ru", "Мы обсуждали миграцию базы данных на новый сервер"),
    ("ko", "어제 데이터베이스 마이그레이션을 진행했습니다"),
    ("mixed", "pgvector를 설치하고 HNSW 인덱스를 만들었다"),
]


@pytest.fixture
def loaded(conn: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
    uid = ensure_user(conn, "tester")
    insert_memories(
        conn, uid, [NewMemory("claude-code", "user", text, external_uuid=key) for key, text in DOCS]
    )
    conn.commit()
    return conn


def _match(conn: psycopg.Connection[Any], tsquery: str) -> set[str]:
    rows = conn.execute(
        "SELECT external_uuid FROM memory WHERE fts @@ to_tsquery('agents_memory', %s)",
        (tsquery,),
    ).fetchall()
    return {r[0] for r in rows}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("migration", {"en"}),  # English stemming: migrations -> migrat
        ("event & daemon", {"en"}),
        ("миграция", {"ru"}),  # Russian stemming: миграцию / миграция -> миграц
        ("сервера", {"ru"}),
        ("БАЗА", {"ru"}),  # Cyrillic case folding needs the UTF-8 locale
        ("마이그레이션:*", {"ko"}),  # Korean particles: prefix match at query time
        ("데이터베이스", {"ko"}),
        ("pgvector:*", {"mixed"}),
        ("hnsw", {"mixed"}),
    ],
)
def test_fulltext_finds_korean_russian_and_english(
    loaded: psycopg.Connection[Any], query: str, expected: set[str]
) -> None:
    assert _match(loaded, query) == expected


def test_database_uses_the_builtin_utf8_locale(conn: psycopg.Connection[Any]) -> None:
    row = conn.execute(
        "SELECT pg_encoding_to_char(encoding), upper('привет'), lower('ПРИВЕТ') FROM pg_database"
        " WHERE datname = current_database()"
    ).fetchone()
    assert row == ("UTF8", "ПРИВЕТ", "привет")
