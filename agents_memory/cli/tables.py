"""The one width rule for every table the commands print (backfill, status, search), and the
one way a table shows a time. Light on purpose: ``search`` imports it on every call."""

from __future__ import annotations

import os
from datetime import datetime

from rich.console import Console

PIPED_WIDTH = 80
"""The width of a table when stdout is not a terminal and ``COLUMNS`` is not set."""


def table_width(*, is_terminal: bool, terminal_width: int) -> int:
    """The terminal's width on a terminal; when piped (a file, ``less``, journald),
    ``COLUMNS`` when it is set, else :data:`PIPED_WIDTH`."""
    if is_terminal:
        return terminal_width
    columns = os.environ.get("COLUMNS", "").strip()
    return int(columns) if columns.isdigit() and int(columns) > 0 else PIPED_WIDTH


def table_console() -> Console:
    """A console on stdout whose width is :func:`table_width`."""
    probe = Console()
    return Console(width=table_width(is_terminal=probe.is_terminal, terminal_width=probe.width))


def compact_time(value: datetime) -> str:
    """A table's time: ``2026-12-01 21:14``, always with its year (local time)."""
    return value.astimezone().strftime("%Y-%m-%d %H:%M")
