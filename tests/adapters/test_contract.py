"""What every registered adapter promises, checked over the registry: it has transcript
fixtures; parsing is deterministic under distinct keys; a file read in two pieces (at any line
boundary) or line by line yields what one read does; its install plan is idempotent and
removed exactly. Format-specific behaviour stays in each adapter's own test file.

A new client's fixtures go under ``tests/fixtures/transcripts/<platform>/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents_memory.adapters import get_adapter, names
from agents_memory.adapters.base import Adapter, Commands, Turn, is_our_hook_command
from agents_memory.install.edits import Record, render_install, render_uninstall
from agents_memory.install.fileio import read_text, write_atomic
from tests.install.conftest import load, seed_home

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
FIXTURE_DIRS = {
    "claude-code": ("claude-code", "generated/claude"),
    "codex-cli": ("codex", "generated/codex"),
    "gemini-cli": ("gemini-cli", "generated/gemini"),
}
"""Where fixtures of a platform live when not (only) in ``<platform>/``."""
NOT_TRANSCRIPTS = {"summary.json", "hook-payloads.jsonl"}
"""Sidecars and captured hook payloads that sit beside the transcripts."""
MAX_SPLITS = 40


def transcripts(platform: str) -> list[Path]:
    found = (
        path
        for directory in FIXTURE_DIRS.get(platform, (platform,))
        for path in (FIXTURES / directory).rglob("*")
        if path.suffix in {".jsonl", ".json", ".db"} and path.name not in NOT_TRANSCRIPTS
    )
    return sorted(found)


CASES = [
    pytest.param(name, path, id=f"{name}:{path.relative_to(FIXTURES)}")
    for name in names()
    for path in transcripts(name)
]
APPEND_CASES = [
    pytest.param(name, path, id=f"{name}:{path.relative_to(FIXTURES)}")
    for name in names()
    for path in transcripts(name)
    if get_adapter(name).read_mode(path) == "append"
]


def parse_whole(adapter: Adapter, path: Path, data: bytes) -> list[Turn]:
    return adapter.parse(path, data, offset=0, state={}, final=True).turns


def read_in_pieces(adapter: Adapter, path: Path, data: bytes, cuts: list[int]) -> dict[str, Turn]:
    """Feed ``data`` as the daemon does: up to each cut, resuming where the adapter says, with
    the state through JSON (it is stored with the cursor), upserting turns by key."""
    store: dict[str, Turn] = {}
    cursor, state = 0, dict[str, Any]()
    for cut in [*cuts, len(data)]:
        if cut <= cursor:
            continue
        result = adapter.parse(
            path, data[cursor:cut], offset=cursor, state=state, final=cut == len(data)
        )
        assert cursor <= result.resume_offset <= cut
        store.update({t.external_uuid: t for t in result.turns})
        cursor, state = result.resume_offset, json.loads(json.dumps(result.state))
    assert cursor == len(data)
    return store


def line_ends(data: bytes) -> list[int]:
    return [i + 1 for i, byte in enumerate(data) if byte == 0x0A][:-1]


# --- the registry -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", names())
def test_registry_returns_an_adapter_that_calls_itself_by_its_registered_name(name: str) -> None:
    adapter = get_adapter(name)
    assert adapter.name == name
    assert adapter.display_name and adapter.brief_limit > 0
    assert adapter.roots(Path("/h")), "an adapter says where its transcripts live"


@pytest.mark.parametrize("name", names())
def test_every_adapter_has_transcript_fixtures(name: str) -> None:
    assert transcripts(name), f"no fixtures for {name} under {FIXTURES}"


# --- parsing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "path"), CASES)
def test_parsing_twice_yields_the_same_turns_under_distinct_keys(name: str, path: Path) -> None:
    adapter, data = get_adapter(name), path.read_bytes()
    first = parse_whole(adapter, path, data)
    assert parse_whole(adapter, path, data) == first
    assert len({t.external_uuid for t in first}) == len(first)
    assert all(t.platform == name for t in first)


@pytest.mark.parametrize(("name", "path"), APPEND_CASES)
def test_two_reads_split_at_any_line_boundary_match_one_read(name: str, path: Path) -> None:
    adapter, data = get_adapter(name), path.read_bytes()
    whole = {t.external_uuid: t for t in parse_whole(adapter, path, data)}
    ends = line_ends(data)
    for cut in ends if len(ends) <= MAX_SPLITS else ends[:: len(ends) // MAX_SPLITS + 1]:
        assert read_in_pieces(adapter, path, data, [cut]) == whole, cut


@pytest.mark.parametrize(("name", "path"), APPEND_CASES)
def test_reading_line_by_line_matches_one_read(name: str, path: Path) -> None:
    adapter, data = get_adapter(name), path.read_bytes()
    whole = {t.external_uuid: t for t in parse_whole(adapter, path, data)}
    assert read_in_pieces(adapter, path, data, line_ends(data)) == whole


# --- install plans ------------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def commands(tmp_path: Path) -> Commands:
    bin_dir = tmp_path / "venv" / "bin"
    return Commands(bin_dir / "memory-capture", bin_dir / "mcp-agents-memory")


def load_text(path: Path, text: str) -> object:
    tmp = path.with_name(path.name + ".expected" + path.suffix)
    tmp.write_text(text, encoding="utf-8")
    try:
        return load(tmp)
    finally:
        tmp.unlink()


@pytest.mark.parametrize("platform", names())
def test_every_adapter_plan_is_idempotent_and_reversible(
    platform: str, home: Path, commands: Commands
) -> None:
    originals = seed_home(home)
    # Hermes writes its SOUL.md on first run; the block goes only into one Hermes made.
    soul = home / ".hermes" / "SOUL.md"
    soul.parent.mkdir(parents=True, exist_ok=True)
    soul.write_text("You are Hermes, a helpful assistant.\n", encoding="utf-8")
    originals[soul] = soul.read_text(encoding="utf-8")
    plan = get_adapter(platform).install_plan(home, commands)
    assert plan.platform == platform
    # Every client gets the MCP server entry in a file, except Hermes (YAML), whose entry its
    # post-install step makes through `hermes mcp add`; its plan writes the memory block.
    assert plan.edits, "every client's plan writes at least its MCP entry or memory block"
    records: dict[Path, Record] = {}
    for edit in plan.edits:
        assert edit.path.is_relative_to(home)
        before = read_text(edit.path)
        first = render_install(edit, before)
        assert first.text != before
        write_atomic(edit.path, first.text)
        records[edit.path] = first.record
        again = render_install(edit, first.text)
        assert again.text == first.text, f"second install of {edit.path} changed it"
        assert not again.record.created_keys
    for edit in plan.edits:
        gone = render_uninstall(edit, read_text(edit.path), records[edit.path])
        write_atomic(edit.path, gone.text)
        original = originals.get(edit.path)
        if original is None:
            assert not edit.path.exists(), f"{edit.path} was created by install"
        else:
            assert load(edit.path) == load_text(edit.path, original)


@pytest.mark.parametrize("platform", names())
def test_every_hook_command_in_a_plan_is_recognised_as_ours(
    platform: str, home: Path, commands: Commands
) -> None:
    plan = get_adapter(platform).install_plan(home, commands)
    for edit in plan.edits:
        for entry in edit.entries:
            group = getattr(entry, "group", None)
            if group is not None:
                for handler in group["hooks"]:
                    assert is_our_hook_command(handler["command"])
                    assert handler["command"].startswith(str(commands.memory_capture))
