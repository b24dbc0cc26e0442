"""Shared pieces of the worker, embedder and reembed tests: rows, embedders, subprocesses."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from agents_memory.coldpath.base import JobContext
from agents_memory.config import Settings
from agents_memory.embeddings.base import Embedder, FloatArray
from agents_memory.errors import EmbeddingUnavailableError
from agents_memory.store.database import EmbeddingSpec
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.conftest import TEST_DIM, TEST_MODEL
from tests.embeddings.fake_openai import FakeEmbeddingServer

REPO = Path(__file__).resolve().parents[2]


def add_rows(
    conn: psycopg.Connection[Any],
    texts: Sequence[str],
    *,
    user: str = "tester",
    has_vector: bool = True,
) -> list[int]:
    """Insert one user row per text (no vectors); returns the ids in order."""
    uid = ensure_user(conn, user)
    stamp = time.time_ns()
    rows = [
        NewMemory("claude-code", "user", text, external_uuid=f"t-{stamp}-{i}")
        for i, text in enumerate(texts)
    ]
    counts = insert_memories(conn, uid, rows, has_vector=has_vector)
    conn.commit()
    return sorted(counts.ids)


def count_embedded(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT count(*) FROM memory WHERE embedding IS NOT NULL").fetchone()
    conn.commit()
    assert row is not None
    return int(row[0])


def wait_until(check: Callable[[], bool], *, timeout: float = 15.0, step: float = 0.02) -> float:
    """Poll ``check`` until it holds; returns the seconds it took (fails after ``timeout``)."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(step)
    return time.monotonic() - start


class ScriptedEmbedder(Embedder):
    """Deterministic vectors from a text hash; raises for texts containing ``fail_marker``
    and for everything while ``down`` is set. Records every batch it was given."""

    def __init__(
        self, *, dim: int = TEST_DIM, model: str = TEST_MODEL, fail_marker: str = "POISON"
    ) -> None:
        super().__init__(EmbeddingSpec(model, dim), batch_size=64)
        self.fail_marker = fail_marker
        self.down = False
        self.batches: list[list[str]] = []

    def _embed_batch(self, texts: list[str], *, is_query: bool) -> FloatArray:
        self.batches.append(list(texts))
        if self.down:
            raise EmbeddingUnavailableError("backend down (scripted)")
        if any(self.fail_marker in t for t in texts):
            raise EmbeddingUnavailableError("the backend choked on this text (scripted)")
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            rows.append(np.random.default_rng(seed).standard_normal(self.spec.dim))
        return np.asarray(rows, dtype=np.float32)

    @property
    def seen(self) -> list[str]:
        return [t for batch in self.batches for t in batch]


class SlowEmbeddingServer(FakeEmbeddingServer):
    """The fake embeddings endpoint, answering each request after ``delay`` seconds."""

    delay: float = 0.0
    _gate = threading.Event()

    def response(self, body: dict[str, Any]) -> dict[str, Any]:
        self._gate.wait(self.delay)
        return super().response(body)


def job_context(
    conn: psycopg.Connection[Any],
    settings: Settings,
    embedder: Embedder | None,
    *,
    now: datetime | None = None,
    drain: bool = False,
    batch_size: int = 5,
) -> JobContext:
    return JobContext(
        conn=conn,
        settings=settings,
        user_id=ensure_user(conn, settings.user_name),
        now=now or datetime.now(UTC),
        llm=None,
        embedder=embedder,
        batch_size=batch_size,
        drain=drain,
    )


def cli_env(db_url: str, tmp_path: Path, embed_url: str, **extra: str) -> dict[str, str]:
    """Environment for ``python -m agents_memory.cli.coldpath`` against the test database,
    embedding through the fake OpenAI-compatible server (384 dims, the stamped model)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "LLM_", "COLD_"))}
    env.update(
        DATABASE_URL=db_url,
        MEMORY_CONFIG_PATH=str(tmp_path / "absent.env"),
        MEMORY_DATA_DIR=str(tmp_path / "data"),
        USER_NAME="tester",
        DEVICE_NAME="test-device",
        EMBEDDING_BACKEND="openai",
        EMBEDDING_MODEL=TEST_MODEL,
        EMBEDDING_DIM=str(TEST_DIM),
        EMBEDDING_BASE_URL=embed_url,
        COLD_PATH_WARMUP_SEC="0",
        PYTHONUNBUFFERED="1",
    )
    env.pop("LOCAL_LLM_BASE_URL", None)
    env.update(extra)
    return env


def spawn(args: Sequence[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agents_memory.cli.coldpath", *args],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop_process(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Kill ``proc`` if it still runs; its output."""
    if proc.poll() is None:
        proc.kill()
    out, err = proc.communicate(timeout=10)
    return out, err
