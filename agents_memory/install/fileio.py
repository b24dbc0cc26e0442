"""The installer's disk side: read, back up, write atomically, and the install manifest.

* Writes go to a temporary file in the target's directory, are fsynced, and replace the target
  with ``os.replace`` (then the directory is fsynced); the file keeps its mode. A symlinked
  config (dotfile managers) is written through to the file it points at.
* A file is backed up at most once per run, before its first change, as
  ``<name>.bak-mcp-agents-memory-<timestamp>`` beside it; never a file install created (the
  manifest says so), whose first text was ours alone.
* The manifest (``install-manifest.json`` in the state directory) remembers, per file, what
  install created there, so uninstall removes exactly that.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from agents_memory.errors import ConfigFileError
from agents_memory.install.edits import Record

BACKUP_TAG = ".bak-mcp-agents-memory-"
MANIFEST_NAME = "install-manifest.json"


def real_path(path: Path) -> Path:
    """Where to read and write ``path``: the target of a symlink, else the path itself."""
    return path.resolve() if path.is_symlink() else path


def read_text(path: Path) -> str | None:
    """The file's text, ``None`` if it does not exist; unreadable files raise
    :class:`ConfigFileError` (one line naming the file)."""
    try:
        return real_path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"{path}: cannot read it ({exc})") from exc


def write_atomic(path: Path, text: str | None) -> None:
    """Replace ``path`` with ``text`` atomically (``None`` deletes it)."""
    target = real_path(path)
    if text is None:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@dataclass(slots=True)
class Backups:
    """Backs up each file once per run (``stamp`` names the run)."""

    stamp: str
    made: dict[Path, Path] = field(default_factory=dict)
    seen: set[Path] = field(default_factory=set)

    def before_change(self, path: Path) -> None:
        target = real_path(path)
        if target in self.seen:
            return
        self.seen.add(target)
        if target.exists():
            backup = target.with_name(f"{target.name}{BACKUP_TAG}{self.stamp}")
            serial = 0
            while backup.exists():  # two runs within one second
                serial += 1
                backup = target.with_name(f"{target.name}{BACKUP_TAG}{self.stamp}-{serial}")
            shutil.copy2(target, backup)
            self.made[path] = backup


class Manifest:
    """What install created, per file (absolute path), kept across runs."""

    def __init__(self, path: Path, records: dict[str, Record]) -> None:
        self.path = path
        self.records = records
        self._saved = self._serialize()

    @classmethod
    def load(cls, state_dir: Path) -> Manifest:
        path = state_dir / MANIFEST_NAME
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        files = data.get("files", {}) if isinstance(data, dict) else {}
        records = {str(k): Record.from_json(v) for k, v in files.items()}
        return cls(path, records)

    def get(self, path: Path) -> Record:
        return self.records.get(str(path), Record())

    def add(self, path: Path, record: Record) -> None:
        self.records.setdefault(str(path), Record()).merge(record)

    def forget(self, path: Path) -> None:
        self.records.pop(str(path), None)

    def _serialize(self) -> str:
        files = {k: v.as_json() for k, v in sorted(self.records.items())}
        return json.dumps({"version": 1, "files": files}, indent=2) + "\n"

    def save(self) -> None:
        """Write the manifest if it changed since it was loaded."""
        text = self._serialize()
        if text != self._saved:
            write_atomic(self.path, text)
            self._saved = text
