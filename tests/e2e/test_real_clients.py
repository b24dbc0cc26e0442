"""The real Claude Code, Codex, Gemini CLI, OpenCode and Hermes Agent against our installer,
hooks, capture and MCP server, offline (a fake model on 127.0.0.1 in a loopback-only network
namespace).

Per CLI, one recorded session (``conftest.session``): ``memory-capture install``, for the
clients whose brief sits in a managed context file a run of the capture daemon until it has
written the brief there, ``mcp list``, a plain headless turn, a headless turn where the model
calls ``search_memory``, two backfills, ``memory-capture uninstall``. Each test checks one
promise on that record.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

import pytest

from agents_memory.adapters.base import BLOCK_BEGIN, BLOCK_END
from agents_memory.admission.echo import BRIEF_MARKER
from tests.e2e.fake_model import text_of
from tests.e2e.scenario import SEED_TEXT, SEED_WORD, Outcome

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

OURS = "mcp-agents-memory"


def _requests_about(outcome: Outcome, nonce: str) -> list[dict[str, Any]]:
    """The model requests of the turn whose prompt carried ``nonce``."""
    return [r for r in outcome.requests if nonce in text_of(r.get("body"))]


def _captured(rows: list[dict[str, Any]], platform: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["source"] == "capture" and r["agent_platform"] == platform]


def test_install_writes_entries_the_cli_accepts(session: Outcome) -> None:
    install = session.steps["install"]
    assert install.returncode == 0, install.tail()
    assert "error" not in install.stderr.lower(), install.tail()
    written = "".join(t for t in session.installed_configs.values() if t)
    assert OURS in written, session.installed_configs
    if session.cli.hooks:
        assert "memory-capture" in written, session.installed_configs
    if session.platform == "codex-cli":
        assert "trusted 3 Codex hook(s)" in install.stdout, install.tail()
    if session.platform == "hermes":  # through Hermes's own `hermes mcp add`
        assert "registered the MCP server with `hermes mcp add" in install.stdout, install.tail()
    for name in filter(None, [session.cli.brief_file]):
        block = session.installed_configs[name] or ""
        assert BLOCK_BEGIN in block and BLOCK_END in block, f"~/{name}:\n{block}"


def test_a_the_daemon_writes_the_brief_into_the_managed_block(session: Outcome) -> None:
    if session.cli.brief_file is None:
        pytest.skip(f"{session.platform} gets the brief from its session-start hook")
    refresh = session.steps["brief in file"]
    assert "[harness]" not in refresh.stderr, refresh.tail()
    text = session.refreshed_brief_file or ""
    block = text[text.index(BLOCK_BEGIN) : text.index(BLOCK_END)]
    assert BRIEF_MARKER in block and SEED_TEXT in block, text
    assert refresh.returncode in (0, -15), refresh.tail()


def test_a_session_start_brief_reaches_the_model(session: Outcome) -> None:
    hello = session.steps["hello"]
    assert hello.returncode == 0, session.log_excerpt()
    requests = _requests_about(session, session.hello_nonce)
    assert requests, f"the fake model saw no request for the prompt\n{hello.tail()}"
    first = text_of(requests[0]["body"])
    assert BRIEF_MARKER in first, f"no brief marker in the model request\n{hello.tail()}"
    assert SEED_TEXT in first, "the brief reached the model without the pinned memory"
    assert "hookSpecificOutput" not in first, "the model got the hook JSON, not the brief"
    if session.cli.brief_file:  # from the managed block (OpenCode also sends our server's
        # MCP instructions, which carry a brief of their own)
        block = f"{BLOCK_BEGIN}\n{BRIEF_MARKER}"
        assert block in first, f"~/{session.cli.brief_file}'s block did not reach the model"
    assert f"FAKE-REPLY to {session.hello_nonce}." in hello.stdout, hello.tail()


def test_b_capture_stores_prompt_and_reply_once_without_the_brief(session: Outcome) -> None:
    assert session.transcripts, f"{session.platform} wrote no transcript under {session.ws.home}"
    for step in ("backfill", "backfill again"):
        assert session.steps[step].returncode == 0, session.steps[step].tail()
    rows = _captured(session.rows, session.platform)
    prompt = f"Please say hello. {session.hello_nonce}"
    reply = f"FAKE-REPLY to {session.hello_nonce}."
    users = [r for r in rows if r["role"] == "user" and session.hello_nonce in r["message"]]
    answers = [r for r in rows if r["role"] == "assistant" and reply in r["message"]]
    assert [r["message"] for r in users] == [prompt], rows
    assert [r["message"].strip() for r in answers] == [reply], rows
    echoes = [r for r in rows if BRIEF_MARKER in r["message"] or SEED_WORD in r["message"]]
    assert echoes == [], "the brief's echo in the transcript was captured"
    tool_turn = [r for r in rows if session.tool_nonce in r["message"]]
    assert {r["role"] for r in tool_turn} == {"user", "assistant"}, rows
    again = _captured(session.rows_after_second_backfill, session.platform)
    assert [r["id"] for r in again] == [r["id"] for r in rows], "a second backfill added rows"


def test_c_mcp_list_shows_our_server(session: Outcome) -> None:
    listed = session.steps["mcp list"]
    assert listed.returncode == 0, listed.tail()
    output = listed.stdout + listed.stderr  # gemini prints the list on stderr
    line = next((ln for ln in output.splitlines() if OURS in ln), None)
    assert line is not None, listed.tail()
    if session.cli.mcp_list_connects:
        assert "connected" in line.lower() and "disconnected" not in line.lower(), line
    else:  # codex and hermes list their config; they do not connect
        assert "enabled" in line, line


def test_c_the_model_can_call_search_memory(session: Outcome) -> None:
    calls = [r for r in session.requests if r.get("tool") and "search_memory" in r["tool"]]
    assert calls, f"the model was never offered our search_memory tool\n{session.log_excerpt()}"
    requests = _requests_about(session, session.tool_nonce)
    # the nonce may also be in a later turn's brief (recent turns): the answer names its turn
    answer = f"FAKE-REPLY to {session.tool_nonce} after the tool"
    results = [r for r in requests if answer in (r.get("reply_text") or "")]
    assert results, f"no tool result came back to the model\n{session.log_excerpt()}"
    assert "seed_found=yes" in results[-1]["reply_text"], text_of(results[-1]["body"])[-2000:]
    assert SEED_TEXT in text_of(results[-1]["body"])


def test_c_save_message_refuses_a_client_whose_turns_are_captured(session: Outcome) -> None:
    if not session.cli.save_probe:
        pytest.skip("tests/adapters/test_save_message_refusal.py covers it by the client's name")
    requests = _requests_about(session, session.save_nonce)
    calls = [r for r in requests if "save_message" in (r.get("tool") or "")]
    assert calls, f"the model was never offered save_message\n{session.log_excerpt()}"
    results = [r["tool_result"] for r in requests if r.get("tool_result") is not None]
    assert results, f"no tool result came back to the model\n{session.log_excerpt()}"
    assert "auto-capture active" in results[-1], results[-1]
    saved = [r for r in session.rows_after_second_backfill if r["source"] == "save_message"]
    assert saved == [], "save_message stored a turn capture stores already"


def test_d_uninstall_leaves_no_entry_of_ours(session: Outcome) -> None:
    uninstall = session.steps["uninstall"]
    assert uninstall.returncode == 0, uninstall.tail()
    assert session.steps["stop daemon"].returncode == 0, session.steps["stop daemon"].tail()
    for name, text in session.uninstalled_configs.items():
        if text is None:
            continue
        assert "memory-capture" not in text, f"~/{name} still runs our hooks:\n{text}"
        assert OURS not in text, f"~/{name} still lists our MCP server:\n{text}"
    configs = session.uninstalled_configs
    if session.platform == "codex-cli":
        config = tomllib.loads(configs[".codex/config.toml"] or "")
        assert config.get("hooks", {}).get("state", {}) == {}, "hook trust entries remain"
        assert config["model_providers"]["fake"]["base_url"].startswith("http://127.0.0.1")
    if session.platform == "gemini-cli":
        settings = json.loads(configs[".gemini/settings.json"] or "{}")
        assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    if session.platform == "opencode":
        config = json.loads(configs[".config/opencode/opencode.json"] or "{}")
        assert "mcp" not in config or OURS not in config["mcp"], config
        assert config["provider"]["fake"]["options"]["baseURL"].startswith("http://127.0.0.1")
    if session.platform == "hermes":
        assert "provider: custom" in (configs[".hermes/config.yaml"] or ""), "user's model lost"
        assert "removed the MCP server with `hermes mcp remove" in uninstall.stdout, (
            uninstall.tail()
        )
    for name in filter(None, [session.cli.brief_file]):
        assert BLOCK_BEGIN not in (configs[name] or ""), f"~/{name} still has our block"
