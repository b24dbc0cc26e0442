"""Reading a transcript file past its cursor: complete lines only, rewrites detected.

A file that shrank, changed inode or no longer ends (at the cursor) with the bytes it ended
with last time was truncated, replaced or rewritten: it is read again from the start, and the
idempotent keys keep that from doubling anything.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from agents_memory.adapters.base import ReadMode
from agents_memory.store.capture.cursors import Cursor

TAIL_BYTES = 256
"""How many bytes before the cursor are hashed to recognise the same file next time."""
CHUNK_BYTES = 8 * 1024 * 1024
"""How much one read takes at most (more when a single line is longer)."""
MAX_LINE_BYTES = 256 * 1024 * 1024
"""A line longer than this is skipped (logged with path and offset), not read into memory."""
SETTLE_SEC = 2.0
"""A database written this recently may be mid-commit (SQLite writes the ``-wal`` frames, then
publishes them in shared memory, unseen by a file's size or time), and a file time only
moves at each clock tick: its signature is not kept, so the next pass reads it again."""


@dataclass(frozen=True, slots=True)
class Region:
    """What to hand the adapter, and how the cursor must look after it."""

    data: bytes
    offset: int
    """Absolute offset of ``data[0]``."""
    end: int
    """Absolute offset just past ``data`` (a line boundary in append mode)."""
    size: int
    dev: int
    inode: int
    restarted: bool
    """The file was read again from the start (truncated, replaced or rewritten)."""
    at_eof: bool
    """Nothing complete is left after ``end``."""
    skipped_long_line: tuple[int, int] | None = None
    """``(offset, length)`` of an over-long line jumped over, if any."""
    fingerprint: str | None = None
    """``database`` mode: the :func:`signature` the read was made at (the cursor keeps it)."""


def tail_hash(path: Path, end: int) -> str | None:
    """Hash of the ``TAIL_BYTES`` bytes before ``end`` (``None`` at offset 0)."""
    if end <= 0:
        return None
    start = max(0, end - TAIL_BYTES)
    with path.open("rb") as handle:
        handle.seek(start)
        chunk = handle.read(end - start)
    if len(chunk) != end - start:
        return "short"
    return hashlib.blake2b(chunk, digest_size=16).hexdigest()


def needs_restart(path: Path, cursor: Cursor, st: os.stat_result) -> bool:
    if cursor.offset == 0:
        return False
    if cursor.inode is not None and (cursor.inode != st.st_ino or cursor.dev != st.st_dev):
        return True
    if st.st_size < cursor.offset:
        return True
    return cursor.last_line_hash is not None and tail_hash(path, cursor.offset) != (
        cursor.last_line_hash
    )


def unchanged(cursor: Cursor, st: os.stat_result, mark: str | None = None) -> bool:
    """The file looks exactly as when the cursor was written (cheap pre-check, no read).
    ``mark``: the :func:`signature` of a ``database`` file, compared with the cursor's."""
    if mark is not None:
        return cursor.last_line_hash == mark
    return (
        cursor.inode == st.st_ino
        and cursor.dev == st.st_dev
        and cursor.size == st.st_size
        and cursor.offset == st.st_size
    )


def signature(path: Path, companions: tuple[Path, ...] = ()) -> str:
    """Identity, size and modification time of ``path`` and of each companion that exists: a
    database changes in place (and in its ``-wal``), so its tail says nothing."""
    parts = []
    for each in (path, *companions):
        try:
            st = each.stat()
        except FileNotFoundError:
            continue
        parts.append(f"{each.name}:{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def last_written(path: Path, companions: tuple[Path, ...] = ()) -> float:
    """The newest modification time of ``path`` and its companions (a database in WAL mode is
    written in its ``-wal``; the database file itself only at checkpoints)."""
    newest = 0.0
    for each in (path, *companions):
        try:
            newest = max(newest, each.stat().st_mtime)
        except FileNotFoundError:
            continue
    return newest


def read_region(
    path: Path, cursor: Cursor, mode: ReadMode, companions: tuple[Path, ...] = ()
) -> Region | None:
    """The next region to parse, or ``None`` when there is nothing new. ``database`` mode
    reads no bytes: the region is empty and says the database changed since ``cursor``."""
    st = path.stat()
    if mode == "database":  # the cursor holds a signature, not a tail hash: never "restarted"
        mark = signature(path, companions)
        if cursor.last_line_hash == mark:
            return None
        if time.time() - last_written(path, companions) < SETTLE_SEC:
            mark += "|settling"  # never equal to a signature: read again next time
        size = st.st_size
        return Region(b"", 0, size, size, st.st_dev, st.st_ino, False, True, fingerprint=mark)
    restarted = needs_restart(path, cursor, st)
    if mode == "whole":
        return _read_whole(path, cursor, st, restarted)
    offset = 0 if restarted else cursor.offset
    if offset >= st.st_size:
        return None
    with path.open("rb") as handle:
        handle.seek(offset)
        data, skipped = _complete_lines(handle, offset, st.st_size)
    end = offset + len(data) + (skipped[1] if skipped else 0)
    if not data and skipped is None:
        return None
    return Region(
        data,
        offset if skipped is None else end - len(data),
        end,
        st.st_size,
        st.st_dev,
        st.st_ino,
        restarted,
        at_eof=end >= st.st_size,
        skipped_long_line=skipped,
    )


def _complete_lines(
    reader: BinaryIO, offset: int, size: int
) -> tuple[bytes, tuple[int, int] | None]:
    """Read up to ``CHUNK_BYTES`` and cut after the last newline; grow for one long line."""
    want = CHUNK_BYTES
    buffer = reader.read(want)
    while True:
        cut = buffer.rfind(b"\n")
        if cut >= 0:
            return bytes(buffer[: cut + 1]), None
        if offset + len(buffer) >= size:
            return b"", None  # a partial last line: wait for the rest
        if len(buffer) >= MAX_LINE_BYTES:
            return _skip_line(reader, offset, len(buffer), size)
        more = reader.read(want)
        if not more:
            return b"", None
        buffer += more
        want *= 2


def _skip_line(
    reader: BinaryIO, offset: int, consumed: int, size: int
) -> tuple[bytes, tuple[int, int] | None]:
    """Jump over an over-long line without keeping it; return nothing and its extent."""
    position = offset + consumed
    while position < size:
        block = reader.read(CHUNK_BYTES)
        if not block:
            break
        newline = block.find(b"\n")
        if newline >= 0:
            length = position + newline + 1 - offset
            return b"", (offset, length)
        position += len(block)
    return b"", None


def _read_whole(path: Path, cursor: Cursor, st: os.stat_result, restarted: bool) -> Region | None:
    same = (
        not restarted
        and cursor.offset > 0
        and cursor.size == st.st_size
        and cursor.inode == st.st_ino
    )
    if same and tail_hash(path, st.st_size) == cursor.last_line_hash:
        return None
    data = path.read_bytes()
    return Region(
        data,
        0,
        len(data),
        len(data),
        st.st_dev,
        st.st_ino,
        False,  # every read of a whole-file transcript starts from 0 anyway
        at_eof=True,
    )
