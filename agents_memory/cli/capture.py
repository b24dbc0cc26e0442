"""``memory-capture``: the workstation side — capture daemon, backfill, status."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from agents_memory import __version__
from agents_memory.adapters import names as adapter_names
from agents_memory.cli.common import (
    ScriptGroup,
    configure_logging,
    debug_option,
    run_main,
    settings_from,
)
from agents_memory.cli.vocabulary import client_option, json_option, since_option
from agents_memory.config import (
    Settings,
    brief_socket_path,
    capture_socket_path,
    load_settings,
    user_state_dir,
)

if TYPE_CHECKING:
    from agents_memory.capture.discovery import Catalog

PID_FILE_NAME = "capture.pid"


@click.group(
    cls=ScriptGroup,
    script="memory-capture",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="memory-capture")
@debug_option
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Capture every turn your coding agents write to their transcripts into shared memory."""
    if ctx.invoked_subcommand == "hook":
        return  # hooks load what they need inside their own time budget
    settings = load_settings()
    configure_logging("DEBUG" if "--debug" in sys.argv else settings.log_level, settings.secrets())
    ctx.obj = settings


def _catalog(settings: Settings, platforms: tuple[str, ...] = ()) -> Catalog:
    from agents_memory.adapters import all_adapters
    from agents_memory.capture.discovery import Catalog

    chosen = platforms or settings.capture_enabled_platforms
    return Catalog(all_adapters(chosen), Path.home())


def pid_file() -> Path:
    return user_state_dir() / PID_FILE_NAME


@cli.command()
@click.option(
    "--poll",
    is_flag=True,
    help="Do not use inotify; rely on the periodic rescan (NFS, bind mounts).",
)
@click.option(
    "--no-cold-path",
    is_flag=True,
    help="Do not run the background worker (the Cold Path: tags, vectors, profile, summaries) "
    "as a child; a service manager runs it (the systemd unit).",
)
@click.option(
    "--log-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Log to this file (created 0600, rotated at 10 MiB, 3 kept) instead of stderr; "
    "`start` uses capture.log in the state dir.",
)
@debug_option
@click.pass_context
def run(ctx: click.Context, poll: bool, no_cold_path: bool, log_file: Path | None) -> None:
    """Run the capture daemon in the foreground (what the service and `start` run).

    Watches every enabled client's transcript folders and stores each new user/assistant turn
    exactly once. It also runs the background worker that tags, embeds and summarises the
    turns (the Cold Path, `mcp-agents-memory coldpath`) as its child,
    restarted when it exits, unless COLD_PATH_ENABLED=false or --no-cold-path. SIGTERM or
    Ctrl-C finishes the current file, stops the Cold Path and exits cleanly.
    """
    from agents_memory.capture.daemon import CaptureDaemon, Companion, PidFile
    from agents_memory.capture.supervisor import ColdPathSupervisor
    from agents_memory.install.installer import resolve_commands
    from agents_memory.recall.context_files import ContextFiles
    from agents_memory.recall.socket_server import BriefServer

    settings = settings_from(ctx)
    if log_file is not None:
        from agents_memory.capture.logfile import log_to

        log_to(log_file)
    catalog = _catalog(settings)
    lock = PidFile(pid_file())
    first = lock.acquire()
    # Only the first daemon listens for flush nudges, serves briefs and runs the Cold Path; a
    # second one still captures safely.
    companions: list[Companion] = [ContextFiles(settings, catalog.home)]
    if first:
        from agents_memory.cli.search_remote import SearchCommands

        briefs = BriefServer(settings, brief_socket_path(), SearchCommands())
        briefs.warm_ahead()  # the model loads while the database opens
        companions.append(briefs)
    if first and settings.cold_path_enabled and not no_cold_path:
        server = resolve_commands().mcp_server
        companions.append(
            ColdPathSupervisor(
                [str(server), "coldpath"], restart_sec=settings.cold_path_interval_sec
            )
        )
    daemon = CaptureDaemon(
        settings,
        catalog,
        poll_only=poll,
        nudge_socket=capture_socket_path() if first else None,
        companions=companions,
    )

    def _stop(signum: int, _frame: FrameType | None) -> None:
        daemon.stop()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        daemon.run()
    finally:
        lock.release()


@cli.command()
@client_option(multiple=True)
@since_option("Only transcripts modified from the start of this day or period")
@json_option("the summary")
@debug_option
@click.pass_context
def backfill(
    ctx: click.Context, platforms: tuple[str, ...], since: str | None, as_json: bool
) -> None:
    """Import existing history from every client's transcripts (safe while the daemon runs).

    Exits 1 when a transcript or a folder of transcripts could not be read (each is listed
    with the reason); run it again once they are readable.
    """
    from agents_memory.capture.backfill import backfill as run_backfill
    from agents_memory.cli.views import backfill_progress, print_backfill

    settings = settings_from(ctx)
    catalog = _catalog(settings, platforms)
    when = _since(since)
    with backfill_progress(enabled=not as_json and sys.stderr.isatty()) as progress:
        report = run_backfill(settings, catalog, since=when, progress=progress)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "seconds": report.seconds,
                    "stored": report.stored,
                    "platforms": {k: vars_of(v) for k, v in report.platforms.items()},
                    "unreadable": [
                        {"path": str(u.path), "reason": u.reason, "platform": u.platform}
                        for u in report.unreadable
                    ],
                },
                indent=2,
            )
        )
    else:
        print_backfill(report)
    if report.unreadable:
        ctx.exit(1)


def _since(text: str | None) -> datetime | None:
    """``--since`` in the one date grammar (:mod:`agents_memory.daterange`): its start."""
    from agents_memory.daterange import parse_date_range

    if text is None:
        return None
    try:
        return parse_date_range(text, datetime.now().astimezone()).start
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from exc


def vars_of(obj: object) -> dict[str, object]:
    from dataclasses import asdict, is_dataclass

    assert is_dataclass(obj) and not isinstance(obj, type)
    return asdict(obj)


@cli.command()
@json_option("the status")
@debug_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show per client: transcripts, rows, last capture, lag, errors; and the daemon's state."""
    from agents_memory.cli.views import print_status
    from agents_memory.ops.status import capture_status

    settings = settings_from(ctx)
    catalog = _catalog(settings)
    try:
        here: Path | None = Path.cwd()
    except OSError:  # a directory removed under the shell
        here = None
    report = capture_status(settings, catalog, pid_file(), cwd=here)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        print_status(report)
    if report.problems:
        ctx.exit(1)


@cli.command()
@client_option()
@click.option(
    "--for",
    "duration",
    metavar="DURATION",
    help="End the pause by itself after this long (30m, 2h, 1d, 1h30m); default: until resumed.",
)
@debug_option
@click.pass_context
def pause(ctx: click.Context, platform: str | None, duration: str | None) -> None:
    """Pause capture on this device (one client, or all). Turns written while paused are never
    captured, not even later: the daemon and backfill move past them."""
    from agents_memory.daterange import parse_duration
    from agents_memory.ops.pause import describe_pause, pause_capture
    from agents_memory.store.entry import open_user_connection

    length = None
    if duration is not None:
        try:
            length = parse_duration(duration)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--for") from exc
    settings = settings_from(ctx)
    with open_user_connection(settings, prepare=True) as opened:
        made = pause_capture(
            opened.conn,
            settings.device_name,
            platform=platform,
            duration=length,
            now=datetime.now(UTC),
        )
    click.echo(describe_pause(made, settings.device_name))


@cli.command()
@client_option("Only this client's pause")
@debug_option
@click.pass_context
def resume(ctx: click.Context, platform: str | None) -> None:
    """Resume capture paused with `pause` (new turns are captured again from now on)."""
    from agents_memory.ops.pause import describe_resume, resume_capture
    from agents_memory.store.entry import open_user_connection

    settings = settings_from(ctx)
    with open_user_connection(settings, prepare=True) as opened:
        report = resume_capture(opened.conn, settings.device_name, platform=platform)
    for line in describe_resume(report, platform):
        click.echo(line)


def _daemon_process() -> Any:
    from agents_memory.install.installer import resolve_commands
    from agents_memory.ops.daemon import DaemonProcess

    return DaemonProcess(
        resolve_commands().memory_capture, pid_file(), user_state_dir() / "capture.log"
    )


@cli.command()
@debug_option
def start() -> None:
    """Start the capture daemon in the background, with its background worker (the Cold Path)
    as its child (for systems without systemd or launchd); its output goes to capture.log in
    the state dir."""
    for line in _daemon_process().start():
        click.echo(line)


@cli.command()
@debug_option
@click.pass_context
def stop(ctx: click.Context) -> None:
    """Stop the capture daemon (and its Cold Path), then the embedded database server; waits
    for each. Any command starts the database again when it needs it."""
    from agents_memory.store import database

    for line in _daemon_process().stop():
        click.echo(line)
    settings = settings_from(ctx)
    if database.external_conninfo(settings) is None:
        server = database.embedded_server(settings)
        stopped = server.stop()
        click.echo(
            "stopped the embedded database" if stopped else "the embedded database is not running"
        )


HOOK_PLATFORMS = tuple(adapter_names())


def _install_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--yes", "-y", is_flag=True, help="Do not ask before changing files.")(func)
    func = click.option(
        "--dry-run", is_flag=True, help="Print the changes as unified diffs; write nothing."
    )(func)
    return client_option(
        "Only this client; default every client found on this machine", multiple=True
    )(func)


@cli.command()
@_install_options
@click.option(
    "--files-only",
    is_flag=True,
    help="Only write hooks, MCP entries and service files: no database, no import, no start.",
)
@debug_option
@click.pass_context
def install(
    ctx: click.Context, platforms: tuple[str, ...], dry_run: bool, yes: bool, files_only: bool
) -> None:
    """Set up everything: the database, your existing history, your agent clients, the daemon.

    Creates the database and imports existing history (with a progress bar), then per client:
    a SessionStart hook that injects the memory brief (or, for a client without one, a managed
    context block the daemon keeps fresh), a hook that nudges the daemon when a turn ends, and
    the MCP server entry; `--dry-run` shows each client's plan. Then the service (systemd user
    units, a launchd agent on macOS) and starts it; without either it starts the daemon itself
    (`memory-capture start`), which runs the Cold Path as its child. Every edited file is
    backed up first; running it again changes nothing.
    """
    from agents_memory.cli.install import run_command

    run_command(ctx, "install", platforms, dry_run=dry_run, yes=yes, files_only=files_only)


@cli.command()
@_install_options
@click.option(
    "--purge",
    is_flag=True,
    help="Also delete the data, state and settings (asks first, showing sizes; --yes skips).",
)
@debug_option
@click.pass_context
def uninstall(
    ctx: click.Context, platforms: tuple[str, ...], dry_run: bool, yes: bool, purge: bool
) -> None:
    """Remove exactly what `install` added (hooks, MCP entries, context blocks, units).

    Without --platform it also stops the daemon and removes the service files (systemd
    units, launchd agent); the data stays unless --purge, which also stops the database and
    deletes your memories, the state and our settings file. Your other settings, hooks and MCP
    servers are left as they are. The commands stay: `pipx uninstall mcp-agents-memory`.
    """
    from agents_memory.cli.install import run_command

    if purge and platforms:
        raise click.UsageError("--purge removes everything, so it takes no --platform")
    run_command(
        ctx, "uninstall", platforms, dry_run=dry_run, yes=yes, files_only=False, purge=purge
    )


@cli.group()
def hook() -> None:
    """Commands that agent clients run from their hooks (fail open, fast, silent)."""


@hook.command("session-start")
@click.option(
    "--platform",
    required=True,
    type=click.Choice(HOOK_PLATFORMS),
    help="The client running the hook.",
)
def hook_session_start(platform: str) -> None:
    """Print the memory brief for a new session in the client's hook format.

    Reads the client's hook JSON on stdin (session id, cwd, model). Prints nothing and exits 0
    on any failure or after HOOK_TIMEOUT_MS (default 1500 ms).
    """
    from agents_memory.hooks.fast import run as run_hook

    run_hook(["session-start", "--platform", platform])


@hook.command("prompt")
@click.option(
    "--platform",
    required=True,
    type=click.Choice(HOOK_PLATFORMS),
    help="The client running the hook.",
)
def hook_prompt(platform: str) -> None:
    """Print the few memories the user's prompt needs, in the client's hook format.

    Reads the client's per-prompt hook JSON on stdin (prompt, session id, cwd). Prints nothing
    when no memory clears the confidence, when per-prompt recall is off (PROMPT_RECALL=off, or
    the project's .agents-memory/no-prompt-recall), on any failure, and after
    PROMPT_HOOK_TIMEOUT_MS (default 300 ms); exits 0.
    """
    from agents_memory.hooks.fast import run as run_hook

    run_hook(["prompt", "--platform", platform])


@hook.command("flush")
def hook_flush() -> None:
    """Tell the running capture daemon to read this session's transcript now.

    Reads the client's hook JSON on stdin (transcript_path) and returns at once.
    """
    from agents_memory.hooks.fast import run as run_hook

    run_hook(["flush"])


def main() -> None:
    run_main(cli)


if __name__ == "__main__":
    main()
