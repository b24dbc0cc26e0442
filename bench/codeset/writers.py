"""One session as a Claude Code or Codex transcript, in the records of ``bench/synth.py`` (and
``tests/fixtures/transcripts``), with the session's own working directory and turn times."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.codeset.model import Session


def _ts(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _j(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def claude_lines(session: Session) -> list[str]:
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": session.cwd,
        "sessionId": session.sid,
        "version": "2.1.332",
        "gitBranch": "main",
    }
    out, parent = [], None
    for t in session.turns:
        uid = str(uuid.uuid5(uuid.NAMESPACE_URL, t.key))
        if t.role == "user":
            message: dict[str, Any] = {"role": "user", "content": t.text}
            extra: dict[str, Any] = {}
        else:
            message = {
                "model": "claude-opus-4-6",
                "id": f"msg_{uid[:12]}",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": t.text}],
                "stop_reason": None,
                "usage": {"input_tokens": 12, "output_tokens": 80},
            }
            extra = {"requestId": f"req_{uid[:12]}"}
        record = {**base, "parentUuid": parent, "type": t.role, "message": message}
        out.append(_j({**record, **extra, "uuid": uid, "timestamp": _ts(t.ts)}))
        parent = uid
    return out


def codex_lines(session: Session) -> list[str]:
    first = _ts(session.turns[0].ts)
    out = [
        _j(
            {
                "timestamp": first,
                "type": "session_meta",
                "payload": {
                    "id": session.sid,
                    "timestamp": first,
                    "cwd": session.cwd,
                    "originator": "codex_cli_rs",
                    "cli_version": "0.39.0",
                    "instructions": None,
                    "git": {"commit_hash": "0" * 40, "branch": "main"},
                },
            }
        ),
        _j(
            {
                "timestamp": first,
                "type": "turn_context",
                "payload": {"cwd": session.cwd, "approval_policy": "never", "model": "gpt-5-codex"},
            }
        ),
    ]
    for t in session.turns:
        ts = _ts(t.ts)
        if t.role == "user":
            item = {"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": t.text}]}  # fmt: skip
            event = {"type": "user_message", "message": t.text, "kind": "plain"}
        else:
            item = {"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": t.text}]}  # fmt: skip
            event = {"type": "agent_message", "message": t.text}
        out.append(_j({"timestamp": ts, "type": "response_item", "payload": item}))
        out.append(_j({"timestamp": ts, "type": "event_msg", "payload": event}))
    return out


def write_session(home: Path, session: Session) -> Path:
    start = session.turns[0].ts
    if session.platform == "claude-code":
        folder = home / ".claude/projects" / session.cwd.replace("/", "-")
        path, lines = folder / f"{session.sid}.jsonl", claude_lines(session)
    else:
        stamp = start.strftime("%Y-%m-%dT%H-%M-%S")
        folder = home / ".codex/sessions" / start.strftime("%Y/%m/%d")
        path, lines = folder / f"rollout-{stamp}-{session.sid}.jsonl", codex_lines(session)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    return path
