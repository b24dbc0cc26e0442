"""An evaluation set whose answers live only in the agents' tool calls (issue 28).

``generate(n_sessions, seed)`` makes coding sessions of 12 projects in 3 languages, each a
fix of one topic (a bug in words, never the file's name): the agent greps for an identifier,
reads the file that defines it, edits a file, sometimes creates one, runs the topic's tests
and runs a step (a migration, a build, a deploy ...) that may fail with an error. The
assistant's prose never names a file, a command or an error ("Fixed — tests pass now.").
Every topic recurs in several projects and on several dates (confusable distractors); each
session asks one question of five kinds (the file changed, the error a step hit, the command
that runs the tests, where a new file was put, where an identifier is defined), the project
named in it, with the answer's action as gold. Even sessions are the tuning half, odd ones
held out.

``write(home, sessions)`` writes them in the clients' real on-disk formats: Claude Code
(``tool_use`` / ``tool_result`` blocks with ``toolUseResult``, tool-only responses) and Codex
CLI (``function_call`` shell calls with the 0.3x JSON outputs, ``custom_tool_call``
``apply_patch``), alternately, so the real adapters and the real backfill read them.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BASE = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
QUESTION_KINDS = ("edited", "error", "command", "created", "defined")
PROJECTS = (
    ("ledger", "py"), ("quokka", "ts"), ("harbor", "go"), ("tinsel", "py"),
    ("orchard", "ts"), ("beacon", "go"), ("mosaic", "py"), ("pylon", "ts"),
    ("sable", "py"), ("vireo", "go"), ("kestrel", "ts"), ("juniper", "py"),
)  # fmt: skip
TOPICS = (
    # (topic words, problem in words, area, stem, identifier)
    ("reconcile", "the nightly reconcile job double-counts refunds", "sync", "reconcile",
     "reconcile_batch"),
    ("invoice export", "invoice exports drop the last page of line items", "billing",
     "invoice_export", "render_invoice_rows"),
    ("webhook retry", "webhook deliveries are retried forever after a 410", "hooks",
     "webhook_retry", "next_delivery_at"),
    ("rate limiter", "the rate limiter lets bursts through after a restart", "limits",
     "rate_limiter", "take_token"),
    ("session cache", "logged-out users still get a cached session", "auth", "session_cache",
     "evict_session"),
    ("csv import", "the csv import chokes on quoted newlines", "importers", "csv_import",
     "split_records"),
    ("token refresh", "access tokens are refreshed twice in parallel", "auth", "token_refresh",
     "refresh_access_token"),
    ("search index", "renamed products still show their old name in search", "search",
     "search_index", "reindex_product"),
    ("email digest", "the weekly email digest is sent on Mondays and Tuesdays", "notify",
     "email_digest", "schedule_digest"),
    ("audit log", "the audit log misses deletions made by admins", "audit", "audit_log",
     "record_deletion"),
    ("pdf report", "pdf reports cut off wide tables", "reports", "pdf_report", "layout_table"),
    ("geo lookup", "addresses in Quebec resolve to the wrong province", "geo", "geo_lookup",
     "province_for"),
    ("feature flags", "feature flags ignore the per-tenant override", "flags", "feature_flags",
     "flag_enabled"),
    ("upload scanner", "large uploads skip the virus scan", "uploads", "upload_scanner",
     "scan_stream"),
    ("currency rounding", "totals in yen are rounded to two decimals", "money",
     "currency_rounding", "round_minor_units"),
    ("cron scheduler", "jobs scheduled for midnight run twice on DST change", "jobs",
     "cron_scheduler", "next_fire_time"),
)  # fmt: skip
STEPS = {
    # step words -> (command by language, error line by language)
    "staging migration": (
        {"py": "ENV=staging alembic upgrade head", "ts": "npx prisma migrate deploy --env staging",
         "go": "migrate -path db/migrations -database $STAGING_URL up"},
        {"py": 'psycopg.errors.DuplicateColumn: column "{col}" of relation "{table}" already '
               "exists",
         "ts": "Error: P3018 migration failed: relation \"{table}\" does not exist",
         "go": "error: Dirty database version {num}. Fix and force version."},
    ),
    "build": (
        {"py": "python -m build", "ts": "npm run build", "go": "go build ./..."},
        {"py": "error: invalid command 'bdist_wheel' in {table}",
         "ts": "error TS2339: Property '{col}' does not exist on type '{table}'",
         "go": "./{table}.go:{num}:2: undefined: {col}"},
    ),
    "deploy": (
        {"py": "./scripts/deploy.sh production", "ts": "npm run deploy -- --prod",
         "go": "make deploy ENV=prod"},
        {"py": "Error: health check failed for {table}: connection refused on port {num}",
         "ts": "Error: Deployment failed: {table} exceeded the {num} MB function size limit",
         "go": "Error: rollout of {table} stalled: readiness probe failed ({num} restarts)"},
    ),
    "seed script": (
        {"py": "python scripts/seed_demo.py", "ts": "npm run seed", "go": "go run ./cmd/seed"},
        {"py": "KeyError: '{col}'", "ts": "TypeError: Cannot read properties of undefined "
               "(reading '{col}')", "go": "panic: assignment to entry in nil map ({table})"},
    ),
    "lint": (
        {"py": "ruff check .", "ts": "npx eslint src", "go": "golangci-lint run"},
        {"py": "F821 Undefined name `{col}`", "ts": "error  '{col}' is defined but never used",
         "go": "{table}.go:{num}: ineffectual assignment to {col} (ineffassign)"},
    ),
}  # fmt: skip
_WORDS = ("amount", "tenant", "cursor", "payload", "region", "ledger_id", "quota", "batch")
_TABLES = ("payments", "invoices", "webhooks", "sessions", "uploads", "orders", "accounts")
_NARRATION = (
    "Let me look at how this works.", "Let me check the code first.",
    "I'll make the change now.", "Now let me run the tests.", "Fixed — tests pass now.",
    "Done. The fix is in and the tests pass.", "That should do it.",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: its id, kind and what it did."""

    key: str
    kind: str  # read, search, edit, write, shell
    path: str | None = None
    command: str | None = None
    pattern: str | None = None
    output: str = ""
    failed: bool = False
    text: str | None = None
    """The assistant's words in the same response (``None``: a tool-only response)."""


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    kind: str
    gold: str
    """The tool-call id of the action that answers it."""
    held_out: bool


@dataclass(slots=True)
class Session:
    id: str
    platform: str
    project: str
    lang: str
    start: datetime
    prompt: str
    calls: list[Call] = field(default_factory=list)
    closing: str = ""
    question: Question | None = None
    more: list[Session] = field(default_factory=list)
    """Further tasks written into this session's file, after its own (a long session)."""

    def tasks(self) -> list[Session]:
        return [self, *self.more]


def merged(sessions: list[Session], per_file: int) -> list[Session]:
    """``sessions`` grouped ``per_file`` to a file (the first one's id, client and project)."""
    out = []
    for i in range(0, len(sessions), per_file):
        head, *rest = sessions[i : i + per_file]
        same = [r for r in rest if r.platform == head.platform]
        out.append(Session(head.id, head.platform, head.project, head.lang, head.start,
                           head.prompt, head.calls, head.closing, head.question, same))  # fmt: skip
    return out


def _path(project: str, lang: str, area: str, stem: str, rng: random.Random) -> str:
    root = {"py": f"src/{project}", "ts": "src", "go": "internal"}[lang]
    ext = {"py": "py", "ts": "ts", "go": "go"}[lang]
    sub = rng.choice(("", "core/", "services/"))
    return f"{root}/{area}/{sub}{stem}.{ext}"


def _test_command(lang: str, area: str, stem: str) -> str:
    camel = "".join(part.title() for part in stem.split("_"))
    return {
        "py": f"pytest tests/{area}/test_{stem}.py -q",
        "ts": f"npm test -- src/{area}/{stem}.test.ts",
        "go": f"go test ./internal/{area}/... -run Test{camel}",
    }[lang]


def _session(i: int, rng: random.Random) -> Session:
    project, lang = PROJECTS[i % len(PROJECTS)]
    words, problem, area, stem, ident = TOPICS[(i * 7 + i // len(PROJECTS)) % len(TOPICS)]
    platform = ("claude-code", "codex-cli")[i % 2]
    start = BASE + timedelta(days=i // 3, hours=rng.randint(0, 8), minutes=rng.randint(0, 59))
    sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    step = rng.choice(tuple(STEPS))
    fill = {"col": rng.choice(_WORDS), "table": rng.choice(_TABLES), "num": rng.randint(2, 420)}
    defined = _path(project, lang, area, stem, rng)
    edited = defined if rng.random() < 0.5 else _path(project, lang, area, f"{stem}_rules", rng)
    created = _path(project, lang, area, f"{stem}_exporter", rng)
    tests = _test_command(lang, area, stem)
    commands, errors = STEPS[step]
    kind = QUESTION_KINDS[(i // 2) % len(QUESTION_KINDS)]
    s = Session(
        sid, platform, project, lang, start,
        f"In {project}, {problem}. Can you fix it?"
        + (" Also add an exporter for it." if kind == "created" or rng.random() < 0.3 else ""),
    )  # fmt: skip
    n = iter(range(100))

    def key() -> str:
        return (
            f"toolu_{i:03d}_{next(n):02d}" if platform == "claude-code" else f"call_{i}_{next(n)}"
        )

    pattern = f"def {ident}" if lang == "py" else ident
    s.calls += [
        Call(key(), "search", command=f'rg -n "{pattern}" {defined.split("/")[0]}',
             pattern=pattern, output=f"{defined}:{rng.randint(10, 300)}: {pattern}(",
             text=rng.choice(_NARRATION[:2])),
        Call(key(), "read", path=defined, output="(file contents)"),
        Call(key(), "edit", path=edited, text=_NARRATION[2]),
    ]  # fmt: skip
    if kind == "created" or "exporter" in s.prompt:
        s.calls.append(Call(key(), "write", path=created))
    passed = f"{rng.randint(3, 40)} passed in {rng.randint(1, 9)}.{rng.randint(0, 9)}s"
    s.calls.append(Call(key(), "shell", command=tests, output=passed, text=_NARRATION[3]))
    if kind == "error" or rng.random() < 0.4:
        error = errors[lang].format(**fill)
        s.calls.append(
            Call(key(), "shell", command=commands[lang], output=f"running...\n{error}", failed=True)
        )
    s.closing = rng.choice(_NARRATION[4:])
    gold = {
        "edited": next(c for c in s.calls if c.kind == "edit"),
        "error": next((c for c in s.calls if c.failed), None),
        "command": next(c for c in s.calls if c.command == tests),
        "created": next((c for c in s.calls if c.kind == "write"), None),
        "defined": next(c for c in s.calls if c.kind == "read"),
    }[kind]
    assert gold is not None
    text = {
        "edited": f"Which file did we change to fix the {words} bug in {project}?",
        "error": f"What error did the {step} hit in {project} while fixing the {words} bug?",
        "command": f"How do we run the {words} tests in {project}?",
        "created": f"Where did we put the new {words} exporter in {project}?",
        "defined": f"Where is {ident} defined in {project}?",
    }[kind]
    s.question = Question(text, kind, gold.key, held_out=i % 2 == 1)
    return s


def generate(n_sessions: int = 160, seed: int = 0) -> list[Session]:
    rng = random.Random(f"actionset/{seed}")
    return [_session(i, rng) for i in range(n_sessions)]


# --- writing the transcripts -----------------------------------------------------------------


def _ts(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _j(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _claude_input(call: Call, cwd: str) -> tuple[str, dict[str, Any]]:
    if call.kind == "search":
        return "Grep", {"pattern": call.pattern, "path": cwd}
    if call.kind == "read":
        return "Read", {"file_path": f"{cwd}/{call.path}"}
    if call.kind == "edit":
        return "Edit", {"file_path": f"{cwd}/{call.path}", "old_string": "a\nb", "new_string": "c"}
    if call.kind == "write":
        return "Write", {"file_path": f"{cwd}/{call.path}", "content": "x = 1\n" * 12}
    return "Bash", {"command": call.command, "description": "Run it"}


def claude_lines(s: Session) -> list[str]:
    cwd = f"/work/{s.project}"
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": s.id,
            "version": "2.1.38", "gitBranch": "main"}  # fmt: skip
    at, out, parent = s.start, [], None

    def add(record: dict[str, Any]) -> str:
        nonlocal at, parent
        at += timedelta(seconds=9)
        me = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{s.id}/{len(out)}"))
        out.append(_j({**base, **record, "parentUuid": parent, "uuid": me, "timestamp": _ts(at)}))
        parent = me
        return me

    for t, task in enumerate(s.tasks()):
        _claude_task(task, add, cwd, f"{s.id[:8]}_{t}")
    return out


def _claude_task(s: Session, add: Any, cwd: str, msg: str) -> None:
    add({"type": "user", "message": {"role": "user", "content": s.prompt}})
    for j, call in enumerate(s.calls):
        name, args = _claude_input(call, cwd)
        content: list[dict[str, Any]] = [{"type": "text", "text": call.text}] if call.text else []
        content.append({"type": "tool_use", "id": call.key, "name": name, "input": args})
        add({"type": "assistant", "message": {
            "model": "claude-opus-4-6", "id": f"msg_{msg}_{j}", "type": "message",
            "role": "assistant", "content": content}})  # fmt: skip
        output = (f"Exit code 1\n{call.output}" if call.failed else call.output) or "ok"
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.key,
                                  "content": output, "is_error": call.failed}  # fmt: skip
        extra = {"stdout": call.output, "stderr": "", "interrupted": False}
        add({"type": "user", "message": {"role": "user", "content": [result]},
             "toolUseResult": extra if call.kind == "shell" else output})  # fmt: skip
    add({"type": "assistant", "message": {
        "model": "claude-opus-4-6", "id": f"msg_{msg}_end", "type": "message",
        "role": "assistant", "content": [{"type": "text", "text": s.closing}]}})  # fmt: skip


def _codex_call(call: Call) -> dict[str, Any]:
    if call.kind in ("edit", "write"):
        verb = "Update" if call.kind == "edit" else "Add"
        body = "@@\n-a\n-b\n+c\n" if call.kind == "edit" else "+x = 1\n" * 12
        patch = f"*** Begin Patch\n*** {verb} File: {call.path}\n{body}*** End Patch"
        return {"type": "custom_tool_call", "name": "apply_patch", "call_id": call.key,
                "input": patch, "status": "completed"}  # fmt: skip
    script = call.command if call.kind != "read" else f"sed -n '1,200p' {call.path}"
    return {"type": "function_call", "name": "shell", "call_id": call.key,
            "arguments": json.dumps({"command": ["bash", "-lc", script]})}  # fmt: skip


def codex_lines(s: Session) -> list[str]:
    cwd = f"/work/{s.project}"
    at = s.start
    out = [
        _j({"timestamp": _ts(at), "type": "session_meta", "payload": {
            "id": s.id, "timestamp": _ts(at), "cwd": cwd, "originator": "codex_cli_rs",
            "cli_version": "0.39.0", "git": {"commit_hash": "0" * 40, "branch": "main"}}}),
        _j({"timestamp": _ts(at), "type": "turn_context", "payload": {
            "cwd": cwd, "approval_policy": "never", "model": "gpt-5-codex"}}),
    ]  # fmt: skip

    def add(kind: str, payload: dict[str, Any]) -> None:
        nonlocal at
        at += timedelta(seconds=9)
        out.append(_j({"timestamp": _ts(at), "type": kind, "payload": payload}))

    def say(role: str, text: str) -> None:
        block = "input_text" if role == "user" else "output_text"
        add("response_item", {"type": "message", "role": role,
                              "content": [{"type": block, "text": text}]})  # fmt: skip
        event = (
            {"type": "user_message", "message": text, "kind": "plain"}
            if role == "user"
            else {"type": "agent_message", "message": text}
        )
        add("event_msg", event)

    for task in s.tasks():
        say("user", task.prompt)
        for call in task.calls:
            if call.text:
                say("assistant", call.text)
            _codex_result(call, add)
        say("assistant", task.closing)
    return out


def _codex_result(call: Call, add: Any) -> None:
    """A call item and its output item."""
    payload = _codex_call(call)
    add("response_item", payload)
    if payload["type"] == "custom_tool_call":
        done = {"output": "Success. Updated the files.", "metadata": {"exit_code": 0}}
        add("response_item", {"type": "custom_tool_call_output", "call_id": call.key,
                              "output": json.dumps(done)})  # fmt: skip
        return
    code = 1 if call.failed else 0
    add("response_item", {"type": "function_call_output", "call_id": call.key,
                          "output": json.dumps({"output": call.output, "metadata": {
                              "exit_code": code, "duration_seconds": 1.2}})})  # fmt: skip


def write(home: Path, sessions: list[Session]) -> int:
    """Write every session where its client keeps it; returns the bytes written."""
    size = 0
    for s in sessions:
        if s.platform == "claude-code":
            path = home / f".claude/projects/-work-{s.project}/{s.id}.jsonl"
            lines = claude_lines(s)
        else:
            day = s.start.strftime("%Y/%m/%d")
            stamp = s.start.strftime("%Y-%m-%dT%H-%M-%S")
            path = home / f".codex/sessions/{day}/rollout-{stamp}-{s.id}.jsonl"
            lines = codex_lines(s)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = "".join(lines)
        path.write_text(data, encoding="utf-8")
        size += len(data.encode())
    return size
