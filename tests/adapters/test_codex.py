"""Codex CLI adapter: real fixtures, stable ids, plain vs zst, drift, roots/owns.

Expected values below were read from the fixture files with jq/python, not from the parser.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import zstandard

from agents_memory.adapters.base import ParseResult, Turn
from agents_memory.adapters.codex import CodexAdapter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CODEX = FIXTURES / "codex"
GENERATED = FIXTURES / "generated" / "codex" / "0.171.0"
ADAPTER = CodexAdapter()

ALL_FILES = sorted([*CODEX.glob("*.jsonl"), *GENERATED.glob("*.jsonl")])
VSCODE = CODEX / "vct_v0.39.0_vscode_unicode.jsonl"
AGENTS_MD = CODEX / "claude-code-transcripts_v0.77.0_agents_md_env_context_trimmed.jsonl"
COMPOSITE = CODEX / "agent-sessions_composite_v0.1xx_record_types.jsonl"
HELLO = next(GENERATED.glob("headless-hello-rollout-*.jsonl"))
TOOL = next(GENERATED.glob("headless-mcp-tool-rollout-*.jsonl"))
TUI = next(GENERATED.glob("tui-hello-rollout-*.jsonl"))
FAKE_REPLY = "FAKE-REPLY: hello from the fake model. marker_seen=yes"


def parse(path: Path, data: bytes | None = None) -> ParseResult:
    raw = path.read_bytes() if data is None else data
    return ADAPTER.parse(path, raw, offset=0, state={}, final=True)


def by_role(turns: list[Turn], role: str) -> list[Turn]:
    return [t for t in turns if t.role == role]


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_every_codex_fixture_parses_without_error(path: Path) -> None:
    result = parse(path)
    assert result.issues == []
    assert result.resume_offset == path.stat().st_size
    assert all(t.platform == "codex-cli" and t.text for t in result.turns)


def test_vscode_session_keeps_the_request_inside_the_ide_preamble() -> None:
    turns = parse(VSCODE).turns
    users, assistants = by_role(turns, "user"), by_role(turns, "assistant")
    assert len(users) == 1
    assert users[0].text.startswith("幫我檢查一下 go.mod 裡面 為何 go版本是 1.24?")
    assert users[0].text.endswith("最後幫我把 TODO.md 刪除")
    assert users[0].raw_text is not None
    assert users[0].raw_text.startswith("# Context from my IDE setup:")
    # 9 agent_message events; their 7 response_item twins are not read.
    assert len(assistants) == 9
    assert assistants[0].text.startswith("I\u2019ll scan the repo for go.mod and Python version")
    assert assistants[-1].text.startswith("Here\u2019s what I changed and what I found.")
    assert {t.model for t in assistants} == {"aide-gpt-5"}
    assert {t.session_id for t in turns} == {"01996135-afde-7911-97f0-d863511eca56"}
    assert {t.cwd for t in turns} == {"/proj/ds906659/gai/claude-code"}
    assert not any(t.subagent for t in turns)


def test_agents_md_and_environment_context_are_not_user_turns() -> None:
    turns = parse(AGENTS_MD).turns
    assert [(t.role, t.text) for t in turns] == [
        (
            "user",
            "can you analyse the MD files in this directory and determine if the info we have "
            "is clear enough to start planning the migration?",
        )
    ]
    assert turns[0].session_id == "019b64e5-57fa-7463-b644-fba7e456f905"
    assert turns[0].message_at is not None
    assert turns[0].message_at.isoformat() == "2025-12-28T12:21:44.491000+00:00"


@pytest.mark.parametrize(
    ("path", "session", "user", "assistant"),
    [
        (
            HELLO,
            "01a22b1d-5a76-7a01-8be7-dda1ef79159d",
            ("01a22b1d-5f37-7920-b083-9f8a7bf3b530", "hello"),
            ("msg_78a3d4c7e3324cef", FAKE_REPLY),
        ),
        (
            TOOL,
            "01a22b1d-64c3-7940-bf5e-7f991e961e15",
            ("01a22b1d-65c0-7e41-a8ff-606bf8e4fea8", "USE_TOOL: call the fake echo tool"),
            (
                "msg_031017d6f3254afb",
                FAKE_REPLY + " tool_result='Wall time: 0.0028 seconds\\nOutput: MCP-ECHO: "
                "ping-from-fake-model'",
            ),
        ),
        (
            TUI,
            "01a22b1d-6bea-7bf2-bc51-4f7b69d1b1ed",
            ("01a22b1d-8c61-7182-94e8-9f0d03130657", "hello from the TUI"),
            ("msg_efa8c1c73f8e4937", FAKE_REPLY),
        ),
    ],
    ids=["headless", "mcp-tool", "tui"],
)
def test_v0171_turns_come_once_from_item_completed_items(
    path: Path, session: str, user: tuple[str, str], assistant: tuple[str, str]
) -> None:
    (user_id, user_text), (assistant_id, assistant_text) = user, assistant
    turns = parse(path).turns
    assert [(t.role, t.text) for t in turns] == [("user", user_text), ("assistant", assistant_text)]
    assert [t.external_uuid for t in turns] == [
        f"codex-cli:{session}:{user_id}",
        f"codex-cli:{session}:{assistant_id}",
    ]
    assert {t.session_id for t in turns} == {session}
    assert [t.model for t in turns] == [None, "fake-model"]
    assert {t.cwd for t in turns} == {"/home/dev/proj-codex"}


def test_composite_drift_file_counts_no_unknown_kinds_and_never_doubles_a_turn() -> None:
    result = parse(COMPOSITE)
    assert result.unknown_kinds == {}
    texts = [(t.role, t.text) for t in result.turns]
    assert texts.count(("user", "List the files")) == 1  # event + response_item twin
    assert texts.count(("assistant", "Found 2 files.")) == 1
    assert result.turns[1].model == "gpt-5.6-luna"


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_zst_rollout_yields_the_same_turns_as_the_plain_file(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    zst = tmp_path / f"{path.name}.zst"
    zst.write_bytes(zstandard.ZstdCompressor(level=3).compress(data))
    assert ADAPTER.read_mode(zst) == "whole"
    assert ADAPTER.read_mode(path) == "append"
    compressed = ADAPTER.parse(zst, zst.read_bytes(), offset=0, state={}, final=True)
    assert compressed.issues == []
    assert compressed.turns == parse(path, data).turns


def test_streamed_multi_frame_zst_decompresses_in_full(tmp_path: Path) -> None:
    data = VSCODE.read_bytes()
    half = data.index(b"\n", len(data) // 2) + 1
    compressor = zstandard.ZstdCompressor()
    frames = compressor.compress(data[:half]) + compressor.compress(data[half:])
    zst = tmp_path / "rollout-x.jsonl.zst"
    result = ADAPTER.parse(zst, frames, offset=0, state={}, final=True)
    assert result.turns == parse(VSCODE).turns


def test_zst_rollout_whose_last_line_lacks_a_newline_still_yields_that_line(
    tmp_path: Path,
) -> None:
    data = _meta() + _user_event("first") + _agent_event("last").rstrip(b"\n")
    zst = tmp_path / "rollout-x.jsonl.zst"
    result = ADAPTER.parse(zst, zstandard.ZstdCompressor().compress(data), offset=0, state={})
    assert [t.text for t in result.turns] == ["first", "last"]


def test_corrupt_zst_is_an_issue_not_an_exception(tmp_path: Path) -> None:
    result = ADAPTER.parse(tmp_path / "rollout-x.jsonl.zst", b"not zstd", offset=0, state={})
    assert result.turns == []
    assert len(result.issues) == 1


def _rec(kind: str, payload: dict[str, Any], ts: str = "2026-01-01T00:00:00.000Z") -> bytes:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}).encode() + b"\n"


def _meta(source: object = "cli", **extra: object) -> bytes:
    payload = {"id": "sess-1", "cwd": "/repo", "source": source, **extra}
    return _rec("session_meta", payload)


def _user_event(text: str) -> bytes:
    return _rec("event_msg", {"type": "user_message", "message": text, "images": []})


def _agent_event(text: str) -> bytes:
    return _rec("event_msg", {"type": "agent_message", "message": text})


PATH = Path("/h/.codex/sessions/2026/01/01/rollout-2026-01-01T00-00-00-sess-1.jsonl")


def test_replacement_history_and_response_items_are_never_ingested() -> None:
    old = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "OLD"}]}
    data = (
        _meta()
        + _rec("turn_context", {"model": "gpt-x", "cwd": "/repo"})
        + _rec("response_item", old)
        + _rec("compacted", {"message": "sum", "replacement_history": [old, old]})
        + _user_event("new question")
        + _agent_event("new answer")
    )
    result = ADAPTER.parse(PATH, data, offset=0, state={})
    assert [t.text for t in result.turns] == ["new question", "new answer"]
    assert result.turns[1].model == "gpt-x"


def test_legacy_events_are_ignored_once_the_file_writes_message_items() -> None:
    item = {
        "type": "item_completed",
        "item": {"type": "UserMessage", "id": "u-1", "content": [{"type": "text", "text": "q"}]},
    }
    data = _meta() + _rec("event_msg", item) + _user_event("q")
    result = ADAPTER.parse(PATH, data, offset=0, state={})
    assert [t.external_uuid for t in result.turns] == ["codex-cli:sess-1:u-1"]


def test_subagent_thread_is_flagged_with_role_and_model() -> None:
    source = {"subagent": {"thread_spawn": {"parent_thread_id": "p", "agent_role": "explorer"}}}
    data = (
        _meta(source)
        + _rec("turn_context", {"model": "gpt-mini"})
        + _user_event("look around")
        + _agent_event("found it")
    )
    turns = ADAPTER.parse(PATH, data, offset=0, state={}).turns
    assert all(t.subagent and t.subagent_role == "explorer" for t in turns)
    assert [t.subagent_model for t in turns] == [None, "gpt-mini"]


@pytest.mark.parametrize("kind", ["compact", "memory_consolidation"])
def test_internal_summariser_threads_yield_no_turns(kind: str) -> None:
    data = _meta({"subagent": kind}) + _user_event("summarise") + _agent_event("summary")
    assert ADAPTER.parse(PATH, data, offset=0, state={}).turns == []


def test_review_subagent_keeps_its_kind_as_role() -> None:
    data = _meta({"subagent": "review"}) + _agent_event("LGTM")
    (turn,) = ADAPTER.parse(PATH, data, offset=0, state={}).turns
    assert turn.subagent
    assert turn.subagent_role == "review"


@pytest.mark.parametrize(
    "text",
    [
        "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>",
        "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>",
        "<user_instructions>be terse</user_instructions>",
        "# Context from my IDE setup:\n\n## Active file: a.py\n",
        "   ",
    ],
)
def test_injected_user_messages_are_skipped(text: str) -> None:
    data = _meta() + _user_event(text)
    assert ADAPTER.parse(PATH, data, offset=0, state={}).turns == []


def test_malformed_line_is_reported_with_its_offset_and_later_lines_still_parse() -> None:
    head = _meta() + _user_event("one")
    data = head + b'{"timestamp":"x","type":"event_msg","payload":{\n' + _user_event("two")
    result = ADAPTER.parse(PATH, data, offset=50, state={})
    assert [t.text for t in result.turns] == ["one", "two"]
    assert [i.offset for i in result.issues] == [50 + len(head)]
    assert result.turns[0].external_uuid == f"codex-cli:sess-1:@{50 + len(_meta())}"


def test_unknown_kinds_are_counted() -> None:
    data = _meta() + _rec("hologram", {}) + _rec("world_state", {}) + _rec("hologram", {})
    assert ADAPTER.parse(PATH, data, offset=0, state={}).unknown_kinds == {"hologram": 2}


def test_empty_buffer_yields_nothing_and_keeps_the_offset() -> None:
    result = ADAPTER.parse(PATH, b"", offset=77, state={"session_id": "s"})
    assert result.turns == []
    assert result.resume_offset == 77
    assert result.state["session_id"] == "s"


def test_session_id_falls_back_to_the_uuid_in_the_file_name() -> None:
    path = Path("rollout-2026-11-30T06-21-13-01a22b1d-5a76-7a01-8be7-dda1ef79159d.jsonl")
    (turn,) = ADAPTER.parse(path, _user_event("hi"), offset=0, state={}).turns
    assert turn.session_id == "01a22b1d-5a76-7a01-8be7-dda1ef79159d"


def test_roots_and_owns_accept_plain_and_zst_rollouts_at_any_depth(tmp_path: Path) -> None:
    home = tmp_path
    (root,) = ADAPTER.roots(home)
    assert root == home / ".codex" / "sessions"
    owned = [
        root / "2026/01/02/rollout-2026-01-02T10-00-00-0199.jsonl",
        root / "2026/01/02/rollout-2026-01-02T10-00-00-0199.jsonl.zst",
        root / "rollout-2025-05-01T10-00-00-old.jsonl",
    ]
    rejected = [
        root / "2026/01/02/rollout-x.json",
        root / "2026/01/02/notes.jsonl",
        root / "2026/01/02/rollout-x.jsonl.tmp",
        home / ".codex" / "archived_sessions" / "rollout-x.jsonl",
        home / ".codex" / "session_index.jsonl",
    ]
    assert all(ADAPTER.owns(p, home) for p in owned)
    assert not any(ADAPTER.owns(p, home) for p in rejected)


@pytest.mark.parametrize(
    ("originator", "platform"),
    [
        ("Codex Desktop", "codex-desktop"),
        ("codex_desktop", "codex-desktop"),
        ("codex_cli_rs", "codex-cli"),
        ("codex_vscode", "codex-cli"),
        (None, "codex-cli"),
    ],
)
def test_turns_are_labelled_by_the_app_that_wrote_them(
    originator: str | None, platform: str
) -> None:
    data = _meta(originator=originator) + _user_event("hello") + _agent_event("hi")
    turns = ADAPTER.parse(PATH, data, offset=0, state={}).turns
    assert [t.platform for t in turns] == [platform, platform]
    # Keys keep the adapter's prefix, so a relabelled thread never doubles its turns.
    assert all(t.external_uuid.startswith("codex-cli:sess-1:") for t in turns)
    assert ADAPTER.platforms == ("codex-cli", "codex-desktop")


def test_every_platform_an_adapter_writes_is_known_to_the_registry() -> None:
    from agents_memory.adapters import all_platforms

    assert {"codex-cli", "codex-desktop", "claude-code"} <= set(all_platforms())
    assert all_platforms(("codex-cli",)) == ["codex-cli", "codex-desktop"]
