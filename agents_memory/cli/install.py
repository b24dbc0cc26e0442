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


def build_installer(settings: Settings) -> Installer:
    """The installer for the current user: real home, PATH and systemctl."""
    systemctl = shutil.which("systemctl")
    return Installer(
        home=Path.home(),
        commands=resolve_commands(),
        state_dir=user_state_dir(),
        systemctl=services.systemctl_runner(systemctl) if systemctl else None,
        cold_path=settings.cold_path_enabled,
    )


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
    if report.backups:
        click.echo("backups: " + ", ".join(str(p) for p in report.backups))


def run_command(
    ctx: click.Context,
    action: Action,
    platforms: tuple[str, ...],
    *,
    dry_run: bool,
    yes: bool,
    factory: Callable[[Settings], Installer] = build_installer,
) -> None:
    """What the two click commands do."""
    from agents_memory.cli.common import settings_from

    installer = factory(settings_from(ctx))
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
