"""``mcp-agents-memory db start|stop|status``: the embedded PostgreSQL server by hand.

Every command starts the embedded server when it needs it and leaves it running (it is shared
by the daemon, the MCP servers and the CLI); ``db stop`` is the way to stop it (the capture
daemon, the Cold Path and open MCP servers lose their connection and reconnect, or start it
again, when they next need it).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from agents_memory.cli.common import debug_option, settings_from
from agents_memory.config import Settings

if TYPE_CHECKING:
    from agents_memory.store.embedded import EmbeddedServer


def _server(settings: Settings) -> EmbeddedServer:
    from agents_memory.store import database

    if database.external_conninfo(settings) is not None:
        raise click.ClickException(
            "DATABASE_URL / DB_HOST point at an external server: start and stop it there"
        )
    return database.embedded_server(settings)


@click.group()
def db() -> None:
    """Start, stop or show the embedded PostgreSQL server."""


@db.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@debug_option
@click.pass_context
def db_status(ctx: click.Context, as_json: bool) -> None:
    """Whether the embedded server runs, where, and its data directory."""
    server = _server(settings_from(ctx))
    info = server.running()
    data = {
        "running": info is not None,
        "pid": info.pid if info is not None else None,
        "socket": str(info.socket_dir) if info is not None else None,
        "port": info.port if info is not None else None,
        "data_dir": str(server.pgdata),
        "initialized": server.initialized(),
    }
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    state = f"running (pid {data['pid']}, port {data['port']})" if info else "not running"
    click.echo(f"embedded server {state}; data in {server.pgdata}")


@db.command("start")
@debug_option
@click.pass_context
def db_start(ctx: click.Context) -> None:
    """Start the embedded server (creating its cluster on first use)."""
    server = _server(settings_from(ctx))
    was = server.running()
    info = server.start()
    verb = "already running" if was is not None else "started"
    click.echo(f"embedded server {verb} (pid {info.pid}); data in {server.pgdata}")


@db.command("stop")
@debug_option
@click.pass_context
def db_stop(ctx: click.Context) -> None:
    """Stop the embedded server (fast shutdown: open sessions are disconnected)."""
    server = _server(settings_from(ctx))
    if server.stop():
        click.echo(f"embedded server stopped; data in {server.pgdata}")
    else:
        click.echo("embedded server was not running")
