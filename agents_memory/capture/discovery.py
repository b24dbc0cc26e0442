"""Finding transcript files: which adapter owns a path, and every transcript under the roots.

A directory under a root that cannot be listed, a transcript that cannot be opened, or a path
named like a transcript that is no regular file (a FIFO, a link to a device), is not
skipped in silence: :meth:`Catalog.transcripts` hands it, with the reason, to the caller's
``unreadable`` list (``backfill`` and ``status`` show it; the daemon logs it), and finds it
again on the next walk once it is readable.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agents_memory.adapters.base import Adapter


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A transcript or a directory under a root that this user cannot read, and why."""

    path: Path
    reason: str
    platform: str

    def __str__(self) -> str:
        return f"cannot read {self.path}: {self.reason}"


class Catalog:
    """The enabled adapters for one home directory."""

    def __init__(self, adapters: Sequence[Adapter], home: Path) -> None:
        self.adapters = list(adapters)
        self.home = home

    def roots(self) -> list[tuple[Path, Adapter]]:
        return [(root, a) for a in self.adapters for root in a.roots(self.home)]

    def owner(self, path: Path) -> Adapter | None:
        """The adapter whose transcript ``path`` is, or ``None``."""
        for root, adapter in self.roots():
            if path.is_relative_to(root) and adapter.owns(path, self.home):
                return adapter
        return None

    def transcript_for(self, path: Path) -> tuple[Path, Adapter] | None:
        """The transcript a change of ``path`` concerns (``path`` itself, or the transcript a
        companion file such as a database's ``-wal`` belongs to) and its adapter."""
        for root, adapter in self.roots():
            if path.is_relative_to(root):
                target = adapter.transcript_for(path, self.home)
                if target is not None:
                    return target, adapter
        return None

    def transcripts(
        self, since: datetime | None = None, *, unreadable: list[Unreadable] | None = None
    ) -> Iterator[tuple[Path, Adapter]]:
        """Every readable transcript file that exists now (modified at or after ``since``, if
        given). Directories that cannot be listed and transcripts that cannot be read are
        appended to ``unreadable`` (when given) instead."""
        seen: set[Path] = set()
        threshold = since.timestamp() if since is not None else None
        for root, adapter in self.roots():
            if not root.is_dir():
                continue

            def walk_error(exc: OSError, platform: str = adapter.name) -> None:
                if unreadable is not None and not isinstance(exc, FileNotFoundError):
                    unreadable.append(_unreadable(exc, platform))

            for directory, _dirs, files in os.walk(root, onerror=walk_error, followlinks=False):
                for name in files:
                    path = Path(directory) / name
                    if path in seen or not adapter.owns(path, self.home):
                        continue
                    if threshold is not None and _mtime(path) < threshold:
                        continue
                    seen.add(path)
                    other = _not_a_file(path)
                    if other is not None:
                        if unreadable is not None:
                            unreadable.append(Unreadable(path, other, adapter.name))
                        continue
                    if not os.access(path, os.R_OK):
                        reason = _reason(path)
                        if unreadable is not None and reason is not None:
                            unreadable.append(Unreadable(path, reason, adapter.name))
                        continue
                    yield path, adapter


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def _not_a_file(path: Path) -> str | None:
    """Why ``path`` is skipped although it is named like a transcript: what it is (through a
    symbolic link: what the link points at), when that is not a regular file. Reading a FIFO
    blocks and a device never ends, so neither is opened. ``None`` for a regular file, and
    for a path that is gone (left to :func:`_reason`)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    if path.is_symlink():
        kind = f"a link to {os.path.realpath(path)}, {kind}"
    return f"{kind}, not a regular file: skipped"


def _unreadable(exc: OSError, platform: str) -> Unreadable:
    where = Path(os.fsdecode(exc.filename)) if exc.filename is not None else Path("?")
    return Unreadable(where, exc.strerror or str(exc), platform)


def _reason(path: Path) -> str | None:
    """Why ``path`` cannot be opened for reading (what ``open`` says); ``None`` when it is
    gone (deleted meanwhile, or a dangling link): nothing to read, nothing to report."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    return "not readable"


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
