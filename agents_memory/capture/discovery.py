"""Finding transcript files: which adapter owns a path, and every transcript under the roots."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

from agents_memory.adapters.base import Adapter


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

    def transcripts(self, since: datetime | None = None) -> Iterator[tuple[Path, Adapter]]:
        """Every transcript file that exists now (modified at or after ``since``, if given)."""
        seen: set[Path] = set()
        threshold = since.timestamp() if since is not None else None
        for root, adapter in self.roots():
            if not root.is_dir():
                continue
            for directory, _dirs, files in os.walk(root, followlinks=False):
                for name in files:
                    path = Path(directory) / name
                    if path in seen or not adapter.owns(path, self.home):
                        continue
                    if threshold is not None and _mtime(path) < threshold:
                        continue
                    seen.add(path)
                    yield path, adapter


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
