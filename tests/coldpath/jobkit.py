"""What the Cold Path job tests share: a scripted LLM (our own seam), a job context, rows,
real git repositories, and the real OpenAI-compatible client against the fake HTTP server."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.coldpath.base import JobContext
from agents_memory.coldpath.replies import Reply as ReplyModel
from agents_memory.coldpath.replies import ReplyT, reply_schema
from agents_memory.config import Settings
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories

NOW = datetime(2025, 6, 18, 12, 0, tzinfo=UTC)  # a Wednesday

Reply = dict[str, Any] | None | Exception


@dataclass
class Call:
    role: str
    system: str
    user: str
    reply: type[ReplyModel]
    max_tokens: int

    @property
    def schema(self) -> dict[str, Any]:
        """The JSON schema the real backend would send for this call."""
        return reply_schema(self.reply)


@dataclass
class ScriptedLLM:
    """Answers from ``reply(role, user)``, validated into the reply model as the real backend
    does (an invalid scripted answer fails the test); an ``Exception`` reply is raised (a
    broken backend)."""

    reply: Callable[[str, str], Reply]
    available: bool = True
    calls: list[Call] = field(default_factory=list)

    def complete(
        self,
        role: str,
        reply: type[ReplyT],
        *,
        system: str,
        user: str,
        max_tokens: int = 256,
    ) -> ReplyT | None:
        self.calls.append(Call(role, system, user, reply, max_tokens))
        answer = self.reply(role, user)
        if isinstance(answer, Exception):
            raise answer
        return None if answer is None else reply.model_validate(answer)

    def roles(self) -> list[str]:
        return [c.role for c in self.calls]


def answers(value: Reply) -> ScriptedLLM:
    return ScriptedLLM(lambda _role, _user: value)


def context(
    conn: psycopg.Connection[Any],
    settings: Settings,
    *,
    llm: Any = None,
    now: datetime = NOW,
    batch_size: int = 5,
    drain: bool = True,
) -> JobContext:
    user_id = ensure_user(conn, settings.user_name)
    conn.commit()
    return JobContext(
        conn=conn,
        settings=settings,
        user_id=user_id,
        now=now,
        llm=llm,
        embedder=None,
        batch_size=batch_size,
        drain=drain,
    )


_seq = iter(range(1, 10**9))


def row(
    message: str,
    *,
    role: str = "user",
    age_days: float = 0.0,
    git_root: str | None = None,
    git_remote: str | None = None,
    cwd: str | None = None,
    pinned: bool = False,
    platform: str = "claude-code",
) -> NewMemory:
    return NewMemory(
        agent_platform=platform,
        role=role,  # type: ignore[arg-type]
        message=message,
        external_uuid=f"job-{next(_seq)}",
        message_at=NOW - timedelta(days=age_days),
        agent_model="model-x" if role == "assistant" else None,
        git_root=git_root,
        git_remote=git_remote,
        cwd=cwd,
        is_pinned=pinned,
        device_name="test-device",
    )


def add(conn: psycopg.Connection[Any], settings: Settings, *rows: NewMemory) -> list[int]:
    """Insert ``rows`` for the settings' user, in order; returns their ids."""
    user_id = ensure_user(conn, settings.user_name)
    insert_memories(conn, user_id, rows)
    found = dict(
        conn.execute(
            "SELECT external_uuid, id FROM memory WHERE external_uuid = ANY(%s)",
            ([r.external_uuid for r in rows],),
        ).fetchall()
    )
    conn.commit()
    return [int(found[r.external_uuid]) for r in rows]


def make_tag(
    conn: psycopg.Connection[Any],
    name: str,
    *,
    git_root: str | None = None,
    git_remote: str | None = None,
    kind: str | None = None,
    alias_of: int | None = None,
) -> int:
    found = conn.execute(
        "INSERT INTO project_tags (name, git_root, git_remote, kind, alias_of)"
        " VALUES (%s, %s, %s, %s, %s) RETURNING id",
        (name, git_root, git_remote, kind, alias_of),
    ).fetchone()
    assert found is not None
    conn.commit()
    return int(found[0])


def tagged(conn: psycopg.Connection[Any], memory_id: int) -> tuple[Any, ...]:
    """(p_tag name, d_tag, tag_processed, cold_error) of a row."""
    found = conn.execute(
        "SELECT t.name, m.d_tag, m.tag_processed, m.cold_error FROM memory m"
        " LEFT JOIN project_tags t ON t.id = m.p_tag_id WHERE m.id = %s",
        (memory_id,),
    ).fetchone()
    assert found is not None
    return tuple(found)


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def git_repo(parent: Path, name: str, remote: str | None = None) -> Path:
    """A real repository with one commit (and ``origin`` when ``remote`` is given)."""
    repo = parent / name
    repo.mkdir(parents=True)
    git("init", "-q", cwd=repo)
    (repo / "README.md").write_text("hello\n", encoding="utf-8")
    git("add", "README.md", cwd=repo)
    git("commit", "-q", "-m", "init", cwd=repo)
    if remote:
        git("remote", "add", "origin", remote, cwd=repo)
    return repo


@contextmanager
def real_llm(make_settings: Any, db_url: str, **overrides: Any) -> Iterator[tuple[Any, Any]]:
    """(fake server, the real OpenAI-compatible client pointed at it)."""
    from agents_memory.coldpath.llm import DbUsageRecorder
    from agents_memory.coldpath.llm_routing import create_llm
    from tests.coldpath.fake_llm import FakeLLMServer

    with FakeLLMServer() as server:
        settings = make_settings(
            database_url=db_url, local_llm_base_url=server.base_url, **overrides
        )
        llm = create_llm(settings, DbUsageRecorder(lambda: psycopg.connect(db_url)))
        assert llm is not None
        try:
            yield server, llm
        finally:
            llm.close()
