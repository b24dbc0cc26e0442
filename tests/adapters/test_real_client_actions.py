"""Actions from the tool-call fixtures the real clients wrote (``fixtures/transcripts/actions/``,
see its SOURCES.md): each client wrote a file, read it, edited it and ran a shell command that
failed, each in its own tool format; every adapter yields the four with the right kind, the
path relative to the project, the command line, the failure's exit code and error line, and
never a file's contents."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_memory.adapters import get_adapter
from agents_memory.adapters._actions import EXCERPT_CHARS
from agents_memory.adapters.base import ParseResult
from tests.e2e.action_plans import COMMAND_WORDS, ERROR_LINE, EXIT_CODE, SCRIPT, command
from tests.e2e.make_action_fixtures import FIXTURE_TOKEN

ACTIONS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "actions"
FIXTURES = {
    "claude-code": next(ACTIONS.glob("claude-code/2.1.197/*.jsonl")),
    "codex-cli": next(ACTIONS.glob("codex-cli/0.171.0/rollout-*.jsonl")),
    "gemini-cli": next(ACTIONS.glob("gemini-cli/0.61.0/project/chats/session-*.jsonl")),
    "opencode": ACTIONS / "opencode" / "1.18.33" / "opencode.db",
    "hermes": ACTIONS / "hermes" / "0.19.0" / "state.db",
}
SQLITE = ("opencode", "hermes")
TOOLS = {
    "claude-code": ["Write", "Read", "Edit", "Bash"],
    "codex-cli": ["exec_command"] * 4,
    "gemini-cli": ["write_file", "read_file", "replace", "run_shell_command"],
    "opencode": ["write", "read", "edit", "bash"],
    "hermes": ["write_file", "read_file", "patch", "terminal"],
}
LINES = 12
"""The lines of the script the clients wrote."""


def parse(platform: str) -> ParseResult:
    path = FIXTURES[platform]
    data = b"" if platform in SQLITE else path.read_bytes()
    return get_adapter(platform).parse(path, data, offset=0, state={}, final=True)


@pytest.mark.parametrize("platform", list(FIXTURES))
def test_each_client_yields_its_write_read_edit_and_failing_shell_call(platform: str) -> None:
    result = parse(platform)
    actions = [a for a in result.actions if a.tool is not None]

    assert [a.tool for a in actions] == TOOLS[platform]
    write, read, edit, shell = actions
    assert (write.kind, write.targets, write.outcome) == ("write", (SCRIPT,), "ok")
    assert write.added == LINES and not write.removed and write.excerpt is None
    assert (edit.kind, edit.targets, edit.outcome) == ("edit", (SCRIPT,), "ok")
    assert (edit.added, edit.removed, edit.excerpt) == (1, 1, None)
    if platform == "codex-cli":  # Codex has no read tool: the model ran `cat`
        assert (read.kind, read.command, read.outcome) == ("shell", f"cat {SCRIPT}", "ok")
    else:
        assert (read.kind, read.targets, read.outcome) == ("read", (SCRIPT,), "ok")
    assert read.excerpt is None  # never the file's contents

    assert (shell.kind, shell.command, shell.targets) == ("shell", command(FIXTURE_TOKEN), ())
    assert (shell.outcome, shell.exit_code) == ("error", EXIT_CODE)
    assert shell.excerpt is not None and ERROR_LINE in shell.excerpt
    assert len(shell.excerpt) <= EXCERPT_CHARS and "import sys" not in shell.excerpt
    assert shell.duration_ms is not None and shell.started_at is not None


@pytest.mark.parametrize("platform", list(FIXTURES))
def test_the_actions_belong_to_the_session_and_its_assistant_turns(platform: str) -> None:
    result = parse(platform)
    sessions = {t.session_id for t in result.turns}

    assert len(sessions) == 1 and {a.session_id for a in result.actions} == sessions
    assert len({a.key for a in result.actions}) == len(result.actions) == 4
    keys = [a.turn_key for a in result.actions]
    if platform == "codex-cli":  # the model called tools before it said anything
        assert keys == [None] * 4
    else:  # each call in a response of its own, keyed as the client's turns are
        assert all(keys) and len(set(keys)) == 4
    assert all(a.cwd and a.cwd.endswith(f"/{platform}/project") for a in result.actions)


@pytest.mark.parametrize("platform", ["claude-code", "codex-cli"])  # Gemini CLI writes a call
# only with its result; the SQLite stores are read by row, never cut inside one
def test_a_read_cut_before_the_shell_result_completes_it_on_the_next_read(platform: str) -> None:
    path = FIXTURES[platform]
    data = path.read_bytes()
    cut = data.index(b"migrating orders_archive on staging")  # first in the shell's result
    cut = data.rindex(b"\n", 0, cut) + 1
    adapter = get_adapter(platform)
    first = adapter.parse(path, data[:cut], offset=0, state={}, final=False)
    resume = first.resume_offset
    second = adapter.parse(path, data[resume:], offset=resume, state=first.state, final=True)

    pending = next(a for a in first.actions if (a.command or "").endswith(COMMAND_WORDS))
    assert pending.outcome == "unknown" and pending.exit_code is None
    done = next(a for a in second.actions if a.key == pending.key)
    assert (done.outcome, done.exit_code, done.session_id) == (
        "error",
        EXIT_CODE,
        pending.session_id,
    )
    assert done.excerpt is not None and ERROR_LINE in done.excerpt
