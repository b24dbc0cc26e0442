"""Bundles with one member changed and their checksums made right again, so the import gets
past its checks and meets the change itself (a bad line, a missing key, a deep nesting)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable

from agents_memory.ops import bundle_format as fmt

DEEP = b"[" * 50_000 + b"]" * 50_000
"""A JSON line nested 50,000 deep."""


def with_member(bundle: bytes, member: str, change: Callable[[bytes], bytes]) -> bytes:
    """``bundle`` with ``change`` applied to ``member`` and the manifest's sha256 updated."""
    with zipfile.ZipFile(io.BytesIO(bundle)) as old:
        members = {name: old.read(name) for name in old.namelist()}
    members[member] = change(members[member])
    manifest = json.loads(members[fmt.MANIFEST])
    manifest["sha256"][member] = hashlib.sha256(members[member]).hexdigest()
    members[fmt.MANIFEST] = json.dumps(manifest).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as new:
        for name, data in members.items():
            new.writestr(name, data)
    return out.getvalue()


def second_line(replacement: bytes) -> Callable[[bytes], bytes]:
    """A change that puts ``replacement`` in place of the member's second line."""

    def change(data: bytes) -> bytes:
        lines = data.splitlines(keepends=True)
        assert len(lines) >= 2, "the member needs two lines"
        lines[1] = replacement + b"\n"
        return b"".join(lines)

    return change


def without_key(key: str) -> Callable[[bytes], bytes]:
    """A change that drops ``key`` from the member's second line."""

    def change(data: bytes) -> bytes:
        lines = data.splitlines(keepends=True)
        row = json.loads(lines[1])
        del row[key]
        lines[1] = fmt.dump_line(row)
        return b"".join(lines)

    return change
