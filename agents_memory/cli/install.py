"""The terminal side of ``memory-capture install`` / ``uninstall``: build the installer for
this user, ask once, print what happened."""

from __future__ import annotations

import logging
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import click

from agents_memory.adapters import all_adapters
from agents_memory.adapters.base import Commands
from agents_memory.config import Settings, user_state_dir
from agents_memory.install import launchd, services
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

    migrations = logging.getLogger("agents_memory.store")
    level = migrations.level
    if not logging.getLogger().isEnabledFor(logging.DEBUG):
        migrations.setLevel(logging.WARNING)  # the summary names the database, not each step
    try:
        db = database.open_database(settings, embedding=embedding_spec(settings))
    finally:
        migrations.setLevel(level)
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
    purge: bool = False,
    factory: Callable[..., Installer] = build_installer,
) -> None:
    """What the two click commands do."""
    from agents_memory.cli import purge as purging
    from agents_memory.cli.common import settings_from

    settings = settings_from(ctx)
    installer = factory(settings, files_only=files_only or dry_run)
    doomed = purging.ask(settings, yes=yes, dry_run=dry_run) if purge else None
    if purge and doomed is None:
        return
    yes = yes or purge  # the purge question covered the files too
    if action == "install" and not platforms and not installer.detect():
        looked_for = ", ".join(b for adapter in all_adapters() for b in adapter.binaries[:1])
        click.echo(
            f"no supported agent client found here ({looked_for}); "
            "use --platform NAME to install for one anyway"
        )
    interactive = not yes and not dry_run and sys.stdin.isatty()
    report = installer.run(action, platforms, dry_run=dry_run, confirm=ask if interactive else None)
    print_report(report)
    if action == "install" and not dry_run:
        print_summary(report, installer.commands, files_only=files_only)
    if report.errors:
        if doomed:
            click.echo("--purge deleted nothing: fix the errors above, then run it again")
        ctx.exit(1)
    if doomed is not None and not dry_run:
        purging.finish(settings, doomed, installer)


SUPERVISORS = {
    "systemd": "systemd user units (`systemctl --user status mcp-agents-memory-capture`)",
    "launchd": f"the launchd agent {launchd.LABEL} (it starts at log-in)",
    "daemon": (
        "its own background daemon, with the Cold Path as its child (no systemd user session "
        "or launchd here); after a reboot run `memory-capture start`"
    ),
}

NEXT_STEPS = (
    ("memory-capture status", "what is captured per client, and whether the daemon runs"),
    ('mcp-agents-memory search "what did we decide"', "search everything your agents said"),
    ("mcp-agents-memory ui", "the web console: timeline, search, projects, forget"),
)


def print_summary(report: Report, commands: Commands, *, files_only: bool) -> None:
    """After an install: which clients, what runs the daemon, whether the commands are on
    PATH, and the next steps."""
    skip = {services.PLATFORM, launchd.PLATFORM}
    clients = [c.platform for c in report.clients if c.platform not in skip and not c.error]
    click.echo("")
    click.echo(f"installed for {', '.join(clients) or 'no client'}")
    if not files_only:
        runs = SUPERVISORS.get(report.supervisor or "", "none: nothing was started (see above)")
        click.echo(f"service: {runs}")
    hint = path_hint(commands)
    if hint:
        click.echo(hint)
    click.echo("next steps:")
    width = max(len(command) for command, _ in NEXT_STEPS)
    for command, what in NEXT_STEPS:
        click.echo(f"  {command:<{width}}  {what}")


def path_hint(commands: Commands, path: str | None = None, home: Path | None = None) -> str | None:
    """A line when this shell's PATH does not lead to the installed commands (pipx's and
    uv's bin dir is often not on PATH until a new shell starts), saying whether new shells
    will find them (a shell start-up file names the dir)."""
    found = shutil.which("memory-capture", path=os.environ.get("PATH") if path is None else path)
    try:
        if found is not None and os.path.samefile(found, commands.memory_capture):
            return None
    except OSError:
        pass
    typed = _typed(commands.memory_capture)
    where = typed.parent
    named = "memory-capture and mcp-agents-memory"
    if _in_startup_files(where, Path.home() if home is None else home):
        return (
            f"new shells find {named} ({where} is on PATH in your shell's start-up file); "
            f"this one does not yet: open a new one, or type {typed}"
        )
    return (
        f"{named} are in {where}, which is not on PATH: run `pipx ensurepath` (or `uv tool "
        f"update-shell`) so that new shells find them; until then type {typed}"
    )


def _typed(installed: Path) -> Path:
    """The ``memory-capture`` this command was started as when it is the installed one (pipx
    and uv link it from ``~/.local/bin`` to their venv's), else the installed path."""
    started = Path(sys.argv[0]).absolute()
    try:
        if started.name == installed.name and os.path.samefile(started, installed):
            return started
    except OSError:
        pass
    return installed


STARTUP_FILES = (".profile", ".bash_profile", ".bashrc", ".zshrc", ".zprofile", ".zshenv")


def _in_startup_files(directory: Path, home: Path) -> bool:
    spellings = {str(directory)}
    if directory.is_relative_to(home):
        rest = directory.relative_to(home)
        spellings |= {f"$HOME/{rest}", f"${{HOME}}/{rest}", f"~/{rest}"}
    for name in STARTUP_FILES:
        try:
            text = (home / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(s in text for s in spellings):
            return True
    return False
