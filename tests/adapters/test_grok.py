"""Grok Build adapter: real (redacted) fixtures with their summary.json, line-index keys, drift."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agents_memory.adapters.base import ParseResult
from agents_memory.adapters.grok import GrokAdapter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "grok"

adapter = GrokAdapter()


def parse(path: Path, data: bytes | None = None, **kwargs: Any) -> ParseResult:
    kwargs.setdefault("offset", 0)
    kwargs.setdefault("state", {})
    return adapter.parse(path, path.read_bytes() if data is None else data, **kwargs)


def jsonl(*records: dict[str, Any] | str) -> bytes:
    lines = (r if isinstance(r, str) else json.dumps(r) for r in records)
    return "".join(f"{line}\n" for line in lines).encode()


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "content": [{"type": "text", "text": text}], **extra}


def assistant(text: str, model: str = "grok-4.5") -> dict[str, Any]:
    return {"type": "assistant", "content": text, "tool_calls": [], "model_id": model}


SYSTEM = {"type": "system", "content": "You are Grok."}


def session_dir(home: Path, cwd: str = "%2Fhome%2Fu%2Fproj", sid: str = "sid-1") -> Path:
    path = home / ".grok" / "sessions" / cwd / sid
    path.mkdir(parents=True)
    return path


# -- real fixtures -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    folder: str
    session: str
    users: int
    assistants: int
    first: str
    last: str
    lines: tuple[int, ...]
    subagent: bool
    agent_name: str | None


# Read from the fixture files with jq: line numbers of the kept lines, summary.json's info.id.
EXPECTED = [
    Expected(
        "session",
        "019f6851-7ec4-7ef0-97d3-03f3eee38755",
        users=2,  # line 1 is synthetic (environment_context); lines 2 and 10 are prompts
        assistants=1,  # line 7 is a tool call with empty content
        first="Read hello.py and summarize what it prints without editing files.",
        last="Here is a screenshot for reference.",
        lines=(2, 4, 10),
        subagent=False,
        agent_name=None,
    ),
    Expected(
        "subagent",
        "019f6851-7ec4-7ef0-97d3-03f3eee38756",
        users=1,
        assistants=2,
        first="Count the Python files under the project root and report the number.",
        last="There is 1 Python file under the project root.",
        lines=(1, 2, 4),
        subagent=True,
        agent_name="explore",
    ),
]


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda e: e.folder)
def test_real_fixture_yields_the_expected_turns(expected: Expected) -> None:
    path = FIXTURES / expected.folder / "chat_history.jsonl"

    result = parse(path)

    roles = [t.role for t in result.turns]
    assert (roles.count("user"), roles.count("assistant")) == (
        expected.users,
        expected.assistants,
    )
    assert (result.turns[0].text, result.turns[-1].text) == (expected.first, expected.last)
    assert [t.external_uuid for t in result.turns] == [
        f"grok:{expected.session}:{line}" for line in expected.lines
    ]
    assert {t.session_id for t in result.turns} == {expected.session}
    assert {t.model for t in result.turns} == {"grok-4.5"}
    assert {t.cwd for t in result.turns} == {"/tmp/as-agent-lab/grok/project"}
    assert {(t.subagent, t.subagent_role) for t in result.turns} == {
        (expected.subagent, expected.agent_name)
    }
    assert all(t.message_at is None for t in result.turns)
    assert (result.issues, dict(result.unknown_kinds)) == ([], {})
    assert result.resume_offset == path.stat().st_size
    assert result.state["lines"] == path.read_bytes().count(b"\n")


def test_subagent_turns_carry_the_subagent_model() -> None:
    result = parse(FIXTURES / "subagent" / "chat_history.jsonl")

    assert {t.subagent_model for t in result.turns} == {"grok-4.5"}


def test_vibe_kit_stdout_is_not_a_grok_build_transcript(tmp_path: Path) -> None:
    stdout = FIXTURES.parent / "generated" / "grok" / "0.0.34" / "headless-stdout-hello.jsonl"
    home = tmp_path

    assert not adapter.owns(stdout, home)
    result = parse(stdout)  # role/content lines, no "type": nothing Grok Build would write
    assert result.turns == []
    assert result.unknown_kinds == {"(no type)": 2}


# -- stable ids and reading from the middle -----------------------------------------------------


def test_line_numbers_continue_from_state_when_reading_from_the_middle(tmp_path: Path) -> None:
    path = session_dir(tmp_path) / "chat_history.jsonl"
    head = jsonl(SYSTEM, user("one"), assistant("two"))
    tail = jsonl(user("three"), assistant("four"))

    result = parse(path, tail, offset=len(head), state={"lines": 3})

    assert [t.external_uuid for t in result.turns] == ["grok:sid-1:3", "grok:sid-1:4"]
    assert result.state["lines"] == 5


def test_line_numbers_are_counted_in_the_file_when_state_is_lost(tmp_path: Path) -> None:
    path = session_dir(tmp_path) / "chat_history.jsonl"
    head = jsonl(SYSTEM, user("one"), "", assistant("two"))
    tail = jsonl(user("three"))
    path.write_bytes(head + tail)

    result = parse(path, tail, offset=len(head))

    assert [t.external_uuid for t in result.turns] == ["grok:sid-1:4"]


# -- rules ---------------------------------------------------------------------------------------


def test_user_query_is_unwrapped_and_injected_context_skipped(tmp_path: Path) -> None:
    path = session_dir(tmp_path) / "chat_history.jsonl"
    wrapped = "<user_info>\nOS: linux\n</user_info>\n<user_query>\nFix the login bug\n</user_query>"
    data = jsonl(
        user("<user_info>\nOS Version: macos\n</user_info>"),
        user("<user_info>a</user_info>\n<git_status>b</git_status>"),
        user("<system_reminder>x</system_reminder>", synthetic_reason="system_reminder"),
        user(wrapped, prompt_index=0),
        user("<user_query>Plain ask</user_query>", prompt_index=1),
    )

    result = parse(path, data)

    assert [(t.text, t.raw_text) for t in result.turns] == [
        ("Fix the login bug", wrapped),
        ("Plain ask", None),
    ]


def test_tool_and_reasoning_lines_are_skipped_and_new_types_counted(tmp_path: Path) -> None:
    path = session_dir(tmp_path) / "chat_history.jsonl"
    data = jsonl(
        SYSTEM,
        {"type": "reasoning", "summary": []},
        {"type": "tool_result", "tool_call_id": "c", "content": "out"},
        {"type": "backend_tool_call", "kind": {}},
        {"type": "compaction_marker"},
        assistant(""),
    )

    result = parse(path, data)

    assert result.turns == []
    assert result.unknown_kinds == {"compaction_marker": 1}


def test_model_id_updates_the_model_for_later_turns(tmp_path: Path) -> None:
    path = session_dir(tmp_path) / "chat_history.jsonl"
    (path.parent / "summary.json").write_text('{"current_model_id": "grok-4"}', encoding="utf-8")
    first = jsonl(user("a"), assistant("b", model="grok-4.5-fast"))
    second = jsonl(user("c"))

    one = parse(path, first)
    two = parse(path, second, offset=len(first), state=one.state)

    assert [t.model for t in one.turns + two.turns] == ["grok-4", "grok-4.5-fast", "grok-4.5-fast"]


def test_malformed_line_is_reported_and_later_lines_keep_their_index(tmp_path: Path) -> None:
    path = session_dir(tmp_path) / "chat_history.jsonl"
    head = jsonl(SYSTEM, user("before"))
    data = head + b'{"type": "assist\n' + jsonl(assistant("after"))

    result = parse(path, data)

    assert [t.external_uuid for t in result.turns] == ["grok:sid-1:1", "grok:sid-1:3"]
    assert [i.offset for i in result.issues] == [len(head)]


def test_empty_buffer_yields_nothing_and_keeps_the_line_count(tmp_path: Path) -> None:
    path = session_dir(tmp_path) / "chat_history.jsonl"

    result = parse(path, b"", offset=300, state={"lines": 7, "model": "grok-4.5"})

    assert (result.turns, result.resume_offset, result.issues) == ([], 300, [])
    assert result.state == {"lines": 7, "model": "grok-4.5"}


def test_without_summary_the_directories_name_session_and_cwd(tmp_path: Path) -> None:
    path = session_dir(tmp_path, "%2Fhome%2Fu%2Fmy%20app", "019e-abc") / "chat_history.jsonl"

    turn = parse(path, jsonl(user("hi"))).turns[0]

    assert (turn.session_id, turn.cwd, turn.model) == ("019e-abc", "/home/u/my app", None)


def test_roots_and_owned_paths_under_a_home(tmp_path: Path) -> None:
    sessions = tmp_path / ".grok" / "sessions"
    session = sessions / "%2Ftmp%2Fproj" / "019e418e-5bac-7353-b499-6bfe0a19e51e"

    assert adapter.roots(tmp_path) == [sessions]
    assert adapter.owns(session / "chat_history.jsonl", tmp_path)
    assert not adapter.owns(session / "updates.jsonl", tmp_path)
    assert not adapter.owns(session / "events.jsonl", tmp_path)
    assert not adapter.owns(session / "subagents" / "c1" / "chat_history.jsonl", tmp_path)
    assert not adapter.owns(sessions / "prompt_history.jsonl", tmp_path)
    assert not adapter.owns(tmp_path / ".grok" / "chat_history.jsonl", tmp_path)


def test_copied_fixture_session_reads_its_sidecar(tmp_path: Path) -> None:
    target = session_dir(tmp_path, sid="019f6851-7ec4-7ef0-97d3-03f3eee38755")
    for name in ("chat_history.jsonl", "summary.json"):
        shutil.copy(FIXTURES / "session" / name, target / name)

    assert adapter.owns(target / "chat_history.jsonl", tmp_path)
    assert parse(target / "chat_history.jsonl").turns[0].cwd == "/tmp/as-agent-lab/grok/project"


def test_read_from_the_start_ignores_stale_state(tmp_path: Path) -> None:
    path = session_dir(tmp_path) / "chat_history.jsonl"

    result = parse(path, jsonl(user("rewritten")), state={"lines": 40, "model": "grok-3"})

    assert [(t.external_uuid, t.model) for t in result.turns] == [("grok:sid-1:0", None)]
