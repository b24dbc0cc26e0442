"""Claude Code adapter: real fixtures, stable ids across reads, drift, roots/owns.

Expected values below were read from the fixture files with jq/python, not from the parser.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents_memory.adapters.base import ParseResult, Turn
from agents_memory.adapters.claude_code import ClaudeCodeAdapter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude-code"
GENERATED = FIXTURES / "generated" / "claude"
SUBAGENTS = CLAUDE / "spotter_v2.1.39_subagents_dir/258c7280-ae70-4798-800f-63464d01a85d/subagents"
ADAPTER = ClaudeCodeAdapter()

ALL_FILES = sorted([*CLAUDE.rglob("*.jsonl"), *GENERATED.rglob("*.jsonl")])


def parse(path: Path, data: bytes | None = None, *, final: bool = True) -> ParseResult:
    raw = path.read_bytes() if data is None else data
    return ADAPTER.parse(path, raw, offset=0, state={}, final=final)


def by_role(turns: list[Turn], role: str) -> list[Turn]:
    return [t for t in turns if t.role == role]


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_every_claude_fixture_parses_without_error(path: Path) -> None:
    result = parse(path)
    assert result.issues == []
    assert result.resume_offset == path.stat().st_size
    for turn in result.turns:
        assert turn.platform == "claude-code"
        assert turn.text.strip() == turn.text
        assert turn.text


# file, users, assistants, first user, last user, first assistant (prefix), last assistant (prefix)
REAL = [
    (
        CLAUDE / "spotter_v2.1.38_short_interrupt_local_command.jsonl",
        ["mix phx.server doesnt seem to start"],
        ["Let me check the project structure and try running the server to see the error."],
    ),
    (
        CLAUDE / "spotter_v2.1.38_tool_heavy.jsonl",
        [
            "start phoenix in background",
            "scrolling back in xterm.js still does not work (maybe because outer web catches it)?"
            " websearch xterm.js tmux interactions",
        ],
        ["Phoenix server is starting in the background.\n\nLet me check the MCP servers status."],
    ),
    (
        GENERATED / "2.1.197/headless-hello-ebe3be70-0462-41bf-b37c-c01b0345b255.jsonl",
        ["hello"],
        ["FAKE-REPLY: hello from the fake model. marker_seen=yes"],
    ),
    (
        GENERATED / "2.1.197/headless-mcp-tool-8d2dee70-c626-449f-b80e-b6aa27a56e52.jsonl",
        ["USE_TOOL: please call the fake echo tool"],
        [
            "FAKE-REPLY: hello from the fake model. marker_seen=yes"
            " tool_result='MCP-ECHO: ping-from-fake-model'"
        ],
    ),
    (
        GENERATED / "2.1.197/tui-hello-3bbaba47-40f1-4a92-a131-16f0bab695cf.jsonl",
        ["hello from the TUI"],
        ["FAKE-REPLY: hello from the fake model. marker_seen=yes"],
    ),
    (
        GENERATED / "2.1.332/headless-hello-776cf0c7-9926-4aa6-be90-2e80156a4666.jsonl",
        ["hello"],
        ["FAKE-REPLY: hello from the fake model. marker_seen=yes"],
    ),
    (
        GENERATED / "2.1.332/headless-mcp-tool-8d7479e9-3be0-4d7a-84d4-16006ca9de87.jsonl",
        ["USE_TOOL: please call the fake echo tool"],
        [
            "FAKE-REPLY: hello from the fake model. marker_seen=yes"
            " tool_result='MCP-ECHO: ping-from-fake-model'"
        ],
    ),
    (
        GENERATED / "2.1.332/tui-hello-43aa7e9a-e29f-42b2-be53-760bb58d6f3e.jsonl",
        ["hello from the TUI"],
        ["FAKE-REPLY: hello from the fake model. marker_seen=yes"],
    ),
]


@pytest.mark.parametrize(
    ("path", "users", "assistants"), REAL, ids=lambda v: getattr(v, "name", "")
)
def test_real_fixture_yields_exactly_the_typed_prompts_and_text_replies(
    path: Path, users: list[str], assistants: list[str]
) -> None:
    turns = parse(path).turns
    assert [t.text for t in by_role(turns, "user")] == users
    assert [t.text for t in by_role(turns, "assistant")] == assistants


@pytest.mark.parametrize(
    ("path", "session", "model"),
    [
        (REAL[0][0], "55604662-cf2a-4331-851a-ec234028f8ca", "claude-opus-4-6"),
        (REAL[2][0], "ebe3be70-0462-41bf-b37c-c01b0345b255", "claude-opus-4-8"),
        (REAL[7][0], "43aa7e9a-e29f-42b2-be53-760bb58d6f3e", "claude-opus-5-5"),
    ],
    ids=["2.1.38", "2.1.197", "2.1.332"],
)
def test_main_session_turns_carry_session_cwd_time_and_assistant_model(
    path: Path, session: str, model: str
) -> None:
    turns = parse(path).turns
    assert {t.session_id for t in turns} == {session}
    assert all(t.cwd and t.message_at and t.message_at.tzinfo for t in turns)
    assert all(not t.subagent for t in turns)
    assert [t.model for t in by_role(turns, "assistant")] == [model]
    assert [t.model for t in by_role(turns, "user")] == [None]


def test_parent_session_merges_blocks_and_keeps_custom_command_arguments() -> None:
    turns = parse(CLAUDE / "spotter_v2.1.38_parent_with_agent_progress.jsonl").turns
    users, assistants = by_role(turns, "user"), by_role(turns, "assistant")
    # 20 user lines: 1 custom command, 1 isMeta expansion, 16 tool results, 1 interrupt, 1 prompt.
    assert len(users) == 2
    assert users[0].text.startswith("websearch to learn how to fastest setup credo, dialyzer")
    assert users[0].raw_text is not None
    assert users[0].raw_text.startswith("<command-message>handgemacht:create-beads")
    assert users[1].text == "create the beads"
    # 28 assistant lines, 7 message ids with text; "\n\n" + thinking + text of one id become one.
    assert len(assistants) == 7
    assert assistants[0].text == "I'll research the setup options and then draft beads for you."
    assert assistants[0].external_uuid == "claude-code:a:msg_01LvWnndr3MWQW8w3xEieBJx"
    assert assistants[-1].text.startswith("## Beads Created\n\nEpic `spotter-0p7`")
    assert {t.model for t in assistants} == {"claude-opus-4-6"}
    assert {t.session_id for t in turns} == {"491e126e-1e71-469c-ade2-fcc8af567c74"}


def test_v1_session_skips_caveats_commands_and_interrupts_across_a_session_change() -> None:
    turns = parse(CLAUDE / "vct_v1.0.95_tools_thinking_unicode.jsonl").turns
    users, assistants = by_role(turns, "user"), by_role(turns, "assistant")
    assert len(users) == 4
    assert users[0].text.startswith(
        "幫我檢查一下 go.mod 裡面 為何 go版本是 1.23, toolchain 卻是 1.24?"
    )
    assert users[1].text == "toolchain不用保留吧?"
    assert users[-1].text == "不對 幫我查一下pydantic文檔的Field用法 整理成markdown保存"
    assert len(assistants) == 6
    assert assistants[0].text == "我來幫你處理這些任務。首先讓我創建一個待辦清單來追蹤所有任務。"
    assert assistants[-1].text.startswith(
        "已完成\uff01我從 Context7 獲取了 Pydantic Field 的詳細文檔"
    )
    assert {t.model for t in assistants} == {"claude-sonnet-4-20250514"}
    assert {t.session_id for t in turns} == {
        "e9f146fa-3b20-48d0-9be4-d99ca901cae4",
        "b162b1ae-97bc-475f-9b5f-ffbf55ca5b3f",
    }


def test_inline_sidechain_lines_become_subagent_turns_of_a_distinct_session() -> None:
    turns = parse(CLAUDE / "claude-code-log_v2.0.46_inline_sidechain_truncated.jsonl").turns
    assert [t.role for t in turns] == ["assistant", "assistant"]
    side, main = turns
    assert side.subagent
    assert side.session_id == "88a8d761-7b9a-4bf1-a8ca-c1febe6bf358:sidechain"
    assert side.subagent_model == "claude-sonnet-4-5-20250929"
    assert side.text.startswith("I'll research how `data-border-color` is used")
    assert not main.subagent
    assert main.session_id == "88a8d761-7b9a-4bf1-a8ca-c1febe6bf358"
    assert main.text.startswith("Excellent research! The sub-assistant has identifi")
    assert main.cwd == "e:\\Workspace\\src\\github\\claude-code-log"


def test_subagent_file_turns_are_flagged_with_the_subagent_model_and_child_session() -> None:
    turns = parse(SUBAGENTS / "agent-a881341.jsonl").turns
    users, assistants = by_role(turns, "user"), by_role(turns, "assistant")
    assert len(users) == 1
    assert users[0].text.startswith("What is the output contract for Claude Code hooks")
    assert len(assistants) == 3
    assert assistants[-1].text.startswith("Based on the official Claude Code hooks documentation")
    assert all(t.subagent for t in turns)
    assert {t.session_id for t in turns} == {"258c7280-ae70-4798-800f-63464d01a85d:a881341"}
    assert {t.subagent_model for t in assistants} == {"claude-sonnet-4-5-20250929"}
    assert {t.subagent_role for t in turns} == {None}  # no meta.json next to this fixture


def test_subagent_role_comes_from_the_meta_json_sidecar(tmp_path: Path) -> None:
    path = tmp_path / "agent-a881341.jsonl"
    path.write_bytes((SUBAGENTS / "agent-a881341.jsonl").read_bytes())
    (tmp_path / "agent-a881341.meta.json").write_text(
        '{"agentType":"general-purpose","spawnDepth":1}', encoding="utf-8"
    )
    result = parse(path)
    assert {t.subagent_role for t in result.turns} == {"general-purpose"}
    assert result.state["subagent_role"] == "general-purpose"


def test_compaction_summariser_file_yields_no_turns() -> None:
    assert parse(SUBAGENTS / "agent-acompact-fffbd0.jsonl").turns == []


def test_composite_drift_file_skips_meta_summaries_and_synthetic_but_keeps_images() -> None:
    result = parse(CLAUDE / "agent-sessions_composite_v2.1.x_record_types.jsonl")
    texts = [t.text for t in result.turns]
    assert result.unknown_kinds == {}  # every kind in it is a known bookkeeping kind
    assert "Summary of prior context." not in texts  # isCompactSummary
    assert "[image]\n[trimmed for fixture]" in texts
    assert [t.text for t in by_role(result.turns, "assistant")][:4] == [
        "I'll list files.",
        "Done.",
        "Partial reply",
        "Listing the files.",
    ]
    assert all(t.model != "<synthetic>" for t in result.turns)


def _line(**fields: object) -> bytes:
    base: dict[str, object] = {
        "sessionId": "s1",
        "cwd": "/w",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "isSidechain": False,
    }
    return json.dumps({**base, **fields}).encode() + b"\n"


def _assistant(uuid: str, message_id: str, block: dict[str, object]) -> bytes:
    message = {"id": message_id, "model": "m1", "role": "assistant", "content": [block]}
    return _line(type="assistant", uuid=uuid, message=message)


def _user(uuid: str, content: object, **fields: object) -> bytes:
    return _line(type="user", uuid=uuid, message={"role": "user", "content": content}, **fields)


def test_a_response_cut_by_a_read_is_held_back_and_returned_fuller_under_the_same_key() -> None:
    path = Path("/h/.claude/projects/p/s1.jsonl")
    first = _user("u1", "hi") + _assistant("a1", "msg_1", {"type": "text", "text": "Part one."})
    rest = _assistant("a2", "msg_1", {"type": "tool_use", "id": "t", "name": "Bash"}) + _assistant(
        "a3", "msg_1", {"type": "text", "text": "Part two."}
    )
    r1 = ADAPTER.parse(path, first, offset=0, state={})
    held = len(_user("u1", "hi"))
    assert r1.resume_offset == held
    assert by_role(r1.turns, "assistant")[0].text == "Part one."
    data = first + rest
    r2 = ADAPTER.parse(path, data[held:], offset=held, state=r1.state)
    assert r2.resume_offset == held  # still open: the next response has not started
    (turn,) = r2.turns
    assert turn.external_uuid == "claude-code:a:msg_1" == r1.turns[1].external_uuid
    assert turn.text == "Part one.\n\nPart two."
    r3 = ADAPTER.parse(path, data[held:], offset=held, state=r2.state, final=True)
    assert r3.resume_offset == len(data)


def test_a_new_prompt_closes_the_previous_response() -> None:
    data = (
        _user("u1", "hi")
        + _assistant("a1", "msg_1", {"type": "text", "text": "Hello."})
        + _user("u2", "bye", timestamp="2026-01-01T00:00:05.000Z")
    )
    result = ADAPTER.parse(Path("s1.jsonl"), data, offset=0, state={})
    assert result.resume_offset == len(data)
    assert [t.text for t in result.turns] == ["hi", "Hello.", "bye"]


def test_malformed_line_is_reported_with_its_offset_and_later_lines_still_parse() -> None:
    good = _user("u1", "first")
    bad = b'{"type":"user","message":{"content":"tru\n'
    not_object = b"[1, 2]\n"
    later = _user("u2", "second", timestamp="2026-01-01T00:00:09.000Z")
    data = good + bad + not_object + later
    result = ADAPTER.parse(Path("s1.jsonl"), data, offset=100, state={}, final=True)
    assert [t.text for t in result.turns] == ["first", "second"]
    assert [i.offset for i in result.issues] == [100 + len(good), 100 + len(good) + len(bad)]
    assert result.resume_offset == 100 + len(data)


def test_unknown_record_kinds_are_counted_and_known_bookkeeping_is_not() -> None:
    data = (
        b'{"type":"hologram","x":1}\n'
        + b'{"type":"api-request-blob","blob":"zz"}\n'
        + _line(type="hologram")
        + _line(type="progress", data={"type": "agent_progress"})
        + _user("u1", "hi")
    )
    result = ADAPTER.parse(Path("s1.jsonl"), data, offset=0, state={}, final=True)
    assert result.unknown_kinds == {"hologram": 2}
    assert [t.text for t in result.turns] == ["hi"]


def test_empty_buffer_yields_nothing_and_keeps_the_offset() -> None:
    result = ADAPTER.parse(Path("s1.jsonl"), b"", offset=1234, state={})
    assert result.turns == []
    assert result.resume_offset == 1234
    assert result.issues == []


@pytest.mark.parametrize(
    "content",
    [
        "<command-name>/mcp</command-name>\n<command-message>mcp</command-message>\n"
        "<command-args></command-args>",
        "<local-command-stdout>(no content)</local-command-stdout>",
        "<local-command-caveat>Caveat: The messages below were generated</local-command-caveat>",
        "<bash-input>ls</bash-input>",
        "<bash-stdout>a b</bash-stdout><bash-stderr></bash-stderr>",
        "<task-notification><task-id>x</task-id></task-notification>",
        "<system-reminder>be nice</system-reminder>",
        "[Request interrupted by user]",
        [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
        [{"type": "tool_result", "tool_use_id": "t", "content": "out"}],
        [],
    ],
)
def test_client_written_user_lines_are_skipped(content: object) -> None:
    result = ADAPTER.parse(Path("s1.jsonl"), _user("u1", content), offset=0, state={})
    assert result.turns == []


def test_meta_compact_summary_and_transcript_only_lines_are_skipped() -> None:
    data = (
        _user("u1", "expanded skill", isMeta=True)
        + _user("u2", "This session is being continued", isCompactSummary=True)
        + _user("u3", "visible only", isVisibleInTranscriptOnly=True)
    )
    assert ADAPTER.parse(Path("s1.jsonl"), data, offset=0, state={}).turns == []


def test_system_reminders_are_cut_out_of_real_text_and_images_become_markers() -> None:
    content = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
        {"type": "text", "text": "look <system-reminder>secret</system-reminder>at this"},
    ]
    (turn,) = ADAPTER.parse(Path("s1.jsonl"), _user("u1", content), offset=0, state={}).turns
    assert turn.text == "[image]\nlook at this"
    assert turn.raw_text == "[image]\nlook <system-reminder>secret</system-reminder>at this"


def test_synthetic_assistant_lines_are_skipped() -> None:
    message = {
        "id": "m",
        "model": "<synthetic>",
        "content": [{"type": "text", "text": "API Error"}],
    }
    data = _line(type="assistant", uuid="a", message=message)
    assert ADAPTER.parse(Path("s1.jsonl"), data, offset=0, state={}, final=True).turns == []


def test_a_user_message_rewritten_with_a_new_uuid_keeps_its_key() -> None:
    original = ADAPTER.parse(Path("s1.jsonl"), _user("u1", "same"), offset=0, state={}).turns
    rewrite = _user("u-new", "same", sessionId="s2")
    replayed = ADAPTER.parse(Path("s2.jsonl"), rewrite, offset=0, state={}).turns
    assert original[0].external_uuid == replayed[0].external_uuid
    later = _user("u9", "same", timestamp="2026-01-01T00:10:00.000Z")
    again = ADAPTER.parse(Path("s1.jsonl"), later, offset=0, state={}).turns
    assert again[0].external_uuid != original[0].external_uuid


def test_roots_and_owns_follow_the_claude_projects_layout(tmp_path: Path) -> None:
    home = tmp_path
    (root,) = ADAPTER.roots(home)
    assert root == home / ".claude" / "projects"
    project = root / "-home-u-proj"
    owned = [
        project / "0b7e7c1e-1111-2222-3333-444455556666.jsonl",
        project / "agent-a1b2c3d.jsonl",
        project / "0b7e7c1e-1111-2222-3333-444455556666/subagents/agent-a1652dfb6e66d4daa.jsonl",
    ]
    rejected = [
        project / "0b7e7c1e-1111-2222-3333-444455556666/subagents/agent-acompact-fffbd0.jsonl",
        project / "agent-acompact-fffbd0.jsonl",
        project / "0b7e7c1e-1111-2222-3333-444455556666/subagents/agent-a1.meta.json",
        project / "0b7e7c1e-1111-2222-3333-444455556666/tool-results/x.txt",
        project / "0b7e7c1e-1111-2222-3333-444455556666/subagents/workflows/w/journal.jsonl",
        root / "stray.jsonl",
        home / ".claude" / "history.jsonl",
        home / ".codex" / "sessions" / "rollout-x.jsonl",
    ]
    assert all(ADAPTER.owns(p, home) for p in owned)
    assert not any(ADAPTER.owns(p, home) for p in rejected)
