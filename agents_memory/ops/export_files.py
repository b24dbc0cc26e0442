"""Where an export may write, and how: files only the owner can read, nothing replaced unasked.

An export holds the owner's conversations, so its files are created ``0600`` and the folders it
creates ``0700``; an existing file is replaced only with ``force`` (``export --force``), and the
folder the path names must already exist (a mistyped path is refused, not created).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Literal

from agents_memory.errors import BundleError

FILE_MODE = 0o600
DIR_MODE = 0o700


def check_destination(path: Path, *, tree: bool, force: bool) -> None:
    """Refuse, in one line, a destination the export must not write: a folder that does not
    exist above it, an existing file (a bundle) or a non-empty folder (a tree) without
    ``force``, or a path of the wrong kind."""
    parent = path.parent
    if not parent.is_dir():
        raise BundleError(f"folder {parent} does not exist: create it first, or name another path")
    if not os.path.lexists(path):
        return
    if tree:
        if not path.is_dir() or path.is_symlink():
            raise BundleError(f"{path} exists and is not a folder: name a new folder")
        if not force and any(path.iterdir()):
            raise BundleError(
                f"{path} already exists and is not empty: pass --force to write into it "
                "(files of the same names are replaced)"
            )
        return
    if path.is_dir():
        raise BundleError(f"{path} is a folder: name the bundle file to write")
    if not force:
        raise BundleError(f"{path} already exists: pass --force to replace it")


def make_private_dir(path: Path, *, ours: bool = False) -> None:
    """Create ``path`` (one level: its parent must exist) ``0700``. An existing one is kept as
    it is, unless it is ``ours`` (a folder of the export's own tree): then it is made ``0700``."""
    path.mkdir(mode=DIR_MODE, exist_ok=True)
    if ours:
        path.chmod(DIR_MODE)


def open_private(path: Path, mode: Literal["w", "a"]) -> IO[str]:
    """``path`` opened for text, created or truncated (``"w"``) or appended to (``"a"``), and
    ``0600`` whatever it was before."""
    return os.fdopen(_private_fd(path, append=mode == "a"), mode, encoding="utf-8")


def open_private_binary(path: Path) -> IO[bytes]:
    """``path`` created or truncated for writing bytes, ``0600`` whatever it was before."""
    return os.fdopen(_private_fd(path, append=False), "w+b")


def _private_fd(path: Path, *, append: bool) -> int:
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    if not append:
        flags = (flags & ~os.O_WRONLY) | os.O_RDWR  # a zip is seeked back into
    fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    except OSError:
        os.close(fd)
        raise
    return fd
