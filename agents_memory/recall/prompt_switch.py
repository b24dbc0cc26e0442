"""The owner's switches for per-prompt recall, checked before any search.

Three of them, all cheap (a setting and a few ``stat`` calls):

* ``PROMPT_RECALL=off`` (:attr:`Settings.prompt_recall`) turns it off everywhere;
* a marker file committed in a repository, :data:`MARKER` (``.agents-memory/no-prompt-recall``)
  at the repository's root or in any directory between the prompt's ``cwd`` and that root,
  turns it off for that project (for everyone who checks the repository out);
* the project's whole opt-out, ``.agents-memory/no-memory``
  (:func:`agents_memory.admission.project_switch.memory_off`), turns it off with the rest of
  memory.

The markers' rules live in :mod:`agents_memory.admission.project_switch` (capture honours the
opt-out too). ``mcp-agents-memory recall off|on`` writes and removes this one's marker
(:func:`set_project_switch`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from agents_memory.admission.project_switch import (
    NO_PROMPT_RECALL,
    SWITCH_DIR,
    SwitchChange,
    find_switch,
    memory_off,
    project_root,
    set_switch,
    switch_path,
)
from agents_memory.config import Settings

__all__ = [
    "MARKER",
    "SwitchChange",
    "find_marker",
    "marker_path",
    "off_reason",
    "project_root",
    "set_project_switch",
]

MARKER = f"{SWITCH_DIR}/{NO_PROMPT_RECALL}"
MARKER_TEXT = (
    "Per-prompt recall of mcp-agents-memory is off for this repository.\n"
    "Delete this file (or run `mcp-agents-memory recall on`) to turn it back on.\n"
)

OffReason = Literal["setting", "project", "no-memory"]


def find_marker(cwd: str | Path) -> Path | None:
    """The :data:`MARKER` that applies to ``cwd``: in ``cwd`` or a directory above it, up to
    the repository's root (outside a repository: ``cwd`` itself only)."""
    return find_switch(cwd, NO_PROMPT_RECALL)


def off_reason(settings: Settings, cwd: object) -> OffReason | None:
    """Why per-prompt recall is off for a prompt in ``cwd`` (``None``: it is on)."""
    if not settings.prompt_recall:
        return "setting"
    if isinstance(cwd, str) and cwd:
        if memory_off(cwd) is not None:
            return "no-memory"
        if find_marker(cwd) is not None:
            return "project"
    return None


def marker_path(directory: Path) -> Path:
    """Where the marker for ``directory``'s project lives: at its repository's root, or in
    ``directory`` itself outside a repository."""
    return switch_path(directory, NO_PROMPT_RECALL)


def set_project_switch(directory: Path, *, on: bool) -> SwitchChange:
    """Turn per-prompt recall on (remove every marker between ``directory`` and its root) or
    off (write the marker at the root) for ``directory``'s project. Raises :class:`OSError`."""
    return set_switch(directory, NO_PROMPT_RECALL, MARKER_TEXT, on=on)
