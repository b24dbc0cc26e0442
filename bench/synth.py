"""Deterministic synthetic transcripts in each client's on-disk format, modeled on
``tests/fixtures/transcripts`` (tool calls, token counts, injected context and other records the
adapters must skip are interleaved, as in real files).

``write_platform(home, platform, turns, seed)`` writes files under ``home`` where the adapter looks
for them and returns how many conversational turns (user + assistant texts) they hold.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

TURNS_PER_SESSION = 200
BASE = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

_WORDS = (
    "the", "capture", "daemon", "cursor", "advances", "after", "each", "batch", "while", "the",
    "search", "index", "keeps", "pace", "with", "new", "rows", "from", "every", "client", "so",
    "that", "a", "later", "session", "can", "recall", "what", "was", "decided", "about", "the",
    "migration", "schema", "retries", "timeouts", "pool", "sizes", "embeddings", "fallback",
    "threshold", "and", "the", "brief", "we", "should", "refactor", "parser", "tests", "fixture",
    "offsets", "redaction", "rules", "project", "tags", "hooks", "install", "plan", "systemd",
    "unit", "docker", "compose", "pytest", "failing", "assertion", "traceback", "import", "error",
    "module", "config", "environment", "variable", "postgres", "vector", "halfvec", "hnsw", "gin",
    "tsvector", "ranking", "recency",
)  # fmt: skip
_FILES = ("src/app/main.py", "agents_memory/store/search.py", "tests/test_api.py", "README.md")
_SECRETS = ("sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2, "ghp_" + "Z9y8X7w6V5u4T3s2R1q0" * 2)


def text(rng: random.Random, n: int) -> str:
    """A realistic-looking turn: words, sometimes a path, a code span or a secret to redact."""
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 60))]
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), rng.choice(_FILES) + f":{rng.randint(1, 900)}")
    if rng.random() < 0.1:
        words.append("```python\nfor row in rows:\n    total += row.size\n```")
    if rng.random() < 0.02:
        words.append("token " + rng.choice(_SECRETS))
    return f"[{n}] " + " ".join(words)


def _ts(n: int) -> str:
    return (
        (BASE + timedelta(seconds=7 * n)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


def _j(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


# --- one session per platform: returns (lines, turns) ---------------------------------------


def _claude(rng: random.Random, sid: str, start: int, turns: int) -> tuple[list[str], int]:
    out, made, parent = [], 0, None
    for k in range(turns // 2):
        n = start + 2 * k
        base = {
            "isSidechain": False,
            "userType": "external",
            "cwd": "/work/proj",
            "sessionId": sid,
            "version": "2.1.332",
            "gitBranch": "main",
        }
        uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        out.append(
            _j(
                {
                    **base,
                    "parentUuid": parent,
                    "type": "user",
                    "message": {"role": "user", "content": text(rng, n)},
                    "uuid": uid,
                    "timestamp": _ts(n),
                }
            )
        )
        aid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if rng.random() < 0.3:  # a tool round trip the adapter skips
            tid = f"toolu_{rng.getrandbits(48):012x}"
            out.append(
                _j(
                    {
                        **base,
                        "parentUuid": uid,
                        "type": "assistant",
                        "message": {
                            "model": "claude-opus-4-6",
                            "id": f"msg_{n}t",
                            "type": "message",
                            "role": "assistant",
                            "content": [
                                {
                                    "type": "tool_use",
                                    "id": tid,
                                    "name": "Read",
                                    "input": {"file_path": "/work/proj/" + rng.choice(_FILES)},
                                }
                            ],
                        },
                        "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                        "timestamp": _ts(n),
                    }
                )
            )
            out.append(
                _j(
                    {
                        **base,
                        "parentUuid": uid,
                        "type": "user",
                        "message": {
                            "role": "user",
                            "content": [
                                {
                                    "type": "tool_result",
                                    "tool_use_id": tid,
                                    "content": "1\timport os\n2\timport sys\n" * 5,
                                }
                            ],
                        },
                        "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                        "timestamp": _ts(n),
                    }
                )
            )
        out.append(
            _j(
                {
                    **base,
                    "parentUuid": uid,
                    "type": "assistant",
                    "message": {
                        "model": "claude-opus-4-6",
                        "id": f"msg_{n}",
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "text", "text": text(rng, n + 1)}],
                        "stop_reason": None,
                        "usage": {"input_tokens": 12, "output_tokens": 80},
                    },
                    "requestId": f"req_{n}",
                    "uuid": aid,
                    "timestamp": _ts(n + 1),
                }
            )
        )
        parent = aid
        made += 2
    return out, made


def _codex(rng: random.Random, sid: str, start: int, turns: int) -> tuple[list[str], int]:
    out = [
        _j(
            {
                "timestamp": _ts(start),
                "type": "session_meta",
                "payload": {
                    "id": sid,
                    "timestamp": _ts(start),
                    "cwd": "/work/proj",
                    "originator": "codex_cli_rs",
                    "cli_version": "0.39.0",
                    "instructions": None,
                    "git": {"commit_hash": "0" * 40, "branch": "main"},
                },
            }
        ),
        _j(
            {
                "timestamp": _ts(start),
                "type": "turn_context",
                "payload": {
                    "cwd": "/work/proj",
                    "approval_policy": "never",
                    "model": "gpt-5-codex",
                    "effort": "high",
                    "summary": "auto",
                },
            }
        ),
    ]
    made = 0
    for k in range(turns // 2):
        n = start + 2 * k
        u, a = text(rng, n), text(rng, n + 1)
        out.append(
            _j(
                {
                    "timestamp": _ts(n),
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": u}],
                    },
                }
            )
        )
        out.append(
            _j(
                {
                    "timestamp": _ts(n),
                    "type": "event_msg",
                    "payload": {"type": "user_message", "message": u, "kind": "plain"},
                }
            )
        )
        if rng.random() < 0.3:
            out.append(
                _j(
                    {
                        "timestamp": _ts(n),
                        "type": "response_item",
                        "payload": {
                            "type": "function_call",
                            "name": "shell",
                            "call_id": f"call_{n}",
                            "arguments": json.dumps({"command": ["bash", "-lc", "ls"]}),
                        },
                    }
                )
            )
            out.append(
                _j(
                    {
                        "timestamp": _ts(n),
                        "type": "response_item",
                        "payload": {
                            "type": "function_call_output",
                            "call_id": f"call_{n}",
                            "output": json.dumps(
                                {"output": "a.py\nb.py\n", "metadata": {"exit_code": 0}}
                            ),
                        },
                    }
                )
            )
        out.append(
            _j(
                {
                    "timestamp": _ts(n + 1),
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": a}],
                    },
                }
            )
        )
        out.append(
            _j(
                {
                    "timestamp": _ts(n + 1),
                    "type": "event_msg",
                    "payload": {"type": "agent_message", "message": a},
                }
            )
        )
        out.append(
            _j(
                {
                    "timestamp": _ts(n + 1),
                    "type": "event_msg",
                    "payload": {
                        "type": "token_count",
                        "info": {
                            "total_token_usage": {
                                "input_tokens": 5645,
                                "output_tokens": 810,
                                "total_tokens": 6455,
                            }
                        },
                    },
                }
            )
        )
        made += 2
    return out, made


def _gemini(rng: random.Random, sid: str, start: int, turns: int) -> tuple[list[str], int]:
    out = [
        _j(
            {
                "sessionId": sid,
                "projectHash": "05" * 32,
                "startTime": _ts(start),
                "lastUpdated": _ts(start),
                "kind": "main",
            }
        )
    ]
    made = 0
    for k in range(turns // 2):
        n = start + 2 * k
        out.append(
            _j(
                {
                    "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                    "timestamp": _ts(n),
                    "type": "user",
                    "content": [{"text": text(rng, n)}],
                }
            )
        )
        out.append(_j({"$set": {"lastUpdated": _ts(n)}}))
        out.append(
            _j(
                {
                    "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                    "timestamp": _ts(n + 1),
                    "type": "gemini",
                    "content": text(rng, n + 1),
                    "thoughts": [],
                    "tokens": {"input": 9821, "output": 12, "cached": 0, "total": 9833},
                    "model": "gemini-3.8-flash",
                }
            )
        )
        out.append(_j({"$set": {"lastUpdated": _ts(n + 1)}}))
        made += 2
    return out, made


def _grok(rng: random.Random, sid: str, start: int, turns: int) -> tuple[list[str], int]:
    out = [
        _j({"type": "system", "content": "You are Grok, an interactive CLI tool."}),
        _j(
            {
                "type": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "<user_info>\nOS Version: linux\n"
                        "Workspace Path: /work/proj\n</user_info>",
                    }
                ],
                "synthetic_reason": "environment_context",
            }
        ),
    ]
    made = 0
    for k in range(turns // 2):
        n = start + 2 * k
        out.append(
            _j(
                {
                    "type": "user",
                    "content": [{"type": "text", "text": text(rng, n)}],
                    "prompt_index": k,
                }
            )
        )
        if rng.random() < 0.3:
            out.append(
                _j(
                    {
                        "type": "reasoning",
                        "id": f"rs_{n}",
                        "summary": [{"type": "summary_text", "text": "thinking"}],
                        "status": "completed",
                    }
                )
            )
            out.append(_j({"type": "tool_result", "tool_call_id": f"c{n}", "content": "ok\n"}))
        out.append(_j({"type": "assistant", "content": text(rng, n + 1), "model_id": "grok-4.5"}))
        made += 2
    return out, made


def _antigravity(rng: random.Random, sid: str, start: int, turns: int) -> tuple[list[str], int]:
    out, step, made = [], 0, 0
    for k in range(turns // 2):
        n = start + 2 * k
        extra = (
            (
                "\n<USER_SETTINGS_CHANGE>\nThe user changed setting `Model Selection` from None"
                " to Gemini 3.5 Flash (Medium).\n</USER_SETTINGS_CHANGE>"
            )
            if k == 0
            else ""
        )
        out.append(
            _j(
                {
                    "step_index": step,
                    "source": "USER_EXPLICIT",
                    "type": "USER_INPUT",
                    "status": "DONE",
                    "created_at": _ts(n)[:19] + "Z",
                    "content": f"<USER_REQUEST>\n{text(rng, n)}\n</USER_REQUEST>{extra}",
                }
            )
        )
        step += 1
        if rng.random() < 0.3:
            out.append(
                _j(
                    {
                        "step_index": step,
                        "source": "MODEL",
                        "type": "RUN_COMMAND",
                        "status": "DONE",
                        "created_at": _ts(n)[:19] + "Z",
                        "content": "The command completed successfully.\nOutput:\na.txt\n",
                    }
                )
            )
            step += 1
        out.append(
            _j(
                {
                    "step_index": step,
                    "source": "MODEL",
                    "type": "PLANNER_RESPONSE",
                    "status": "DONE",
                    "created_at": _ts(n + 1)[:19] + "Z",
                    "thinking": "Summarizing.",
                    "content": text(rng, n + 1),
                }
            )
        )
        step += 1
        made += 2
    return out, made


def _path(home: Path, platform: str, sid: str, i: int) -> Path:
    if platform == "claude-code":
        return home / ".claude/projects/-work-proj" / f"{sid}.jsonl"
    if platform == "codex-cli":
        return (
            home / f".codex/sessions/2026/01/05/rollout-2026-01-05T09-00-{i % 60:02d}-{sid}.jsonl"
        )
    if platform == "gemini-cli":
        return home / f".gemini/tmp/proj/chats/session-2026-01-05T09-00-{sid[:8]}.jsonl"
    if platform == "grok":
        return home / f".grok/sessions/%2Fwork%2Fproj/{sid}/chat_history.jsonl"
    return home / f".gemini/antigravity/brain/{sid}/.system_generated/logs/transcript_full.jsonl"


_WRITERS: dict[str, Callable[[random.Random, str, int, int], tuple[list[str], int]]] = {
    "claude-code": _claude,
    "codex-cli": _codex,
    "gemini-cli": _gemini,
    "grok": _grok,
    "antigravity": _antigravity,
}


PLATFORMS = tuple(_WRITERS)
"""The clients this module writes transcripts for."""


def write_platform(home: Path, platform: str, turns: int, seed: int = 0) -> tuple[int, int]:
    """Write ``turns`` turns of ``platform`` under ``home``; returns (turns, bytes)."""
    rng = random.Random(f"{platform}/{seed}")
    made = size = 0
    i = 0
    while made < turns:
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        lines, n = _WRITERS[platform](rng, sid, made, min(TURNS_PER_SESSION, turns - made))
        path = _path(home, platform, sid, i)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = "".join(lines).encode()
        path.write_bytes(data)
        if platform == "grok":
            (path.parent / "summary.json").write_text(
                json.dumps(
                    {
                        "info": {"id": sid, "cwd": "/work/proj"},
                        "current_model_id": "grok-4.5",
                        "created_at": _ts(made),
                        "updated_at": _ts(made + n),
                    }
                ),
                encoding="utf-8",
            )
        made += n
        size += len(data)
        i += 1
    return made, size
