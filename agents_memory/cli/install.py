"""The terminal side of ``memory-capture install`` / ``uninstall``: build the installer for
this user, ask once, print what happened."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import click

from agents_memory.adapters import all_adapters
from agents_memory.config import Settings, user_state_dir
from agents_memory.install import services
from agents_memory.install.installer import Action, Change, Installer, Report, resolve_commands

GRACE_NOTE = (
    "codex-cli: set mcp_optional_startup_grace_ms = 5000 in ~/.codex/config.toml (you had no "
    "value): without it `codex exec` sends its first turn before any MCP server is up and the "
    "memory tools miss that turn; Codex stops waiting as soon as the servers are up"
)


def build_installer(settings: Settings, *, files_only: bool = False) -> Installer:
    """The installer for the current user: real home, PATH, systemctl and launchctl; unless
    ``files_only``, it also creates the database, imports history and starts the daemon."""
    from agents_memory.ops.daemon import DaemonProcess

    systemctl = shutil.which("systemctl")
    launchctl = shutil.which("launchctl")
    commands = resolve_commands()
    state = user_state_dir()
    daemon = DaemonProcess(commands.memory_capture, state / PID_NAME, state / "capture.log")
    return Installer(
        home=Path.home(),
        commands=commands,
        state_dir=state,
        systemctl=services.systemctl_runner(systemctl) if systemctl else None,
        cold_path=settings.cold_path_enabled,
        launchctl=services.systemctl_runner(launchctl, user=False) if launchctl else None,
        prepare=None if files_only else lambda: prepare_data(settings),
        daemon=None if files_only else daemon,
    )


PID_NAME = "capture.pid"


def prepare_data(settings: Settings) -> list[str]:
    """Create (or upgrade) the database, then import existing history with a progress bar."""
    from agents_memory.adapters import all_adapters as adapters
    from agents_memory.capture.backfill import backfill
    from agents_memory.capture.discovery import Catalog
    from agents_memory.cli.views import backfill_progress, print_backfill
    from agents_memory.embeddings import embedding_spec
    from agents_memory.store import database

    db = database.open_database(settings, embedding=embedding_spec(settings))
    click.echo(f"database: {db.description}")
    catalog = Catalog(adapters(settings.capture_enabled_platforms), Path.home())
    with backfill_progress(enabled=sys.stderr.isatty()) as progress:
        report = backfill(settings, catalog, progress=progress)
    print_backfill(report)
    return [f"history: {u.platform}: cannot read {u.path}: {u.reason}" for u in report.unreadable]


def _verb(change: Change, dry_run: bool) -> str:
    if change.before is None:
        return "would create" if dry_run else "created"
    if change.after is None:
        return "would remove" if dry_run else "removed"
    return "would update" if dry_run else "updated"


def _line(change: Change, dry_run: bool) -> str:
    what = f" ({change.summary})" if change.summary else ""
    return f"{change.platform}: {_verb(change, dry_run)} {change.path}{what}"


def ask(report: Report) -> bool:
    """Show the plan and ask once."""
    click.echo(f"memory-capture {report.action} will change:")
    for change in report.changes:
        click.echo("  " + _line(change, dry_run=True))
    return click.confirm("Apply these changes?", default=True)


def print_report(report: Report) -> None:
    for error in report.errors:
        click.echo(f"error: {error}", err=True)
    changes = report.changes
    for change in changes:
        if report.dry_run:
            click.echo(_line(change, dry_run=True))
            click.echo(change.diff(), nl=False)
        else:
            click.echo(_line(change, dry_run=False))
    if not changes:
        done = "installed" if report.action == "install" else "removed"
        click.echo(f"nothing to change: mcp-agents-memory is already {done} here")
    for client in report.clients:
        for note in client.notes:
            click.echo(f"{client.platform}: {note}")
    for note in report.notes:
        click.echo(note)
    if report.action == "install" and _grace_added(report):
        click.echo(GRACE_NOTE)
    if report.backups:
        click.echo("backups: " + ", ".join(str(p) for p in report.backups))


def _grace_added(report: Report) -> bool:
    key = "mcp_optional_startup_grace_ms"
    return any(
        c.path.name == "config.toml"
        and key in (c.after or "")
        and key not in (c.before or "")
        and c.platform == "codex-cli"
        for c in report.changes
    )


def run_command(
    ctx: click.Context,
    action: Action,
    platforms: tuple[str, ...],
    *,
    dry_run: bool,
    yes: bool,
    files_only: bool = False,
    factory: Callable[..., Installer] = build_installer,
) -> None:
    """What the two click commands do."""
    from agents_memory.cli.common import settings_from

    installer = factory(settings_from(ctx), files_only=files_only or dry_run)
    if action == "install" and not platforms and not installer.detect():
        looked_for = ", ".join(b for adapter in all_adapters() for b in adapter.binaries[:1])
        click.echo(
            f"no supported agent client found here ({looked_for}); "
            "use --platform NAME to install for one anyway"
        )
    interactive = not yes and not dry_run and sys.stdin.isatty()
    report = installer.run(action, platforms, dry_run=dry_run, confirm=ask if interactive else None)
    print_report(report)
    if report.errors:
        ctx.exit(1)
