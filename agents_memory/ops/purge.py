"""``memory-capture uninstall --purge``: what is left of the product on this machine after an
uninstall — the data (the embedded cluster, wherever it lives), the state (pid files, logs,
the install manifest) and our own settings file — measured, then deleted.

The commands themselves stay: they belong to pipx or uv, which remove them
(:data:`REMOVE_TOOL`). A shared database (``DATABASE_URL``) is never dropped from here: other
machines may write to it.
"""

from __future__ import annotations

import contextlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from agents_memory.config import Settings, default_env_file
from agents_memory.install.fileio import BACKUP_TAG
from agents_memory.paths import user_config_dir, user_state_dir
from agents_memory.store import database

REMOVE_TOOL = (
    "the commands themselves stay: remove them with `pipx uninstall mcp-agents-memory` "
    "(or `uv tool uninstall mcp-agents-memory`)"
)


@dataclass(frozen=True, slots=True)
class Target:
    path: Path
    what: str
    size: int


def targets(settings: Settings) -> list[Target]:
    """What ``--purge`` deletes, the existing ones with their size in bytes."""
    found: list[tuple[Path, str]] = []
    if database.external_conninfo(settings) is None:
        # The cluster only (in the data dir, or placed elsewhere as root): MEMORY_DATA_DIR
        # may name a folder that holds more than ours.
        found.append((database.embedded_server(settings).pgdata, "your memories (the database)"))
    found.append((user_state_dir(), "pid files, logs, the install record"))
    if default_env_file().parent == user_config_dir():  # not a file named by MEMORY_CONFIG_PATH
        found.append((user_config_dir(), "your settings for mcp-agents-memory"))
    return [Target(p, what, _size(p)) for p, what in found if p.exists()]


def _size(path: Path) -> int:
    return database.data_dir_size(path) if path.is_dir() else path.stat().st_size


def stop_database(settings: Settings) -> str | None:
    """Stop the embedded server before its files go; a line for the user, ``None`` when it is
    external (nothing of it is ours to stop)."""
    if database.external_conninfo(settings) is not None:
        return None
    stopped = database.embedded_server(settings).stop()
    return "stopped the embedded database" if stopped else None


def remove(found: list[Target], settings: Settings) -> list[str]:
    """Delete each target (a cluster with its lock and socket records beside it), then the
    data dir when nothing else is left in it; a line for each."""
    lines = []
    for target in found:
        if target.path.is_dir():
            shutil.rmtree(target.path)
        else:
            target.path.unlink(missing_ok=True)
        for record in target.path.parent.glob(f".{target.path.name}.*"):
            record.unlink(missing_ok=True)  # a placed cluster's lock and socket-dir records
        lines.append(f"deleted {target.path}: {target.what}")
    with contextlib.suppress(OSError):  # absent, or it holds something not ours: it stays
        settings.data_dir.rmdir()
    return lines


def external_note(settings: Settings) -> str | None:
    """What ``--purge`` leaves on a shared server, said once."""
    url = database.external_conninfo(settings)
    if url is None:
        return None
    where = database.Database(url, None).description
    return f"the memories on {where} stay: that database is shared (drop it there if you mean to)"


def backups_left(paths: list[Path]) -> list[Path]:
    """The backups install and uninstall made beside ``paths`` (copies of your own files as
    they were; ``--purge`` keeps them)."""
    found: set[Path] = set()
    for path in paths:
        if path.parent.is_dir():
            found.update(path.parent.glob(f"{path.name}{BACKUP_TAG}*"))
    return sorted(found)
