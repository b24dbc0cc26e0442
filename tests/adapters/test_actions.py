"""Actions (tool calls) parsed from the real fixture transcripts: tool name, normalised kind,
targets, outcome, a failure's excerpt; a call and its result read apart; the excerpt cap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents_memory.adapters import get_adapter
from agents_memory.adapters._actions import (
    EXCERPT_CHARS,
    TAIL_CHARS,
    excerpt,
    kind_of,
    patch_stat,
    relative,
)
from agents_memory.adapters.base import Action, ParseResult

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
CLAUDE_TOOLS = FIXTURES / "claude-code" / "spotter_v2.1.38_tool_heavy.jsonl"
CLAUDE_EDITS = FIXTURES / "claude-code" / "vct_v1.0.95_tools_thinking_unicode.jsonl"
CODEX_SHELL = FIXTURES / "codex" / "vct_v0.39.0_vscode_unicode.jsonl"
CODEX_COMPOSITE = FIXTURES / "codex" / "agent-sessions_composite_v0.1xx_record_types.jsonl"


def _parse(
    platform: str,
    path: Path,
    data: bytes | None = None,
    offset: int = 0,
    state: dict[str, Any] | None = None,
) -> ParseResult:
    raw = path.read_bytes() if data is None else data
    return get_adapter(platform).parse(path, raw, offset=offset, state=state or {}, final=True)


def _by_tool(actions: list[Action], tool: str) -> list[Action]:
    return [a for a in actions if a.tool == tool]


def test_claude_tool_heavy_session_yields_each_call_with_kind_targets_and_outcome() -> None:
    actions = _parse("claude-code", CLAUDE_TOOLS).actions

    read = _by_tool(actions, "Read")[0]
    assert (read.kind, read.targets, read.outcome) == ("read", ("assets/js/app.js",), "ok")
    assert read.excerpt is None  # never the file's contents
    assert read.key.startswith("toolu_") and read.turn_key
    assert read.turn_key.startswith("claude-code:a:msg_")
    fetch = _by_tool(actions, "WebFetch")[0]
    assert fetch.kind == "web" and fetch.targets == (
        "https://github.com/xtermjs/xterm.js/issues/1343",
    )
    assert fetch.excerpt is None
    server, tail = _by_tool(actions, "Bash")
    assert (server.kind, server.command, server.outcome) == ("shell", "mix phx.server", "ok")
    assert server.excerpt is not None and "bae407b" in server.excerpt  # its last lines
    assert tail.command is not None and tail.command.startswith("tail -5")
    assert tail.outcome == "ok" and tail.excerpt is None  # it printed a file: not kept
    glob = _by_tool(actions, "Glob")[0]
    assert (glob.kind, glob.command, glob.duration_ms) == ("search", "assets/js/**/*.js", 230)
    assert len({a.session_id for a in actions}) == 1 and actions[0].session_id


def test_claude_edits_keep_a_diffstat_and_a_refused_edit_is_interrupted() -> None:
    actions = _parse("claude-code", CLAUDE_EDITS).actions

    edits = _by_tool(actions, "Edit")
    assert edits[0].targets == ("go.mod",) and edits[0].outcome == "interrupted"
    assert (edits[1].added, edits[1].removed, edits[1].outcome) == (1, 3, "ok")
    write = _by_tool(actions, "Write")[0]
    assert write.kind == "write" and write.added and write.added > 1 and write.removed is None
    mcp = _by_tool(actions, "mcp__context7__resolve-library-id")[0]
    assert mcp.kind == "mcp" and mcp.targets == ("context7/resolve-library-id",)
    assert _by_tool(actions, "TodoWrite") == []  # the agent's own to-do list: bookkeeping


@pytest.mark.parametrize(
    ("platform", "pattern"),
    [
        ("claude-code", "generated/claude/*/headless-mcp-tool-*.jsonl"),
        ("codex-cli", "generated/codex/*/headless-mcp-tool-*.jsonl"),
    ],
)
def test_a_real_client_run_of_the_fake_mcp_tool_is_one_ok_mcp_action(
    platform: str, pattern: str
) -> None:
    for path in sorted(FIXTURES.glob(pattern)):
        actions = _parse(platform, path).actions
        assert len(actions) == 1, path
        action = actions[0]
        assert (action.kind, action.targets, action.outcome) == ("mcp", ("fake/fake_echo",), "ok")
        assert action.tool is not None and action.tool.endswith("fake_echo")
        assert action.session_id and action.key.startswith(("toolu_", "call_"))


def test_codex_shell_calls_their_exit_codes_patches_and_a_failing_patch() -> None:
    actions = _parse("codex-cli", CODEX_SHELL).actions

    listing = next(a for a in actions if a.command == "ls -la")
    assert (listing.kind, listing.outcome, listing.exit_code) == ("shell", "ok", 0)
    assert listing.excerpt is None  # a listing: not kept
    removal = next(a for a in actions if a.command and a.command.startswith("rm -f TODO.md"))
    assert removal.excerpt is not None and len(removal.excerpt) <= TAIL_CHARS
    patches = [a for a in actions if a.kind == "edit"]
    assert [a.targets for a in patches] == [
        ("go.mod",),
        ("README.zh-TW.md",),
        ("README.zh-CN.md",),
        (".python-version",),
    ]
    assert (patches[0].added, patches[0].removed) == (3, 3)
    failed = [a for a in actions if a.outcome == "error"]
    assert len(failed) == 1 and failed[0].excerpt == "patch rejected: empty patch"
    assert failed[0].command is not None and "applypatch" in failed[0].command
    assert _by_tool(actions, "update_plan") == []  # the agent's plan: bookkeeping
    assert all(a.turn_key is not None for a in actions)


def test_codex_custom_tool_and_web_search_items_are_actions() -> None:
    actions = _parse("codex-cli", CODEX_COMPOSITE).actions

    shells = [a for a in actions if a.tool == "shell"]
    assert [(a.command, a.outcome, a.excerpt) for a in shells] == [("ls", "ok", None)] * 2
    web = _by_tool(actions, "web_search")[0]
    assert (web.kind, web.command) == ("web", "example")


@pytest.mark.parametrize(
    ("platform", "path", "marker"),
    [
        ("claude-code", CLAUDE_TOOLS, b'"type":"tool_result"'),
        ("codex-cli", CODEX_SHELL, b'"type":"function_call_output"'),
    ],
)
def test_a_result_read_after_its_call_completes_it_under_the_same_key(
    platform: str, path: Path, marker: bytes
) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    whole = {a.key: a for a in _parse(platform, path).actions}
    # The first result line whose call (a stored kind, not bookkeeping) is before the cut.
    for cut, line in enumerate(lines):
        if marker not in line.replace(b" ", b""):
            continue
        head, tail = b"".join(lines[:cut]), b"".join(lines[cut:])
        before = _parse(platform, path, head)
        pending = [a for a in before.actions if a.outcome == "unknown"]
        if pending:
            break
    call = pending[0]
    second = _parse(platform, path, tail, offset=len(head), state=before.state).actions
    result = next(a for a in second if a.key == call.key)

    assert call.tool is not None and result.tool is None  # a result only, for the store
    assert result.outcome == whole[call.key].outcome != "unknown"
    assert result.session_id == call.session_id


def test_excerpts_on_the_fixtures_fit_the_cap_and_the_cap_keeps_the_error_lines() -> None:
    longest = 0
    for platform, path in [
        ("claude-code", CLAUDE_TOOLS),
        ("claude-code", CLAUDE_EDITS),
        ("codex-cli", CODEX_SHELL),
    ]:
        for action in _parse(platform, path).actions:
            longest = max(longest, len(action.excerpt or ""))
    assert 0 < longest <= EXCERPT_CHARS
    trace = "\n".join(f"  at frame {i}" for i in range(200)) + "\nValueError: bad config key"
    kept = excerpt(trace, failed=True, shell=True)
    assert kept == "ValueError: bad config key"
    assert excerpt("x" * 5000, failed=False, shell=True) is not None
    assert len(excerpt("x" * 5000, failed=False, shell=True) or "") == TAIL_CHARS
    assert excerpt("file contents", failed=False, shell=False) is None


def test_kinds_paths_and_patches_are_normalised_alike_for_every_client() -> None:
    assert [kind_of(t) for t in ("Bash", "shell", "run_shell_command", "exec_command")] == [
        "shell"
    ] * 4
    assert [kind_of(t) for t in ("Edit", "apply_patch", "replace")] == ["edit"] * 3
    assert kind_of("mcp__github__create_issue") == "mcp" and kind_of("Frobnicate") == "other"
    assert relative("/work/proj/src/a.py", "/work/proj") == "src/a.py"
    assert relative("/etc/hosts", "/work/proj") == "/etc/hosts"
    stat = patch_stat("*** Begin Patch\n*** Add File: x.py\n+a\n+b\n*** End Patch\n")
    assert stat is not None and (stat.files, stat.added, stat.removed) == (("x.py",), 2, 0)


def test_gemini_tool_calls_with_their_status_paths_and_edit_stats() -> None:
    path = FIXTURES / "gemini-cli" / "vct_jsonl_v0.39plus_init_tools.jsonl"
    actions = _parse("gemini-cli", path).actions

    reads = [a.targets[0] for a in _by_tool(actions, "read_file")]
    assert reads[:4] == ["README.md", "pyproject.toml", "CLAUDE.md", "Makefile"]
    assert all(a.kind == "read" and a.excerpt is None for a in _by_tool(actions, "read_file"))
    [write] = _by_tool(actions, "write_file")
    assert (write.kind, write.targets, write.outcome) == ("write", ("GEMINI.md",), "ok")
    [edit] = _by_tool(actions, "replace")
    assert (edit.kind, edit.added, edit.removed) == ("edit", 1, 1)
    assert _by_tool(actions, "update_topic") == []  # bookkeeping
    assert all(a.turn_key and a.turn_key.startswith("gemini-cli:") for a in actions)
    [mcp] = _parse(
        "gemini-cli", next(FIXTURES.glob("generated/gemini/*/headless-mcp-tool-*.jsonl"))
    ).actions
    assert (mcp.kind, mcp.targets, mcp.outcome) == ("mcp", ("fake/fake_echo",), "ok")


def test_opencode_tool_parts_are_actions_with_their_state_and_duration() -> None:
    path = FIXTURES / "opencode" / "opencode-1.18.33.db"
    actions = get_adapter("opencode").parse(path, b"", offset=0, state={}, final=True).actions

    task, echo = actions
    assert (task.tool, task.kind, task.command, task.outcome) == (
        "task",
        "agent",
        "look around",
        "ok",
    )
    assert task.duration_ms == 2234 and task.turn_key and task.turn_key.startswith("opencode:msg_")
    assert (echo.kind, echo.targets, echo.outcome) == ("mcp", ("fake/fake_echo",), "ok")


def test_hermes_tool_calls_and_their_tool_rows_are_actions() -> None:
    path = FIXTURES / "hermes" / "state-0.19.0.db"
    [delegate] = get_adapter("hermes").parse(path, b"", offset=0, state={}, final=True).actions

    assert (delegate.tool, delegate.kind, delegate.outcome) == ("delegate_task", "agent", "ok")
    assert delegate.command == "say hi from the subagent"
    assert delegate.turn_key == f"hermes:{delegate.session_id}:4"
