"""``capture.log``: the daemon's log when no service manager keeps it (``memory-capture start``),
written by the daemon itself so that it is rotated (:data:`MAX_BYTES`, :data:`BACKUPS` old
files) and readable by its owner only (0600, every file of the rotation)."""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import sys
from pathlib import Path
from typing import IO, Any, Final

MAX_BYTES: Final = 10 * 1024 * 1024
"""``capture.log`` is rotated once it would grow past this."""
BACKUPS: Final = 3
"""Rotated files kept: ``capture.log.1`` (newest) … ``capture.log.3``."""
MODE: Final = 0o600


def open_private(path: Path) -> int:
    """A descriptor appending to ``path``, created 0600 (an older file is made 0600 too)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, MODE)
    os.fchmod(fd, MODE)
    return fd


class CaptureLog(logging.handlers.RotatingFileHandler):
    """A rotating handler whose files are 0600 and whose current file also takes the process's
    own standard output and error (what a library prints, a traceback), after every
    rotation too."""

    def __init__(self, path: Path, *, max_bytes: int = MAX_BYTES, backups: int = BACKUPS) -> None:
        self.redirect = False
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")

    def _open(self) -> io.TextIOWrapper:
        stream = open(  # noqa: SIM115 - the handler owns and closes it
            self.baseFilename,
            "a",
            encoding=self.encoding,
            errors=self.errors,
            opener=lambda name, _flags: open_private(Path(name)),
        )
        if self.redirect:
            _take_std_streams(stream)
        return stream


def _take_std_streams(stream: IO[Any]) -> None:
    for std in (sys.stdout, sys.stderr):
        std.flush()
    for fd in (1, 2):
        os.dup2(stream.fileno(), fd)


def log_to(path: Path, *, max_bytes: int = MAX_BYTES, backups: int = BACKUPS) -> CaptureLog:
    """Send every log record (and this process's stdout and stderr) to ``path`` instead of
    stderr, through a :class:`CaptureLog` with the root handler's format and filters."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = CaptureLog(path, max_bytes=max_bytes, backups=backups)
    root = logging.getLogger()
    for old in list(root.handlers):
        handler.setFormatter(old.formatter)
        for found in old.filters:
            handler.addFilter(found)
        root.removeHandler(old)
    handler.redirect = True
    if handler.stream is not None:
        _take_std_streams(handler.stream)
    root.addHandler(handler)
    return handler
