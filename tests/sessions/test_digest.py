"""The extractive session summary (pure): for 20 real sessions (the fixture transcripts parsed
by their adapters, and the coding set's) it names what was asked and how it ended; noise
(acknowledgements, slash commands, pasted logs, ``[image]`` markers) never becomes the ask;
no empty part, no "- -"; bounded."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from agents_memory.adapters import get_adapter
from agents_memory.coldpath.session_digest import (
    SUMMARY_MAX_CHARS,
    DigestAction,
    DigestTurn,
    digest,
    search_terms,
)
from bench.codeset.generate import generate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"

# (file, client, session id or None for the file's only session, text the ask holds,
#  text the outcome holds)
FIXTURE_SESSIONS = [
    ("antigravity/agent-sessions_agy_cli_transcript_redacted.jsonl", "antigravity", None,
     "List the files", "a.txt and b.txt"),
    ("claude-code/spotter_v2.1.38_tool_heavy.jsonl", "claude-code", None,
     "start phoenix in background", "Phoenix server is starting"),
    ("claude-code/spotter_v2.1.38_parent_with_agent_progress.jsonl", "claude-code", None,
     "credo, dialyzer, mix_audit", "Beads Created"),
    ("claude-code/vct_v1.0.95_tools_thinking_unicode.jsonl", "claude-code",
     "b162b1ae-97bc-475f-9b5f-ffbf55ca5b3f", "golang文檔", "Pydantic_Field_Usage_Guide.md"),
    ("claude-code/vct_v1.0.95_tools_thinking_unicode.jsonl", "claude-code",
     "e9f146fa-3b20-48d0-9be4-d99ca901cae4", "go.mod", "toolchain"),
    ("claude-code/spotter_v2.1.39_subagents_dir/258c7280-ae70-4798-800f-63464d01a85d/subagents/"
     "agent-a881341.jsonl", "claude-code", None, "SessionStart hooks", "hook output contract"),
    ("codex/vct_v0.39.0_vscode_unicode.jsonl", "codex-cli", None, "go.mod",
     "Updated Go version"),
    ("codex/agent-sessions_composite_v0.1xx_record_types.jsonl", "codex-cli", None,
     "List the files", "Found 2 files"),
    ("gemini-cli/agent-sessions_jsonl_v040_redacted.jsonl", "gemini-cli", None,
     "Say hello and list files", "listed the files"),
    ("gemini-cli/vct_legacy_json_2025-10_gemini-2.5-pro.json", "gemini-cli", None,
     "冗餘代碼", "cargo clippy"),
    ("gemini-cli/vct_legacy_json_2026-03_parts_content_kind.json", "gemini-cli", None,
     "CONTRIBUTING.md", "CONTRIBUTING.md"),
    ("grok/subagent/chat_history.jsonl", "grok", None, "Count the Python files",
     "1 Python file"),
]  # fmt: skip


def _fixture_session(
    path: str, client: str, session: str | None
) -> list[DigestTurn | DigestAction]:
    file = FIXTURES / path
    parsed = get_adapter(client).parse(file, file.read_bytes(), offset=0, state={}, final=True)
    turns: dict[str | None, list[DigestTurn]] = defaultdict(list)
    for t in parsed.turns:
        turns[t.session_id].append(DigestTurn(t.role, t.text, t.message_at))
    sid = session if session is not None else max(turns, key=lambda k: len(turns[k]))
    actions = [
        DigestAction(a.kind, a.targets, a.command, a.outcome, a.exit_code)
        for a in parsed.actions
        if a.tool and a.session_id == sid
    ]
    return [*turns[sid], *actions]


def _split(items: list[DigestTurn | DigestAction]) -> tuple[list[DigestTurn], list[DigestAction]]:
    return (
        [i for i in items if isinstance(i, DigestTurn)],
        [i for i in items if isinstance(i, DigestAction)],
    )


def _readable(text: str) -> None:
    assert text.strip()
    assert "- -" not in text and "[image]" not in text.lower()
    assert all(line.strip() and not line.rstrip().endswith(":") for line in text.splitlines())
    assert len(text) <= SUMMARY_MAX_CHARS


@pytest.mark.parametrize(("path", "client", "session", "ask", "outcome"), FIXTURE_SESSIONS)
def test_a_fixture_session_summary_names_its_ask_and_its_outcome(
    path: str, client: str, session: str | None, ask: str, outcome: str
) -> None:
    turns, actions = _split(_fixture_session(path, client, session))
    made = digest(turns, actions)
    text = made.render()

    assert made.ask is not None and ask in made.ask, text
    assert made.outcome is not None and outcome in made.outcome, text
    assert text.startswith("Asked: ") and f"Outcome: {made.outcome}" in text
    _readable(text)


CODING_SESSIONS = 8


def test_coding_set_session_summaries_name_the_first_request_and_the_last_reply() -> None:
    sessions = generate().sessions[:: len(generate().sessions) // CODING_SESSIONS][:CODING_SESSIONS]
    assert len(sessions) == CODING_SESSIONS
    for session in sessions:
        turns = [DigestTurn(t.role, t.text, t.ts) for t in session.turns]
        text = digest(turns).render()
        first_user = next(t.text for t in session.turns if t.role == "user")
        last_reply = [t.text for t in session.turns if t.role == "assistant"][-1]
        asked = text.splitlines()[0]
        assert asked.startswith("Asked: ")
        assert first_user.replace("`", "")[:30] in asked, text
        assert "Outcome: " + last_reply.replace("`", "")[:40] in text, text
        _readable(text)


def test_noise_never_becomes_the_ask() -> None:
    log = "\n".join(f"2026-03-01 10:0{i}:00 ERROR worker {i} died" for i in range(6))
    turns = [
        DigestTurn("user", "<command-name>/clear</command-name>"),
        DigestTurn("user", "/model opus"),
        DigestTurn("user", "[image]"),
        DigestTurn("user", log),
        DigestTurn("user", "ok thanks"),
        DigestTurn("user", "[image]\nmove the billing tables to monthly partitions"),
        DigestTurn("assistant", "Let me look at the schema first."),
        DigestTurn("user", "continue"),
        DigestTurn(
            "assistant",
            "Decision: we went with declarative partitioning instead of pg_partman."
            " Billing is now partitioned by month; `make test` passes.",
        ),
    ]
    made = digest(turns)
    assert made.ask == "move the billing tables to monthly partitions"
    assert made.also_asked == ()
    assert made.decisions == ("we went with declarative partitioning instead of pg_partman.",)
    assert made.outcome is not None and made.outcome.startswith("Billing is now partitioned")
    _readable(made.render())


def test_files_and_commands_come_from_the_actions_and_from_the_text_without_them() -> None:
    turns = [
        DigestTurn("user", "fix the flaky retry test"),
        DigestTurn("assistant", "Edited `src/retry.py` and ran `pytest -q tests/test_retry.py`."),
    ]
    actions = [
        DigestAction("read", ("src/retry.py",)),
        DigestAction("edit", ("src/retry.py",), outcome="ok"),
        DigestAction("edit", ("src/other.py",), outcome="error"),
        DigestAction("shell", (), "pytest -q", "error", 1),
    ]
    with_actions = digest(turns, actions)
    assert with_actions.files == ("src/retry.py",) and not with_actions.files_from_text
    assert with_actions.commands == ("`pytest -q` (failed)",)
    assert "the last command failed: `pytest -q`" in with_actions.open_ends

    from_text = digest(turns)
    assert from_text.files == ("src/retry.py",) and from_text.files_from_text
    assert from_text.commands == ("`pytest -q tests/test_retry.py`",)
    assert "Files changed (per the text): src/retry.py" in from_text.render()


def test_a_long_session_is_clipped_to_the_bound_and_its_words_are_searchable() -> None:
    turns = []
    for i in range(300):
        turns.append(DigestTurn("user", f"please rename helper_{i} in module_{i}.py " * 5))
        turns.append(DigestTurn("assistant", f"Decision: we chose name_{i} instead. " * 10))
    made = digest(turns)
    text = made.render(600)
    assert len(text) <= 600 and text.startswith("Asked: please rename helper_0")
    terms = search_terms(turns, [], text)
    assert "helper_5" in terms.split() and "name_150" in terms.split() and len(terms) <= 4000


def test_a_session_without_words_says_so() -> None:
    text = digest([DigestTurn("user", "[image]"), DigestTurn("assistant", "[trimmed]")]).render()
    assert text == "2 turns, none in words (markers, images or tool calls only)"
