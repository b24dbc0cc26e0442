"""Antigravity's tool use as actions: the real (redacted) agy transcript and a hand-written one in
the documented shape (``fixtures/transcripts/SOURCES.md``). A result step pairs with a call of
its planner response only when their kinds agree, every other result step is an action of its
own, a call nothing answers is one with an unknown outcome; keys survive a read in pieces, a
``RUNNING`` → ``DONE`` re-write and the switch from ``transcript.jsonl`` to
``transcript_full.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents_memory.adapters.antigravity import AntigravityAdapter
from agents_memory.adapters.base import Action, ParseResult
from tests.adapters.test_antigravity import CONVERSATION, FIXTURE, jsonl, step, transcript

HAND_WRITTEN = FIXTURE.parent / "hand_written_agy_actions.jsonl"
TOKEN = "q7Vx2Lm9Rt4Kp8Wz3Nb6Hc1Ys5Df0Ga"
SCRIPT = "/tmp/am-agy/project/migrate_orders.py"
KEY = f"antigravity:{CONVERSATION}"

adapter = AntigravityAdapter()


def _parse(home: Path, data: bytes, name: str = "transcript.jsonl", **kwargs: Any) -> ParseResult:
    kwargs.setdefault("offset", 0)
    kwargs.setdefault("state", {})
    kwargs.setdefault("final", True)
    return adapter.parse(transcript(home, name), data, **kwargs)


def _summary(actions: list[Action]) -> list[tuple[Any, ...]]:
    return [
        (a.key.removeprefix(KEY), a.tool, a.kind, a.targets, a.outcome, a.turn_key) for a in actions
    ]


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": {k: json.dumps(v) for k, v in args.items()}}


def test_the_real_transcripts_result_steps_are_each_one_action(tmp_path: Path) -> None:
    result = _parse(tmp_path, FIXTURE.read_bytes())

    # list_dir (step 2) is answered by LIST_DIRECTORY (3); VIEW_FILE (4) and RUN_COMMAND (5)
    # have no call of their kind in step 2: each is an action of its own. write_file (8) is
    # answered by CODE_ACTION (9), SEARCH_WEB (10) by none. The placeholder lines (all
    # step_index 0) are one step re-written: one GENERIC action, its last version.
    assert _summary(result.actions) == [
        (":2:0", "list_dir", "search", ("/tmp/repo",), "ok", f"{KEY}:2"),
        (":4", "VIEW_FILE", "read", ("/tmp/repo/a.txt",), "ok", f"{KEY}:2"),
        (":5", "RUN_COMMAND", "shell", (), "ok", f"{KEY}:2"),
        (":8:0", "write_file", "write", ("/tmp/repo/notes.md",), "ok", f"{KEY}:8"),
        (":10", "SEARCH_WEB", "web", (), "ok", f"{KEY}:8"),
        (":0", "GENERIC", "other", (), "unknown", None),
    ]
    listing, view, run, write, web, _ = result.actions
    assert view.excerpt is None and listing.excerpt is None  # never a file's or a listing's text
    assert run.excerpt == "a.txt\nb.txt"  # a command's last lines
    assert web.command == "example docs"
    assert write.added is None  # the call did not say what it wrote
    assert {a.session_id for a in result.actions} == {CONVERSATION}
    assert (listing.duration_ms, view.duration_ms) == (1000, None)  # a step alone: no start


def test_the_hand_written_session_yields_write_read_edit_and_the_failing_command(
    tmp_path: Path,
) -> None:
    result = _parse(tmp_path, HAND_WRITTEN.read_bytes())

    assert _summary(result.actions) == [
        (":2:0", "write_to_file", "write", (SCRIPT,), "ok", f"{KEY}:2"),
        (":4:0", "view_file", "read", (SCRIPT,), "ok", f"{KEY}:4"),
        (":4:1", "replace_file_content", "edit", (SCRIPT,), "ok", f"{KEY}:4"),
        (":7:0", "run_command", "shell", (), "error", f"{KEY}:7"),
        (":9:0", "run_command", "shell", (), "ok", f"{KEY}:9"),
        (":9:1", "read_url_content", "web",
         ("https://www.postgresql.org/docs/current/sql-altertable.html",), "unknown", f"{KEY}:9"),
    ]  # fmt: skip
    write, read, edit, failed, tests, _url = result.actions
    assert (write.added, edit.added, edit.removed) == (12, 1, 1)
    assert read.excerpt is None and "import sys" not in repr(result.actions)
    assert failed.command == f"DEPLOY_TOKEN={TOKEN} python3 migrate_orders.py --env staging"
    assert failed.exit_code == 3
    assert failed.excerpt == "error: relation orders_archive does not exist"
    # started in the background (RUNNING), re-written DONE after the next answer: one action
    assert (tests.command, tests.excerpt) == ("python3 -m pytest tests/test_sync.py -q",
                                              ".....\n5 passed in 0.42s")  # fmt: skip
    assert tests.duration_ms == 5000
    assert [t.external_uuid for t in result.turns if t.role == "assistant"] == [
        f"{KEY}:2",
        f"{KEY}:11",
    ]  # the calls of 4, 7 and 9 have no turn of their own: the store places them by time


@pytest.mark.parametrize("source", [FIXTURE, HAND_WRITTEN], ids=["real", "hand-written"])
def test_a_read_in_pieces_yields_the_actions_of_the_whole_read(
    tmp_path: Path, source: Path
) -> None:
    data = source.read_bytes()
    whole = {a.key: a for a in _parse(tmp_path, data).actions}
    for cut in [i + 1 for i, byte in enumerate(data) if byte == ord("\n")][:-1]:
        first = _parse(tmp_path, data[:cut], final=False)
        second = _parse(tmp_path, data[cut:], offset=cut, state=first.state)
        calls = {a.key: a for a in first.actions + second.actions if a.tool is not None}
        results = [a for a in second.actions if a.tool is None]

        assert calls.keys() == whole.keys(), cut
        assert {a.key for a in results} <= {a.key for a in first.actions}, cut
        for result in results:  # what the store completes the earlier call with
            assert (result.outcome, result.exit_code) == (
                whole[result.key].outcome,
                whole[result.key].exit_code,
            ), cut


def test_the_short_and_the_full_transcript_give_the_same_keys(tmp_path: Path) -> None:
    full = HAND_WRITTEN.read_bytes()
    steps = [json.loads(line) for line in full.splitlines()]
    short = jsonl(*[{**s, "content": s["content"][:40]} if "content" in s else s for s in steps])

    keys = [a.key for a in _parse(tmp_path, short).actions]

    assert keys == [a.key for a in _parse(tmp_path, full, "transcript_full.jsonl").actions]


def test_a_result_of_another_kind_is_never_paired_with_a_call(tmp_path: Path) -> None:
    data = jsonl(
        step(0, "USER_INPUT", "<USER_REQUEST>\nlook\n</USER_REQUEST>"),
        step(1, "PLANNER_RESPONSE", tool_calls=[_call("view_file", AbsolutePath="/r/a.py")]),
        step(2, "RUN_COMMAND", "The command completed successfully.\nOutput:\nok\n"),
        step(3, "USER_INPUT", "<USER_REQUEST>\nagain\n</USER_REQUEST>"),
        step(4, "VIEW_FILE", "File Path: `file:///r/b%20c.py`\n1: x\n"),
    )

    actions = _parse(tmp_path, data).actions

    assert _summary(actions) == [
        (":1:0", "view_file", "read", ("/r/a.py",), "unknown", f"{KEY}:1"),
        (":2", "RUN_COMMAND", "shell", (), "ok", f"{KEY}:1"),
        (":4", "VIEW_FILE", "read", ("/r/b c.py",), "ok", None),  # a new request: no call open
    ]


def test_tool_calls_written_as_a_json_string_and_file_uris_are_read(tmp_path: Path) -> None:
    calls = json.dumps([_call("run_command", CommandLine="make test")])
    data = jsonl(
        step(0, "PLANNER_RESPONSE", tool_calls=calls),
        step(1, "RUN_COMMAND", "Command failed. Exit code: 2\nOutput:\nmake: *** [test] Error 2\n"),
        step(2, "PLANNER_RESPONSE", tool_calls=[_call("list_dir", DirectoryPath="file:///r/src")]),
        step(3, "LIST_DIRECTORY", "Error: directory not found"),
    )

    shell, listing = _parse(tmp_path, data).actions

    assert (shell.command, shell.outcome, shell.exit_code) == ("make test", "error", 2)
    assert shell.excerpt == "make: *** [test] Error 2"
    assert (listing.targets, listing.outcome) == (("/r/src",), "error")
    assert listing.excerpt == "Error: directory not found"
