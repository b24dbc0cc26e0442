"""Reading a bundle's zip with bounded memory: every member streamed in chunks, with caps on its
size, on one line's length, on its compression ratio and on the manifest's size. A member past
a cap, a damaged archive or a member zip cannot read is refused in one line naming the member
and what is wrong (:class:`~agents_memory.errors.BundleError`); nothing is read whole.

A 205 KB zip of 200 MB of zeros used to take 473 MB of memory (its one line was read whole);
now it is refused by its ratio after a few MiB, holding at most one chunk and one line.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from agents_memory.errors import BundleError

MiB: Final = 1024 * 1024
CHUNK: Final = MiB
_UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError)
"""What :mod:`zipfile` raises for a damaged, truncated, encrypted or exotic archive."""


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """The caps a bundle is read within. The defaults take any bundle ``export`` writes of a
    pool whose every row (a turn's text with its raw record) is under 64 MiB as JSON; a pool
    holding a bigger turn exports it, and its import refuses that line by name."""

    manifest_bytes: int = MiB
    """``manifest.json`` (a real one is a few KiB)."""
    line_bytes: int = 64 * MiB
    """One line of a ``.jsonl`` member: one row (a turn's text and its raw record)."""
    member_bytes: int = 64 * 1024 * MiB
    """One member, uncompressed."""
    ratio: int = 100
    """Uncompressed bytes per compressed byte of one member (JSON lines compress 3-20 times;
    a run of zeros about 1,000 times)."""
    ratio_after: int = 4 * MiB
    """The ratio is judged once a member has given this many bytes (a small member may
    compress any amount)."""


LIMITS: Final = ReadLimits()


def _size(count: int) -> str:
    return f"{count // MiB} MiB" if count >= MiB else f"{count:,} bytes"


@contextmanager
def open_archive(path: Path) -> Iterator[zipfile.ZipFile]:
    """The bundle's zip; a file that is not one, or whose directory is damaged, is one line."""
    if not zipfile.is_zipfile(path):
        raise BundleError(f"{path} is not an export bundle (not a zip file)")
    try:
        archive = zipfile.ZipFile(path)
    except _UNREADABLE as exc:
        raise BundleError(f"{path} is a damaged zip file ({exc})") from None
    with archive:
        yield archive


def _info(archive: zipfile.ZipFile, name: str) -> zipfile.ZipInfo:
    try:
        return archive.getinfo(name)
    except KeyError:
        raise BundleError(f"bundle member {name} is missing; the bundle is incomplete") from None


def member_chunks(
    archive: zipfile.ZipFile, name: str, limits: ReadLimits = LIMITS
) -> Iterator[bytes]:
    """``name``'s bytes in chunks of at most :data:`CHUNK`, refused (one line) past the
    member's size or ratio cap, or when zip cannot read them."""
    info = _info(archive, name)
    packed = max(info.compress_size, 1)
    _check_size(name, info.file_size, packed, limits)
    done = 0
    try:
        with archive.open(info) as source:
            while chunk := source.read(CHUNK):
                done += len(chunk)
                _check_size(name, done, packed, limits)
                yield chunk
    except _UNREADABLE as exc:
        raise BundleError(
            f"bundle member {name} cannot be read ({exc}); the bundle is damaged"
        ) from None


def _check_size(name: str, size: int, packed: int, limits: ReadLimits) -> None:
    if size > limits.member_bytes:
        raise BundleError(
            f"bundle member {name} is larger than the cap of {_size(limits.member_bytes)}"
            " uncompressed; refused"
        )
    if size > limits.ratio_after and size > limits.ratio * packed:
        raise BundleError(
            f"bundle member {name} expands more than {limits.ratio} times its compressed size"
            f" ({_size(packed)} to over {_size(size)}): refused as a zip bomb"
        )


def member_lines(
    archive: zipfile.ZipFile, name: str, limits: ReadLimits = LIMITS
) -> Iterator[tuple[int, bytes]]:
    """``name``'s lines (numbered from 1, without their end), each refused in one line when
    it is longer than the line cap; at most one line and one chunk are held."""
    number = 0
    held: list[bytes] = []
    held_size = 0
    for chunk in member_chunks(archive, name, limits):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            number += 1
            piece = chunk[start:end]
            _check_line(name, number, held_size + len(piece), limits)
            yield number, b"".join([*held, piece]) if held else piece
            held, held_size, start = [], 0, end + 1
        rest = chunk[start:]
        if rest:
            _check_line(name, number + 1, held_size + len(rest), limits)
            held.append(rest)
            held_size += len(rest)
    if held:
        yield number + 1, b"".join(held)


def _check_line(name: str, number: int, size: int, limits: ReadLimits) -> None:
    if size > limits.line_bytes:
        raise BundleError(
            f"bundle member {name} line {number} is longer than the cap of"
            f" {_size(limits.line_bytes)}; refused"
        )


def read_manifest(archive: zipfile.ZipFile, name: str, limits: ReadLimits = LIMITS) -> bytes:
    """The manifest's bytes, refused in one line past :attr:`ReadLimits.manifest_bytes`."""
    capped = replace(limits, member_bytes=limits.manifest_bytes)
    return b"".join(member_chunks(archive, name, capped))
