"""The one width rule for every table the commands print (backfill, status, search), and the
one way a table shows a time. Light on purpose: ``search`` imports it on every call.

A table is printed on a :class:`Terminal`: this process's own (:meth:`Terminal.standard`), or
the one a ``mcp-agents-memory search`` client described to the capture daemon (its stdout's
tty-ness, encoding, size and the environment variables a console reads), so that the daemon's
rendering is byte for byte the command's (:mod:`agents_memory.cli.search_remote`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TextIO

from rich.console import Console

from agents_memory.cli.fast_search import terminal_size

PIPED_WIDTH = 80
"""The width of a table when stdout is not a terminal and ``COLUMNS`` is not set."""


@dataclass(frozen=True)
class Terminal:
    """Where a command writes and what its console needs to know about it."""

    out: TextIO
    err: TextIO
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    size: tuple[int, int] | None = None
    """The first standard stream's terminal size (``None``: none is a terminal)."""

    @classmethod
    def standard(cls) -> Terminal:
        return cls(sys.stdout, sys.stderr, os.environ, terminal_size())


def table_width(
    *, is_terminal: bool, terminal_width: int, environ: Mapping[str, str] | None = None
) -> int:
    """The terminal's width on a terminal; when piped (a file, ``less``, journald),
    ``COLUMNS`` when it is set, else :data:`PIPED_WIDTH`."""
    if is_terminal:
        return terminal_width
    columns = (os.environ if environ is None else environ).get("COLUMNS", "").strip()
    return int(columns) if columns.isdigit() and int(columns) > 0 else PIPED_WIDTH


def table_console(terminal: Terminal | None = None) -> Console:
    """A console on the terminal's stdout whose width is :func:`table_width`."""
    where = Terminal.standard() if terminal is None else terminal
    probe = Console(file=where.out, _environ=where.environ)
    width = table_width(
        is_terminal=probe.is_terminal,
        terminal_width=_terminal_width(probe, where),
        environ=where.environ,
    )
    return Console(file=where.out, width=width, _environ=where.environ)


def _terminal_width(probe: Console, terminal: Terminal) -> int:
    """A terminal's width as the console reckons it, from the terminal's own size rather than
    this process's standard streams (the daemon's are not the client's)."""
    if probe.is_dumb_terminal:
        return 80
    columns = terminal.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns) or 80
    return (terminal.size[0] if terminal.size else 0) or 80


def compact_time(value: datetime) -> str:
    """A table's time: ``2026-12-01 21:14``, always with its year (local time)."""
    return value.astimezone().strftime("%Y-%m-%d %H:%M")
