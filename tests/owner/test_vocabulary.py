"""One vocabulary in every command: each command that takes a client takes every registered
client by its full and its short name (parametrised over the adapters' registry), each
command that takes a project names the close projects for a misspelt one, and the README's
``pause`` example runs as written. Real groups of both console scripts through click's runner,
against the real test database."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import psycopg
import pytest
from click.testing import CliRunner, Result

from agents_memory.adapters import all_adapters
from agents_memory.cli.capture import cli as capture_cli
from agents_memory.cli.memory import cli as memory_cli
from agents_memory.store.capture.pause import active_pauses
from tests.search.helpers import add, mem

REPO = Path(__file__).resolve().parents[2]

CLIENT_NAMES = [
    pytest.param(adapter.name, name, id=name)
    for adapter in all_adapters()
    for name in dict.fromkeys((adapter.name, adapter.short_name))
    if name
]
"""Every registered client's full name and short name, with the client it names."""

SHORT_NAMES = {a.short_name for a in all_adapters() if a.short_name}


def _env(home: Path, db_url: str) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": str(home / "no-bin"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_RUNTIME_DIR": str(home / "run"),
        "MEMORY_CONFIG_PATH": str(home / "no-such.env"),
        "MEMORY_DATA_DIR": str(home / "data"),
        "DATABASE_URL": db_url,
        "USER_NAME": "tester",
        "DEVICE_NAME": "test-device",
        "EMBEDDING_BACKEND": "none",
    }


def _run(group: click.Group, env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(group, list(args), env=env, catch_exceptions=False)


@pytest.fixture
def one_turn_per_client(conn: psycopg.Connection[Any]) -> None:
    add(conn, [mem(f"zeppelin note from {a.name}", platform=a.name) for a in all_adapters()])


def _client_options() -> set[str]:
    """Every command line of both scripts whose command takes a client (``--platform``)."""
    found = set()
    for script, group in (("mcp-agents-memory", memory_cli), ("memory-capture", capture_cli)):
        for name, command in group.all_commands().items():  # type: ignore[attr-defined]
            if any("--platform" in getattr(p, "opts", ()) for p in command.params):
                found.add(f"{script} {name}")
    return found


def test_the_test_below_covers_every_command_that_takes_a_client() -> None:
    """``hook session-start`` is a group's subcommand run by the clients' hooks with the full
    name install wrote (and read by the standard-library fast path, not click): not a user's
    command line."""
    assert _client_options() == {
        "mcp-agents-memory search",
        "mcp-agents-memory actions",
        "mcp-agents-memory forget",
        "mcp-agents-memory export",
        "memory-capture backfill",
        "memory-capture pause",
        "memory-capture resume",
        "memory-capture install",
        "memory-capture uninstall",
    }


@pytest.mark.usefixtures("one_turn_per_client")
@pytest.mark.parametrize(("client", "name"), CLIENT_NAMES)
def test_every_command_takes_each_client_by_its_full_and_its_short_name(
    tmp_path: Path, db_url: str, conn: psycopg.Connection[Any], client: str, name: str
) -> None:
    env = _env(tmp_path, db_url)
    found = _run(memory_cli, env, "search", "zeppelin", "--platform", name, "--json")
    assert found.exit_code == 0, found.output
    assert [h["agent_platform"] for h in json.loads(found.stdout)["results"]] == [client]

    acted = _run(memory_cli, env, "actions", "--platform", name, "--json")
    assert acted.exit_code == 0, acted.output
    assert json.loads(acted.stdout) == []  # no actions stored, and the name was taken

    forget = _run(memory_cli, env, "forget", "--platform", name, "--dry-run")
    assert forget.exit_code == 0, forget.output
    assert "1 memories would be forgotten" in forget.output
    assert f"{client} user: zeppelin note from {client}" in forget.output

    exported = _run(memory_cli, env, "export", str(tmp_path / "x.zip"), "--platform", name)
    assert exported.exit_code == 0, exported.output
    assert exported.output.rstrip().endswith(", 1 memory")

    paused = _run(capture_cli, env, "pause", "--platform", name, "--for", "2h")
    assert paused.exit_code == 0, paused.output
    assert [p.platform for p in active_pauses(conn, "test-device")] == [client]
    conn.commit()
    resumed = _run(capture_cli, env, "resume", "--platform", name)
    assert resumed.exit_code == 0, resumed.output
    assert f"capture resumed for {client}" in resumed.output

    backfill = _run(capture_cli, env, "backfill", "--platform", name, "--json")
    assert backfill.exit_code == 0, backfill.output
    assert set(json.loads(backfill.stdout)["platforms"]) <= {client}

    for verb in ("install", "uninstall"):
        planned = _run(capture_cli, env, verb, "--platform", name, "--dry-run")
        assert planned.exit_code == 0, planned.output
        others = {a.name for a in all_adapters()} - {client}
        assert not any(f"{other}:" in planned.output for other in others), planned.output


@pytest.mark.parametrize(
    "args",
    [
        ("mcp-agents-memory", "search", "x", "--platform", "cluade"),
        ("mcp-agents-memory", "forget", "--platform", "cluade", "--dry-run"),
        ("mcp-agents-memory", "export", "--platform", "cluade"),
        ("memory-capture", "pause", "--platform", "cluade"),
        ("memory-capture", "resume", "--platform", "cluade"),
        ("memory-capture", "backfill", "--platform", "cluade"),
        ("memory-capture", "install", "--platform", "cluade", "--dry-run"),
    ],
    ids=lambda args: args[1],
)
def test_a_misspelt_client_is_refused_with_the_suggestion_everywhere(
    tmp_path: Path, db_url: str, args: tuple[str, ...]
) -> None:
    group = memory_cli if args[0] == "mcp-agents-memory" else capture_cli
    result = CliRunner().invoke(group, list(args[1:]), env=_env(tmp_path, db_url))
    assert result.exit_code == 2, result.output
    assert "(did you mean 'claude'?)" in result.output
    assert all(short in result.output for short in SHORT_NAMES)


@pytest.fixture
def quokka(conn: psycopg.Connection[Any]) -> None:
    add(conn, [mem("quokka deploy notes")])
    conn.execute("INSERT INTO project_tags (name) VALUES ('quokka-api'), ('wombat')")
    conn.execute(
        "UPDATE memory SET p_tag_id = (SELECT id FROM project_tags WHERE name = 'quokka-api')"
    )
    conn.commit()


@pytest.mark.usefixtures("quokka")
@pytest.mark.parametrize(
    "args",
    [
        ("search", "deploy", "--json"),
        ("forget", "--dry-run"),
        ("export", "{tmp}/q.zip"),
    ],
    ids=lambda args: args[0],
)
def test_a_partial_project_names_the_projects_that_exist_in_every_command(
    tmp_path: Path, db_url: str, args: tuple[str, ...]
) -> None:
    env = _env(tmp_path, db_url)
    line = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    wrong = CliRunner().invoke(memory_cli, [*line, "--project", "quokka"], env=env)
    assert wrong.exit_code == 2, wrong.output
    words = " ".join(wrong.output.split())
    assert "no project 'quokka' (did you mean 'quokka-api'?); projects: quokka-api, wombat" in (
        words
    )
    right = CliRunner().invoke(memory_cli, [*line, "--project", "Quokka-API"], env=env)
    assert right.exit_code == 0, right.output


def test_the_readmes_pause_example_runs_as_written(
    tmp_path: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    line = re.search(r"^memory-capture (pause --platform \S+ --for \S+)", readme, re.M)
    assert line is not None
    result = _run(capture_cli, _env(tmp_path, db_url), *line[1].split())
    assert result.exit_code == 0, result.output
    assert "codex-cli" in result.output
    assert [p.platform for p in active_pauses(conn, "test-device")] == ["codex-cli"]
