"""A sixth client is one adapter: defined here, registered at run time, and from then on
captured, briefed, refused by ``save_message``, installed and listed by ``status`` — with no
other module edited. The client ("TinyChat") writes its own tiny JSONL format."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.types import Implementation

from agents_memory import adapters
from agents_memory.adapters.base import (
    MCP_SERVER_NAME,
    Adapter,
    Commands,
    FileEdit,
    InstallPlan,
    JsonState,
    OwnedEntry,
    ParseIssue,
    ParseResult,
    Turn,
    stdio_server,
)
from agents_memory.cli.capture import backfill, cli, status
from agents_memory.cli.memory import cli as memory_cli
from agents_memory.config import Settings
from agents_memory.errors import AdapterError
from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.recall.session import hook_output
from agents_memory.recall.state import open_state
from agents_memory.server.app import create_server
from agents_memory.store import database
from agents_memory.store.memories import ensure_user

NAME = "tinychat"
LIMIT = 300


class TinyChatAdapter(Adapter):
    """``~/.tinychat/logs/<session>.tiny``: one ``{"id", "who", "said"}`` object a line."""

    name = NAME
    display_name = "TinyChat"
    binaries = ("tinychat",)
    mcp_client_names = ("tinychat",)
    brief_limit = LIMIT

    def hook_output(self, brief: str) -> str:
        return f"<memory>\n{brief}\n</memory>" if brief else ""

    def roots(self, home: Path) -> list[Path]:
        return [home / ".tinychat" / "logs"]

    def owns(self, path: Path, home: Path) -> bool:
        return path.suffix == ".tiny" and path.parent == self.roots(home)[0]

    def config_markers(self, home: Path) -> list[Path]:
        return [home / ".tinychat"]

    def parse(
        self,
        path: Path,
        data: bytes,
        *,
        offset: int,
        state: JsonState,
        final: bool = False,
        home: Path | None = None,
    ) -> ParseResult:
        turns: list[Turn] = []
        issues: list[ParseIssue] = []
        at = offset
        for line in data.splitlines(keepends=True):
            try:
                record = json.loads(line)
                role = {"me": "user", "bot": "assistant"}[record["who"]]
                key = f"{NAME}:{path.stem}:{record['id']}"
                turns.append(Turn(key, NAME, role, record["said"], path.stem))
            except (ValueError, KeyError, TypeError) as exc:
                issues.append(ParseIssue(at, f"not a TinyChat line: {exc}"))
            at += len(line)
        return ParseResult(turns, offset + len(data), issues=issues)

    def install_plan(self, home: Path, commands: Commands) -> InstallPlan:
        server = OwnedEntry(("mcpServers", MCP_SERVER_NAME), stdio_server(commands))
        config = FileEdit(home / ".tinychat" / "config.json", "json", (server,), "MCP server")
        return InstallPlan(NAME, (config,))


@pytest.fixture
def tinychat() -> Iterator[None]:
    undo = adapters.register(NAME, TinyChatAdapter)
    yield
    undo()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home where TinyChat is the only client, with one session of 40 turns."""
    logs = tmp_path / "home" / ".tinychat" / "logs"
    logs.mkdir(parents=True)
    lines = [
        {"id": n, "who": "me" if n % 2 == 0 else "bot", "said": f"TinyChat turn {n}: " + "w" * 60}
        for n in range(40)
    ]
    (logs / "s-1.tiny").write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return tmp_path / "home"


@pytest.fixture
def quiet_settings(make_settings: Any, db_url: str) -> Settings:
    settings: Settings = make_settings(database_url=db_url, embedding_backend="none")
    return settings


def _env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": str(home / "no-bin"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "MEMORY_CONFIG_PATH": str(home / "no-such.env"),
    }


def _backfill(settings: Settings, home: Path) -> Any:
    result = CliRunner().invoke(
        backfill, ["--json", "--platform", NAME], obj=settings, env=_env(home)
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_registered_client_is_backfilled_into_postgresql(
    tinychat: None, home: Path, quiet_settings: Settings
) -> None:
    summary = _backfill(quiet_settings, home)
    assert summary["platforms"][NAME]["inserted"] == 40
    with database.connect(database.locate_database(quiet_settings)) as conn:
        rows = conn.execute(
            "SELECT role, count(*) FROM memory WHERE agent_platform = %s GROUP BY 1 ORDER BY 1",
            (NAME,),
        ).fetchall()
    assert rows == [("assistant", 20), ("user", 20)]
    again = _backfill(quiet_settings, home)
    assert again["stored"] == 0


def test_registered_client_gets_the_brief_cut_to_its_limit_in_its_envelope(
    tinychat: None, home: Path, quiet_settings: Settings
) -> None:
    _backfill(quiet_settings, home)
    with database.connect(database.locate_database(quiet_settings)) as conn:
        user_id = ensure_user(conn, quiet_settings.user_name)
        output = hook_output(conn, quiet_settings, user_id, NAME, {"session_id": "s-2"})
        unbounded = build_brief(
            conn,
            quiet_settings,
            user_id,
            BriefRequest(NAME, None, quiet_settings.device_name, None, "full", 100_000),
        )
    assert output.startswith("<memory>\n") and output.endswith("\n</memory>")
    brief = output.removeprefix("<memory>\n").removesuffix("\n</memory>")
    assert brief and len(brief) <= LIMIT < len(unbounded)
    assert "TinyChat turn" in unbounded


def test_save_message_refuses_the_registered_client_and_names_it(
    tinychat: None, quiet_settings: Settings
) -> None:
    state = open_state(quiet_settings)
    try:
        server = create_server(quiet_settings, state)

        async def go() -> Any:
            info = Implementation(name="TinyChat-MCP-Client", version="1")
            async with Client(server, client_info=info) as client:
                tools = await client.list_tools()
                saved = await client.call_tool("save_message", {"role": "user", "message": "hi"})
                filtered = await client.call_tool(
                    "search_memory", {"query": "hi", "platform": NAME}
                )
                return tools, saved, filtered

        tools, saved, filtered = anyio.run(go)
    finally:
        state.close()
    assert not saved.is_error, saved.content
    assert json.loads(saved.content[0].text)["skipped"] == "auto-capture active"
    described = {t.name: t for t in tools.tools}
    assert "TinyChat are)" in (described["save_message"].description or "")
    # search_memory's platform takes the registered client's name (its description names one
    # example only: the definitions are kept short, issue 30)
    assert filtered.structured_content["count"] == 0, filtered.content


def test_install_dry_run_shows_the_registered_clients_plan(tinychat: None, home: Path) -> None:
    result = CliRunner().invoke(cli, ["install", "--dry-run"], env=_env(home))
    assert result.exit_code == 0, result.output
    config = home / ".tinychat" / "config.json"
    assert f"{NAME}: would create {config} (MCP server)" in result.output
    assert f'+    "{MCP_SERVER_NAME}": {{' in result.output
    assert not config.exists()


def test_status_lists_the_registered_client(
    tinychat: None, home: Path, quiet_settings: Settings
) -> None:
    _backfill(quiet_settings, home)
    result = CliRunner().invoke(status, ["--json"], obj=quiet_settings, env=_env(home))
    report = json.loads(result.output)
    mine = report["platforms"][NAME]
    assert mine["files_on_disk"] == 1 and mine["files_tracked"] == 1 and mine["rows"] == 40
    assert report["installed"][NAME] == []


def test_the_registration_is_undone() -> None:
    undo = adapters.register(NAME, TinyChatAdapter)
    assert NAME in adapters.names()
    with pytest.raises(AdapterError, match="already registered"):
        adapters.register(NAME, TinyChatAdapter)
    undo()
    assert NAME not in adapters.names()
    with pytest.raises(AdapterError, match="unknown platform"):
        adapters.get_adapter(NAME)


@pytest.mark.usefixtures("tinychat")
@pytest.mark.parametrize(
    ("group", "command"),
    [
        (memory_cli, "search"),
        (memory_cli, "forget"),
        (memory_cli, "export"),
        (cli, "pause"),
        (cli, "backfill"),
        (cli, "install"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_every_commands_client_list_comes_from_the_registry(group: Any, command: str) -> None:
    """The help lists the clients registered when it is shown (none is written by hand)."""
    shown = CliRunner().invoke(group, [command, "--help"], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert NAME in " ".join(shown.output.split())
