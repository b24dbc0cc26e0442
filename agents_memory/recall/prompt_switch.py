"""The owner's switches for per-prompt recall, checked before any search.

Two of them, both cheap (a setting and a few ``stat`` calls):

* ``PROMPT_RECALL=off`` (:attr:`Settings.prompt_recall`) turns it off everywhere;
* a marker file committed in a repository, :data:`MARKER` (``.agents-memory/no-prompt-recall``)
  at the repository's root or in any directory between the prompt's ``cwd`` and that root,
  turns it off for that project (for everyone who checks the repository out).

The ``.agents-memory/`` directory is the project's place for such switches: one file per
switch (a later ``no-capture`` sits beside this one). ``mcp-agents-memory recall off|on``
writes and removes the marker (:func:`set_project_switch`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agents_memory.config import Settings

SWITCH_DIR = ".agents-memory"
"""The per-project switches' directory, committed in the repository."""
NO_PROMPT_RECALL = "no-prompt-recall"
MARKER = f"{SWITCH_DIR}/{NO_PROMPT_RECALL}"
MARKER_TEXT = (
    "Per-prompt recall of mcp-agents-memory is off for this repository.\n"
    "Delete this file (or run `mcp-agents-memory recall on`) to turn it back on.\n"
)
MAX_DEPTH = 64
"""Directories walked up from the prompt's ``cwd`` at most (a bound on a hostile path)."""

OffReason = Literal["setting", "project"]


def project_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding a ``.git`` (a repository's or a
    worktree's root), or ``None`` outside any repository."""
    for depth, directory in enumerate((start, *start.parents)):
        if depth >= MAX_DEPTH:
            return None
        if (directory / ".git").exists():
            return directory
    return None


def find_marker(cwd: str | Path) -> Path | None:
    """The :data:`MARKER` that applies to ``cwd``: in ``cwd`` or a directory above it, up to
    the repository's root (outside a repository: ``cwd`` itself only)."""
    try:
        start = Path(cwd)
        if not start.is_absolute():
            return None
        root = project_root(start)
        for directory in (start, *start.parents)[:MAX_DEPTH]:
            marker = directory / MARKER
            if marker.is_file():
                return marker
            if root is None or directory == root:
                return None
    except (OSError, ValueError):
        return None
    return None


def off_reason(settings: Settings, cwd: object) -> OffReason | None:
    """Why per-prompt recall is off for a prompt in ``cwd`` (``None``: it is on)."""
    if not settings.prompt_recall:
        return "setting"
    if isinstance(cwd, str) and cwd and find_marker(cwd) is not None:
        return "project"
    return None


@dataclass(frozen=True, slots=True)
class SwitchChange:
    """What :func:`set_project_switch` did: the marker's path, whether recall is now on there,
    and whether anything changed."""

    marker: Path
    on: bool
    changed: bool


def marker_path(directory: Path) -> Path:
    """Where the marker for ``directory``'s project lives: at its repository's root, or in
    ``directory`` itself outside a repository."""
    start = directory.resolve()
    return (project_root(start) or start) / MARKER


def set_project_switch(directory: Path, *, on: bool) -> SwitchChange:
    """Turn per-prompt recall on (remove every marker between ``directory`` and its root) or
    off (write the marker at the root) for ``directory``'s project. Raises :class:`OSError`."""
    marker = marker_path(directory)
    if not on:
        if marker.is_file():
            return SwitchChange(marker, on=False, changed=False)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(MARKER_TEXT, encoding="utf-8")
        return SwitchChange(marker, on=False, changed=True)
    changed = False
    while (found := find_marker(directory.resolve())) is not None:
        found.unlink()
        changed = True
        marker = found
    return SwitchChange(marker, on=True, changed=changed)
