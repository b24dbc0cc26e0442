"""Bundles built by hand for the hostile-input tests: a manifest that checks out (right product,
format, schema version and every member's sha256) around members of the test's choosing."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

from agents_memory.ops import bundle_format as fmt
from agents_memory.store import migrate


def manifest_for(members: dict[str, bytes], **extra: Any) -> bytes:
    """A manifest naming every member with its sha256 (``extra`` overrides its fields)."""
    data: dict[str, Any] = {
        "product": fmt.PRODUCT,
        "format": fmt.FORMAT,
        "schema_version": migrate.latest_version(),
        "counts": {},
        "vectors": False,
        "sha256": {name: hashlib.sha256(body).hexdigest() for name, body in members.items()},
    }
    data.update(extra)
    return json.dumps(data).encode()


def write_bundle(
    path: Path,
    members: dict[str, bytes],
    *,
    manifest: bytes | None = None,
    level: int = 6,
) -> Path:
    """A zip at ``path``: every data member (empty unless ``members`` gives it), then the
    manifest (made for them unless given)."""
    full = {fmt.member(t): b"" for t in fmt.TABLES}
    full.update(members)
    body = manifest if manifest is not None else manifest_for(full)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
        for name, data in full.items():
            archive.writestr(name, data)
        archive.writestr(fmt.MANIFEST, body)
    return path
