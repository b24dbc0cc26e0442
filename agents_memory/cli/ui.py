"""``mcp-agents-memory ui``: the memory console, a local web page on 127.0.0.1 (the app is
:mod:`agents_memory.console`)."""

from __future__ import annotations

import contextlib
import webbrowser
from pathlib import Path

import click

from agents_memory.cli.common import debug_option, settings_from


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="The port on 127.0.0.1 (0: any free one).",
)
@click.option("--no-browser", is_flag=True, help="Only print the login URL; open no browser.")
@debug_option
@click.pass_context
def ui(ctx: click.Context, port: int, no_browser: bool) -> None:
    """Serve the memory console on 127.0.0.1: status, timeline, search, sessions, projects,
    knowledge, the brief, forget and the archive, export and import.

    Prints one URL with a one-time login token; the console answers only on this machine.
    """
    from agents_memory.adapters import all_adapters
    from agents_memory.capture.discovery import Catalog
    from agents_memory.cli.capture import pid_file
    from agents_memory.console.app import bind, create_app, serve
    from agents_memory.console.build import open_console
    from agents_memory.console.security import Guard

    settings = settings_from(ctx)
    catalog = Catalog(all_adapters(settings.capture_enabled_platforms), Path.home())
    console = open_console(settings, catalog, pid_file())
    sock = bind(port)
    guard = Guard(port=sock.getsockname()[1])
    click.echo(f"memory console: {guard.login_url()}", err=False)
    click.echo("(the link logs in once; stop the console with Ctrl+C)", err=True)
    if not no_browser:
        with contextlib.suppress(webbrowser.Error):
            webbrowser.open(guard.login_url())
    try:
        serve(create_app(console, guard), sock)
    finally:
        console.state.close()
        sock.close()
