"""A deterministic pool of coding-agent turns, shaped like real Claude Code / Codex sessions.

What the capture pipeline stores from a coding session is the user's prompts and the assistant's
text blocks (tool calls and tool results are skipped). In real sessions that is, per prompt: a
short narration line per tool round trip ("Let me look at …", often repeated verbatim), a few
medium explanations, and a long final answer (markdown, lists, code blocks, pasted command
output); some prompts paste a traceback or a diff. The real turns of
``tests/fixtures/transcripts`` (claude-code, codex) are mixed in as they are.

``coding_sessions(n_rows, seed)`` returns sessions of ``(role, text)`` turns totalling
``n_rows``.
"""

from __future__ import annotations

import random
from pathlib import Path

from agents_memory.adapters import get_adapter

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "transcripts"

_FILES = (
    "agents_memory/store/search/rank.py",
    "agents_memory/capture/tailer.py",
    "agents_memory/coldpath/worker.py",
    "src/api/routes/users.ts",
    "tests/test_pipeline.py",
    "pyproject.toml",
    "docker-compose.yml",
    "web/components/Table.tsx",
)
_NARRATION = (
    "Let me look at {f}:{n} to see how this is wired.",
    "Now let me run the tests.",
    "Let me check the current state of {f} around line {n}.",
    "I'll update {f} to use the new helper.",
    "The test passes now. Let me also run the linter.",
    "Let me search for other callers of `{s}`.",
    "Found it: `{s}` is called before the connection is ready ({f}:{n}).",
    "Now I'll add a test for the empty case.",
    "Let me read the migration first.",
    "All tests pass.",
)
_SYMBOLS = (
    "claim_unembedded",
    "parse_line",
    "flush_cursor",
    "build_index",
    "useTableState",
    "rank_candidates",
    "open_pool",
)
_PROSE = (
    "The problem is that the cursor is advanced before the rows are committed, so a crash in"
    " between loses the tail of the file.",
    "I moved the retry into the pipeline so the tailer stays a pure reader; the daemon now owns"
    " the backoff and logs each failure once.",
    "This keeps the public API the same: callers still get a list of ids, only the order changed.",
    "The migration is idempotent, so running it twice on a half-upgraded database is safe.",
    "Note that the GIN index is only used when the query has at least one lexeme; an empty query"
    " falls back to the recency order.",
    "I chose a partial index because the hot rows are the unprocessed ones and they are few.",
    "The flaky test waited on a fixed sleep; it now polls the condition with a deadline.",
    "TypeScript complained because the prop can be undefined on the first render.",
)
_USER = (
    "the search returns nothing for `{s}` even though I saved it yesterday, can you check?",
    "refactor {f} so that the retry logic lives in one place",
    "yes",
    "continue",
    "go ahead",
    "why does the daemon use 100% CPU after a resume from sleep?",
    "add a --dry-run flag to the install command and document it",
    "[Request interrupted by user]",
    "can we make the brief shorter? it is eating my context window",
    "ok commit this",
)
_CODE = (
    "def {s}(conn, limit):\n    rows = conn.execute(SQL, (limit,)).fetchall()\n"
    "    return [Row(*r) for r in rows]\n",
    "for path in sorted(root.rglob('*.jsonl')):\n    if not adapter.owns(path, home):\n"
    "        continue\n    cursor = cursors.get(path)\n    yield path, cursor\n",
    "export function {s}(rows: Row[]): Row[] {{\n  return rows.filter((r) => r.active)"
    ".sort((a, b) => b.at - a.at);\n}}\n",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_recent ON memory (user_id, message_at DESC)"
    " WHERE is_active;\n",
    "@pytest.fixture\ndef store(tmp_path):\n    db = open_database(tmp_path)\n    yield db\n"
    "    db.close()\n",
)
_OUTPUT = (
    "tests/test_pipeline.py::test_{s} FAILED\nE   AssertionError: assert 3 == 4\nE    +  where 3"
    " = len([Row(id=1), Row(id=2), Row(id=3)])\n",
    'Traceback (most recent call last):\n  File "{f}", line 212, in {s}\n    rows = conn.execute'
    '(SQL)\npsycopg.errors.UndefinedColumn: column "embedding" does not exist\n',
    "diff --git a/{f} b/{f}\n@@ -40,7 +40,9 @@\n-    cursor.advance(n)\n"
    "+    with conn.transaction():\n+        store(rows)\n+        cursor.advance(n)\n",
    "===== 412 passed, 3 skipped in 93.21s =====\n",
)


def _fill(rng: random.Random, template: str) -> str:
    return template.format(f=rng.choice(_FILES), s=rng.choice(_SYMBOLS), n=rng.randint(1, 900))


def _long_answer(rng: random.Random) -> str:
    parts = ["## What changed\n"]
    for _ in range(rng.randint(3, 9)):
        kind = rng.random()
        if kind < 0.45:
            parts.append(" ".join(rng.choice(_PROSE) for _ in range(rng.randint(1, 3))))
        elif kind < 0.75:
            parts.append(f"```python\n{_fill(rng, rng.choice(_CODE)) * rng.randint(1, 3)}```")
        elif kind < 0.9:
            parts.append(f"```\n{_fill(rng, rng.choice(_OUTPUT))}```")
        else:
            parts.append("\n".join(f"- `{rng.choice(_FILES)}`: {rng.choice(_PROSE)}" for _ in "ab"))
    return "\n\n".join(parts)


def _user(rng: random.Random) -> str:
    prompt = _fill(rng, rng.choice(_USER))
    if rng.random() < 0.15:  # a pasted traceback, diff or test output
        prompt += "\n\n```\n" + _fill(rng, rng.choice(_OUTPUT)) * rng.randint(1, 6) + "```"
    return prompt


def _assistant_turns(rng: random.Random) -> list[str]:
    turns = [_fill(rng, rng.choice(_NARRATION)) for _ in range(rng.randint(1, 6))]
    if rng.random() < 0.5:
        turns.insert(rng.randrange(len(turns)), " ".join(rng.sample(_PROSE, rng.randint(1, 3))))
    if rng.random() < 0.6:
        turns.append(_long_answer(rng))
    return turns


def fixture_turns() -> list[tuple[str, str]]:
    """The real conversational turns of the claude-code and codex fixtures, in file order."""
    turns: list[tuple[str, str]] = []
    for platform, folder in (("claude-code", "claude-code"), ("codex-cli", "codex")):
        adapter = get_adapter(platform)
        for path in sorted((FIXTURES / folder).rglob("*.jsonl")):
            parsed = adapter.parse(path, path.read_bytes(), offset=0, state={}, final=True)
            turns.extend((t.role, t.text) for t in parsed.turns if t.text.strip())
    return turns


def coding_sessions(n_rows: int, seed: int = 0) -> list[list[tuple[str, str]]]:
    """Sessions of ``(role, text)`` turns, ``n_rows`` turns in all (the fixtures' real turns
    first, then generated sessions of 20-120 turns)."""
    rng = random.Random(seed)
    sessions: list[list[tuple[str, str]]] = [fixture_turns()[:n_rows]]
    made = len(sessions[0])
    while made < n_rows:
        session: list[tuple[str, str]] = []
        target = rng.randint(20, 120)
        while len(session) < target:
            session.append(("user", _user(rng)))
            session.extend(("assistant", t) for t in _assistant_turns(rng))
        session = session[: n_rows - made]
        sessions.append(session)
        made += len(session)
    return sessions
