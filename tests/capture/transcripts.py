"""Writing realistic transcript lines for capture tests (Claude Code 2.1 and Codex shapes)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

BASE_TIME = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def claude_user(session: str, text: str, n: int, cwd: str = "/work/proj") -> bytes:
    record = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session,
        "version": "2.1.332",
        "gitBranch": "main",
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}/u/{n}")),
        "timestamp": (BASE_TIME + timedelta(seconds=n)).isoformat().replace("+00:00", "Z"),
    }
    return (json.dumps(record, ensure_ascii=False) + "\n").encode()


def claude_assistant(
    session: str, text: str, n: int, cwd: str = "/work/proj", model: str = "claude-opus-4-6"
) -> bytes:
    record = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session,
        "version": "2.1.332",
        "type": "assistant",
        "message": {
            "model": model,
            "id": f"msg_{session[:8]}_{n}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stop_reason": None,
        },
        "requestId": f"req_{n}",
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}/a/{n}")),
        "timestamp": (BASE_TIME + timedelta(seconds=n, milliseconds=500))
        .isoformat()
        .replace("+00:00", "Z"),
    }
    return (json.dumps(record, ensure_ascii=False) + "\n").encode()


def claude_exchange(session: str, n: int, cwd: str = "/work/proj") -> bytes:
    """One user turn and one assistant turn, both with text unique to ``n``."""
    return claude_user(
        session, f"question {n} about the capture daemon", n, cwd
    ) + claude_assistant(session, f"answer {n}: the cursor advances", n, cwd)


def claude_session_path(home: Path, session: str, project: str = "-work-proj") -> Path:
    path = home / ".claude" / "projects" / project / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def expected_texts(n_exchanges: int, start: int = 0) -> set[str]:
    texts: set[str] = set()
    for n in range(start, start + n_exchanges):
        texts.add(f"question {n} about the capture daemon")
        texts.add(f"answer {n}: the cursor advances")
    return texts
