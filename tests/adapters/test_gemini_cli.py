"""Gemini CLI adapter: real fixtures (public and written by Gemini CLI 0.61), upserts, drift."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agents_memory.adapters.base import ParseResult
from agents_memory.adapters.gemini_cli import GeminiCliAdapter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
PUBLIC = FIXTURES / "gemini-cli"
GENERATED = FIXTURES / "generated" / "gemini" / "0.61.0"

adapter = GeminiCliAdapter()


def parse(path: Path, data: bytes | None = None, **kwargs: Any) -> ParseResult:
    kwargs.setdefault("offset", 0)
    kwargs.setdefault("state", {})
    return adapter.parse(path, path.read_bytes() if data is None else data, **kwargs)


def jsonl(*records: dict[str, Any] | str) -> bytes:
    lines = (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records)
    return "".join(f"{line}\n" for line in lines).encode()


META = {"sessionId": "s-1", "projectHash": "ab" * 32, "startTime": "2026-05-01T10:00:00.000Z"}


def user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "timestamp": "2026-05-01T10:00:01.000Z", "type": "user", "content": text}


def reply(mid: str, text: str, model: str = "gemini-3-flash") -> dict[str, Any]:
    return {
        "id": mid,
        "timestamp": "2026-05-01T10:00:02.000Z",
        "type": "gemini",
        "content": text,
        "model": model,
    }


def session_file(home: Path, project: str = "proj", name: str = "session-x.jsonl") -> Path:
    path = home / ".gemini" / "tmp" / project / "chats" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


# -- real fixtures -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    path: Path
    session: str
    users: int
    assistants: int
    first: str
    last: str
    model: str


# Values read from the files with jq (see SOURCES.md), not from this adapter.
EXPECTED = [
    Expected(
        PUBLIC / "vct_jsonl_v0.39plus_init_tools.jsonl",
        "0ab84937-9fe7-4284-986a-33c832af0b6a",
        users=1,  # "/init" (a command) and "System: Please continue." are not typed prompts
        assistants=2,  # edf94f05 (appended twice) and 0752be32; the rest are tool-only ""
        first="我已經完成了對專案的深入分析",
        last="幫我做一個小修改 請幫我將上面確保執行時要透過 uv run 來執行 避免環境有問題",
        model="gemini-3-flash-preview",
    ),
    Expected(
        PUBLIC / "agent-sessions_jsonl_v040_redacted.jsonl",
        "gemini_stage0_jsonl",
        users=1,
        assistants=1,
        first="Say hello and list files.",
        last="Hello! I listed the files.",
        model="gemini-3-flash-preview",
    ),
    Expected(
        PUBLIC / "vct_legacy_json_2025-10_gemini-2.5-pro.json",
        "eefc44a3-0832-4bc0-ac33-fa668f038213",
        users=1,
        assistants=18,
        first="請幫我檢查一下所有代碼是否足夠簡潔 而不是一堆冗餘代碼",
        last="我已經根據 `cargo clippy` 的建議",
        model="gemini-2.5-pro",
    ),
    Expected(
        PUBLIC / "vct_legacy_json_2026-03_parts_content_kind.json",
        "8a20078e-2d5e-4f81-a640-9b879bbb7e6d",
        users=1,
        assistants=1,  # two of the three gemini records have empty content
        first="請幫我依照專案實際狀況更新 README.md README.zh-CN.md README.zh-TW.md",
        last="已經幫你整理好囉",
        model="gemini-3.1-pro-preview-customtools",
    ),
    Expected(
        GENERATED / "headless-hello-session-2026-11-30T06-21-10b4860a.jsonl",
        "10b4860a-b75f-46ff-b687-7688f15ed6ee",
        users=1,  # the $set checkpoint's <session_context> preamble is not a prompt
        assistants=1,
        first="hello",
        last="FAKE-REPLY: hello from the fake model. marker_seen=yes",
        model="gemini-3.8-flash",
    ),
    Expected(
        GENERATED / "headless-mcp-tool-session-2026-11-30T06-21-dd6c4b3b.jsonl",
        "dd6c4b3b-c9da-4d1e-bde0-4eb29ba86984",
        users=1,  # the functionResponse user record is a tool result
        assistants=1,  # 9bc13930 is tool-only (twice)
        first="USE_TOOL: call the fake echo tool",
        last="FAKE-REPLY: hello from the fake model. marker_seen=yes tool_result=",
        model="gemini-3.8-flash",
    ),
    Expected(
        GENERATED / "tui-hello-session-2026-11-30T06-21-4141756c.jsonl",
        "4141756c-bbe2-4da5-bae4-beab205048e8",
        users=1,  # e61cd334 holds only the hook's <hook_context>
        assistants=1,
        first="hello from the TUI",
        last="FAKE-REPLY: hello from the fake model. marker_seen=yes",
        model="gemini-3.8-flash",
    ),
]


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda e: e.path.name)
def test_real_fixture_yields_the_expected_turns(expected: Expected) -> None:
    result = parse(expected.path)

    roles = [t.role for t in result.turns]
    assert (roles.count("user"), roles.count("assistant")) == (
        expected.users,
        expected.assistants,
    )
    assert result.turns[0].text.startswith(expected.first)
    assert result.turns[-1].text.startswith(expected.last)
    assert {t.session_id for t in result.turns} == {expected.session}
    assert all(t.external_uuid.startswith(f"gemini-cli:{expected.session}:") for t in result.turns)
    assert {t.model for t in result.turns if t.role == "assistant"} == {expected.model}
    assert all(t.message_at is not None and t.message_at.tzinfo for t in result.turns)
    assert not any(
        "<hook_context>" in t.text or "<session_context>" in t.text for t in result.turns
    )
    assert len({t.external_uuid for t in result.turns}) == len(result.turns)
    assert result.issues == []
    assert not result.unknown_kinds
    assert result.resume_offset == expected.path.stat().st_size


def test_generated_hook_context_is_cut_from_the_prompt_it_prefixes() -> None:
    result = parse(GENERATED / "headless-hello-session-2026-11-30T06-21-10b4860a.jsonl")

    first = result.turns[0]
    assert first.external_uuid.endswith(":e806a786-f311-4a7f-8641-282aa6c09f8b")
    assert (first.role, first.text, first.raw_text) == ("user", "hello", None)


def final_texts(results: list[ParseResult]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for result in results:
        texts.update((t.external_uuid, t.text) for t in result.turns)
    return texts


def test_legacy_json_is_read_whole_and_jsonl_appended() -> None:
    assert adapter.read_mode(Path("session-2025-10-05T07-11-eefc44a3.json")) == "whole"
    assert adapter.read_mode(Path("session-2026-04-23T12-52-0ab84937.jsonl")) == "append"


def test_legacy_and_migrated_jsonl_share_keys(tmp_path: Path) -> None:
    legacy = {**META, "messages": [user("u1", "Remember the port is 8080"), reply("g1", "Noted.")]}
    old = tmp_path / "session-a.json"
    new = tmp_path / "session-a.jsonl"

    from_json = parse(old, json.dumps(legacy).encode())
    from_jsonl = parse(
        new, jsonl(META, user("u1", "Remember the port is 8080"), reply("g1", "Noted."))
    )

    assert [t.external_uuid for t in from_json.turns] == [t.external_uuid for t in from_jsonl.turns]
    assert from_json.turns[0].external_uuid == "gemini-cli:s-1:u1"


def test_legacy_json_caught_mid_write_consumes_nothing(tmp_path: Path) -> None:
    data = (PUBLIC / "vct_legacy_json_2025-10_gemini-2.5-pro.json").read_bytes()[:5000]

    result = parse(tmp_path / "session-b.json", data)

    assert result.turns == []
    assert result.resume_offset == 0
    assert [i.offset for i in result.issues] == [0]


# -- drift: upserts, $set, $rewindTo, unknown kinds, malformed lines ---------------------------


def test_reappended_message_id_is_one_turn_with_the_later_text(tmp_path: Path) -> None:
    path = tmp_path / "session-c.jsonl"
    first = jsonl(META, user("u1", "Fix the bug"), reply("g1", "Looking"))
    later = jsonl(reply("g1", "Looking. Fixed in parser.py"))

    once = parse(path, first + later)
    chunked = [parse(path, first)]
    chunked.append(parse(path, later, offset=len(first), state=chunked[0].state))

    assert [(t.external_uuid, t.text) for t in once.turns] == [
        ("gemini-cli:s-1:u1", "Fix the bug"),
        ("gemini-cli:s-1:g1", "Looking. Fixed in parser.py"),
    ]
    assert chunked[1].turns[0].external_uuid == "gemini-cli:s-1:g1"
    assert final_texts(chunked) == final_texts([once])


def test_later_empty_version_of_a_message_keeps_the_captured_text(tmp_path: Path) -> None:
    data = jsonl(META, reply("g1", "Answer"), reply("g1", ""))

    assert [t.text for t in parse(tmp_path / "session-d.jsonl", data).turns] == ["Answer"]


def test_set_checkpoint_messages_are_upserted_and_metadata_kept(tmp_path: Path) -> None:
    checkpoint = {
        "$set": {
            "messages": [user("u1", "Summary request"), reply("g1", "Summary")],
            "lastUpdated": "2026-05-01T11:00:00.000Z",
        }
    }
    data = jsonl(META, user("u0", "First ask"), checkpoint, {"$set": {"summary": "s"}})

    result = parse(tmp_path / "session-e.jsonl", data)

    assert [t.text for t in result.turns] == ["First ask", "Summary request", "Summary"]
    assert result.state["session_id"] == "s-1"
    assert result.state["project_hash"] == "ab" * 32
    assert not result.unknown_kinds


def test_rewind_keeps_what_was_said_before_it(tmp_path: Path) -> None:
    data = jsonl(
        META,
        user("u1", "Use tabs"),
        reply("g1", "Tabs it is"),
        {"$rewindTo": "u1"},
        user("u2", "Use spaces"),
    )

    result = parse(tmp_path / "session-f.jsonl", data)

    assert [t.text for t in result.turns] == ["Use tabs", "Tabs it is", "Use spaces"]
    assert not result.unknown_kinds


def test_unknown_message_types_and_records_are_counted(tmp_path: Path) -> None:
    odd = {"id": "x1", "type": "compression", "content": "?"}
    data = jsonl(META, odd, {"$delete": "u1"}, {"something": 1}, {"id": "i1", "type": "info"})

    result = parse(tmp_path / "session-g.jsonl", data)

    assert result.turns == []
    assert result.unknown_kinds == {"message:compression": 1, "$delete": 1, "record": 1}


def test_malformed_line_is_reported_and_later_lines_still_parse(tmp_path: Path) -> None:
    head = jsonl(META, user("u1", "before"))
    data = head + b'{"id": "u2", "type": "us\n' + jsonl(reply("g1", "after"))

    result = parse(tmp_path / "session-h.jsonl", data)

    assert [t.text for t in result.turns] == ["before", "after"]
    assert [i.offset for i in result.issues] == [len(head)]


def test_empty_buffer_yields_nothing_and_keeps_state(tmp_path: Path) -> None:
    state = {"session_id": "s-1", "model": "gemini-3-flash", "cwd": "/p", "subagent": False}

    result = parse(tmp_path / "session-i.jsonl", b"", offset=120, state=state)

    assert (result.turns, result.resume_offset, result.issues) == ([], 120, [])
    assert result.state["session_id"] == "s-1"
    assert result.state["model"] == "gemini-3-flash"


def test_unterminated_last_line_waits_unless_final(tmp_path: Path) -> None:
    done = jsonl(META, user("u1", "complete"))
    data = done + json.dumps(reply("g1", "partial")).encode()
    path = tmp_path / "session-j.jsonl"

    assert parse(path, data).resume_offset == len(done)
    assert [t.text for t in parse(path, data, final=True).turns] == ["complete", "partial"]


# -- text rules ----------------------------------------------------------------------------------


def test_display_content_wins_and_commands_and_tool_results_are_skipped(tmp_path: Path) -> None:
    typed = {**user("u1", "expanded"), "displayContent": [{"text": "What does @a.py do?"}]}
    command = {**user("u2", "long generated prompt"), "displayContent": [{"text": "/init"}]}
    tool = user("u3", "ignored")
    tool["content"] = [{"functionResponse": {"name": "read_file", "response": {}}}]
    data = jsonl(META, typed, command, tool, user("u4", "System: Please continue."))

    result = parse(tmp_path / "session-k.jsonl", data)

    assert [t.text for t in result.turns] == ["What does @a.py do?"]


def test_referenced_files_are_cut_and_kept_in_raw_text(tmp_path: Path) -> None:
    sent = "Explain a.py\n--- Content from referenced files ---\nprint(1)"
    result = parse(tmp_path / "session-l.jsonl", jsonl(META, user("u1", sent)))

    assert (result.turns[0].text, result.turns[0].raw_text) == ("Explain a.py", sent)


def test_part_lists_join_text_and_skip_thoughts(tmp_path: Path) -> None:
    message = reply("g1", "")
    message["content"] = [{"text": "plan", "thought": True}, {"text": "Hello "}, {"text": "there"}]

    result = parse(tmp_path / "session-m.jsonl", jsonl(META, message))

    assert result.turns[0].text == "Hello there"


def test_user_turns_carry_the_session_model_and_subagent_flags(tmp_path: Path) -> None:
    meta = {**META, "kind": "subagent"}
    data = jsonl(meta, reply("g1", "Hi", model="gemini-3-pro"), user("u1", "Go on"))

    result = parse(tmp_path / "child.jsonl", data)

    assert [(t.role, t.model, t.subagent) for t in result.turns] == [
        ("assistant", "gemini-3-pro", True),
        ("user", "gemini-3-pro", True),
    ]
    assert result.turns[0].subagent_model == "gemini-3-pro"


def test_read_from_mid_file_without_state_takes_the_session_from_line_one(tmp_path: Path) -> None:
    path = session_file(tmp_path)
    head = jsonl(META, user("u1", "one"))
    path.write_bytes(head + jsonl(reply("g1", "two")))

    result = parse(path, jsonl(reply("g1", "two")), offset=len(head), home=tmp_path)

    assert result.turns[0].external_uuid == "gemini-cli:s-1:g1"


# -- roots, owns, cwd ----------------------------------------------------------------------------


def test_roots_and_owned_paths_under_a_home(tmp_path: Path) -> None:
    chats = tmp_path / ".gemini" / "tmp" / "proj" / "chats"

    assert adapter.roots(tmp_path) == [tmp_path / ".gemini" / "tmp"]
    assert adapter.owns(chats / "session-2026-04-23T12-52-0ab84937.jsonl", tmp_path)
    assert adapter.owns(chats / "session-2025-10-05T07-11-eefc44a3.json", tmp_path)
    assert adapter.owns(chats / "0ab84937-parent" / "child-session.jsonl", tmp_path)
    assert not adapter.owns(chats.parent / "logs.json", tmp_path)
    assert not adapter.owns(chats.parent / "checkpoint-tag.json", tmp_path)
    assert not adapter.owns(chats / "notes.txt", tmp_path)
    assert not adapter.owns(tmp_path / ".gemini" / "antigravity" / "chats" / "x.jsonl", tmp_path)
    assert not adapter.owns(tmp_path / "elsewhere" / "session-x.jsonl", tmp_path)


def test_cwd_comes_from_the_project_root_file(tmp_path: Path) -> None:
    path = session_file(tmp_path, "my-app")
    (path.parents[1] / ".project_root").write_text("/home/u/my-app\n", encoding="utf-8")

    result = parse(path, jsonl(META, user("u1", "hi")), home=tmp_path)

    assert result.turns[0].cwd == "/home/u/my-app"
    assert result.state["cwd"] == "/home/u/my-app"


def test_cwd_comes_from_projects_json_by_slug(tmp_path: Path) -> None:
    path = session_file(tmp_path, "my-app-1")
    registry = {"projects": {"/srv/other/my-app": "my-app", "/home/u/my-app": "my-app-1"}}
    (tmp_path / ".gemini" / "projects.json").write_text(json.dumps(registry), encoding="utf-8")

    result = parse(path, jsonl(META, user("u1", "hi")), home=tmp_path)

    assert result.turns[0].cwd == "/home/u/my-app"


def test_cwd_of_a_legacy_hash_directory_comes_from_projects_json(tmp_path: Path) -> None:
    digest = hashlib.sha256(b"/home/u/old").hexdigest()
    path = session_file(tmp_path, digest, "session-old.json")
    registry = {"projects": {"/home/u/old": "old"}}
    (tmp_path / ".gemini" / "projects.json").write_text(json.dumps(registry), encoding="utf-8")
    record = {**META, "messages": [user("u1", "hi")]}

    result = parse(path, json.dumps(record).encode(), home=tmp_path)

    assert result.turns[0].cwd == "/home/u/old"


def test_cwd_is_none_when_nothing_names_the_project(tmp_path: Path) -> None:
    path = session_file(tmp_path)

    assert parse(path, jsonl(META, user("u1", "hi")), home=tmp_path).turns[0].cwd is None


def test_whole_file_reread_does_not_inherit_the_previous_model(tmp_path: Path) -> None:
    path = tmp_path / "session-n.json"
    data = json.dumps({**META, "messages": [user("u1", "hi"), reply("g1", "yo", "gemini-x")]})

    first = parse(path, data.encode())
    again = parse(path, data.encode(), state=first.state)

    assert again.turns == first.turns
    assert again.turns[0].model is None
