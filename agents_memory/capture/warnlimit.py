"""Warnings about one read of one file, rate-limited: a transcript of 20,000 broken lines
gives :data:`SHOWN_PER_READ` warnings and one line with the count, not 20,000 lines."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Final

SHOWN_PER_READ: Final = 5
"""How many warnings of one read of one file are logged one by one."""


class FileWarnings:
    """The warnings of one read of ``path``: the first :data:`SHOWN_PER_READ` go to ``log``,
    the rest are counted and told by :meth:`done` in one line."""

    def __init__(self, log: logging.Logger, path: Path) -> None:
        self.log = log
        self.path = path
        self.shown = 0
        self.held = 0

    def warn(self, message: str, *args: object) -> None:
        """Log ``message % args`` after the file's name, or count it once enough were shown."""
        if self.shown >= SHOWN_PER_READ:
            self.held += 1
            return
        self.shown += 1
        self.log.warning("%s: " + message, self.path, *args)

    def done(self) -> None:
        """One line for the warnings held back (none when there were none)."""
        if self.held:
            self.log.warning(
                "%s: %d more warning(s) like these in this read, not shown one by one"
                " (%d in all; `memory-capture status` counts the file's bad records)",
                self.path,
                self.held,
                self.shown + self.held,
            )
            self.held = 0
