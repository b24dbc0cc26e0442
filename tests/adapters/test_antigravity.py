"""Antigravity CLI adapter: the real (redacted) agy transcript, step keys, model tracking, drift."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents_memory.adapters.antigravity import AntigravityAdapter
from agents_memory.adapters.base import ParseResult

FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "transcripts"
    / "antigravity"
    / "agent-sessions_agy_cli_transcript_redacted.jsonl"
)
CONVERSATION = "6f1c2b9e-0d4a-4c1e-9a53-2f1e7b3c8d10"

adapter = AntigravityAdapter()


def transcript(
    home: Path, name: str = "transcript.jsonl", product: str = "antigravity-cli"
) -> Path:
    logs = home / ".gemini" / product / "brain" / CONVERSATION / ".system_generated" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    return logs / name


def parse(path: Path, data: bytes | None = None, **kwargs: Any) -> ParseResult:
    kwargs.setdefault("offset", 0)
    kwargs.setdefault("state", {})
    return adapter.parse(path, path.read_bytes() if data is None else data, **kwargs)


def jsonl(*records: dict[str, Any] | str) -> bytes:
    lines = (r if isinstance(r, str) else json.dumps(r) for r in records)
    return "".join(f"{line}\n" for line in lines).encode()


def step(index: int, kind: str, content: str | None = None, **extra: Any) -> dict[str, Any]:
    record = {"step_index": index, "source": "MODEL", "type": kind, "status": "DONE"}
    record["created_at"] = "2026-06-26T21:16:16Z"
    if content is not None:
        record["content"] = content
    return {**record, **extra}


def request(text: str) -> str:
    return f"<USER_REQUEST>\n{text}\n</USER_REQUEST>"


def model_change(old: str, new: str) -> str:
    return (
        "<USER_SETTINGS_CHANGE>\n"
        f"The user changed setting `Model Selection` from {old} to {new}.\n"
        "</USER_SETTINGS_CHANGE>"
    )


# -- the real fixture ----------------------------------------------------------------------------


def test_real_fixture_yields_the_request_and_the_planner_answer(tmp_path: Path) -> None:
    path = transcript(tmp_path)
    shutil.copy(FIXTURE, path)

    result = parse(path, home=tmp_path)

    # Read from the file with jq: step 0 is the only USER_INPUT with <USER_REQUEST> (line 17 is a
    # placeholder), step 6 is the only PLANNER_RESPONSE with content (2 and 8 are tool calls).
    assert [(t.external_uuid, t.role, t.text) for t in result.turns] == [
        (f"antigravity:{CONVERSATION}:0", "user", "List the files."),
        (f"antigravity:{CONVERSATION}:6", "assistant", "The directory contains a.txt and b.txt."),
    ]
    assert {t.model for t in result.turns} == {"Gemini 3.5 Flash (Medium)"}
    assert {t.session_id for t in result.turns} == {CONVERSATION}
    assert [t.message_at for t in result.turns] == [
        datetime(2026, 6, 26, 21, 16, 16, tzinfo=UTC),
        datetime(2026, 6, 26, 21, 16, 21, tzinfo=UTC),
    ]
    assert "USER_SETTINGS_CHANGE" in (result.turns[0].raw_text or "")
    assert result.turns[1].raw_text is None
    assert (result.issues, dict(result.unknown_kinds)) == ([], {})
    assert result.resume_offset == FIXTURE.stat().st_size
    assert result.state["model"] == "Gemini 3.5 Flash (Medium)"


def test_settings_change_alone_is_no_turn_but_switches_the_model(tmp_path: Path) -> None:
    path = transcript(tmp_path)
    first = jsonl(
        step(0, "USER_INPUT", request("Plan it") + model_change("None", "Gemini 3.5 Flash (Low)")),
        step(1, "PLANNER_RESPONSE", "Plan ready."),
        step(2, "USER_INPUT", model_change("Gemini 3.5 Flash (Low)", "Claude Sonnet 4.6")),
    )
    second = jsonl(
        step(3, "USER_INPUT", request("Now build it")), step(4, "PLANNER_RESPONSE", "Done.")
    )

    one = parse(path, first)
    two = parse(path, second, offset=len(first), state=one.state)

    assert [(t.text, t.model) for t in one.turns + two.turns] == [
        ("Plan it", "Gemini 3.5 Flash (Low)"),
        ("Plan ready.", "Gemini 3.5 Flash (Low)"),
        ("Now build it", "Claude Sonnet 4.6"),
        ("Done.", "Claude Sonnet 4.6"),
    ]


def test_thinking_tool_calls_and_system_steps_are_not_turns(tmp_path: Path) -> None:
    data = jsonl(
        step(0, "PLANNER_RESPONSE", thinking="secret plan", tool_calls=[{"name": "list_dir"}]),
        step(1, "CHECKPOINT", "# Resuming from a compaction"),
        step(2, "SYSTEM_MESSAGE", "<SYSTEM_MESSAGE>x</SYSTEM_MESSAGE>"),
        step(3, "BROWSER_CLICK", "clicked"),
        step(4, "USER_INPUT", "no wrapper here"),
    )

    result = parse(transcript(tmp_path), data)

    assert result.turns == []
    assert not result.unknown_kinds


def test_new_step_types_are_counted_as_unknown(tmp_path: Path) -> None:
    data = jsonl(step(0, "TELEPORT"), step(1, "TELEPORT"), {"step_index": 2})

    result = parse(transcript(tmp_path), data)

    assert result.unknown_kinds == {"TELEPORT": 2, "(no type)": 1}


def test_rewritten_step_is_one_turn_with_the_later_text(tmp_path: Path) -> None:
    path = transcript(tmp_path)
    running = jsonl(step(5, "PLANNER_RESPONSE", "Partial", status="RUNNING"))
    done = jsonl(step(5, "PLANNER_RESPONSE", "Partial answer, complete."))

    once = parse(path, running + done)
    later = parse(path, done, offset=len(running))

    assert [(t.external_uuid, t.text) for t in once.turns] == [
        (f"antigravity:{CONVERSATION}:5", "Partial answer, complete.")
    ]
    assert later.turns == once.turns


def test_step_without_an_index_is_an_issue(tmp_path: Path) -> None:
    data = jsonl({"type": "PLANNER_RESPONSE", "content": "orphan"})

    result = parse(transcript(tmp_path), data)

    assert result.turns == []
    assert [i.offset for i in result.issues] == [0]


def test_malformed_line_is_reported_and_later_lines_still_parse(tmp_path: Path) -> None:
    head = jsonl(step(0, "USER_INPUT", request("before")))
    data = head + b'{"step_index": 1, "type": "PLAN\n' + jsonl(step(2, "PLANNER_RESPONSE", "after"))

    result = parse(transcript(tmp_path), data)

    assert [t.text for t in result.turns] == ["before", "after"]
    assert [i.offset for i in result.issues] == [len(head)]


def test_empty_buffer_yields_nothing_and_keeps_the_model(tmp_path: Path) -> None:
    result = parse(transcript(tmp_path), b"", offset=90, state={"model": "Gemini 3.5 Flash"})

    assert (result.turns, result.resume_offset, result.issues) == ([], 90, [])
    assert result.state["model"] == "Gemini 3.5 Flash"


# -- roots and owns ------------------------------------------------------------------------------


def test_roots_cover_every_antigravity_directory(tmp_path: Path) -> None:
    (tmp_path / ".gemini" / "antigravity-next").mkdir(parents=True)
    (tmp_path / ".gemini" / "tmp").mkdir()
    gemini = tmp_path / ".gemini"

    assert adapter.roots(tmp_path) == [
        gemini / "antigravity",
        gemini / "antigravity-cli",
        gemini / "antigravity-ide",
        gemini / "antigravity-next",
    ]


def test_owns_brain_transcripts_preferring_the_full_one(tmp_path: Path) -> None:
    short = transcript(tmp_path)
    full = transcript(tmp_path, "transcript_full.jsonl")
    brain = short.parents[2]

    assert adapter.owns(short, tmp_path)  # alone, the short transcript is the only source
    full.write_bytes(b"")
    assert adapter.owns(full, tmp_path)
    assert not adapter.owns(short, tmp_path)
    assert adapter.owns(transcript(tmp_path, product="antigravity"), tmp_path)
    assert not adapter.owns(brain / "task.md", tmp_path)
    assert not adapter.owns(brain / "messages" / "transcript.jsonl", tmp_path)
    assert not adapter.owns(tmp_path / ".gemini" / "tmp" / "p" / "chats" / "x.jsonl", tmp_path)
