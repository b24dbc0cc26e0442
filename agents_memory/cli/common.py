"""What both console scripts share: error handling, logging set-up, settings loading."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from agents_memory.config import Settings, load_settings
from agents_memory.errors import AgentsMemoryError

_DEBUG_FLAG = "--debug"


def configure_logging(level: str) -> None:
    """Handlers configured once per entry point, to stderr (journald under systemd)."""
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # watchdog logs every inotify event at DEBUG: with the log written inside a watched
    # folder that is an endless feedback loop, and it drowns our own debug lines anyway.
    logging.getLogger("watchdog").setLevel(logging.INFO)


def settings_from(ctx: click.Context) -> Settings:
    """The settings loaded once by the group callback."""
    settings = ctx.find_object(Settings)
    if settings is None:
        settings = load_settings()
        ctx.obj = settings
    return settings


def run_main(group: click.Group, argv: list[str] | None = None) -> NoReturn:
    """Run ``group``; an :class:`AgentsMemoryError` becomes one line on stderr and exit 1
    (``--debug`` anywhere on the command line shows the traceback instead)."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = _DEBUG_FLAG in args
    try:
        group.main(args=args, standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except AgentsMemoryError as exc:
        if debug:
            raise
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(0)


def debug_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--debug``: tracebacks instead of one-line errors, and DEBUG logging."""
    return click.option(
        _DEBUG_FLAG,
        is_flag=True,
        expose_value=False,
        is_eager=True,
        help="Show tracebacks and debug logging.",
    )(func)


def human_bytes(size: int | None) -> str:
    if size is None:
        return "?"
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
