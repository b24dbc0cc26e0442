"""The per-project switches a repository commits: files in ``.agents-memory/`` at its root (or
in any directory between a session's working directory and that root), so everyone who checks
the project out gets them. Cheap to ask (a few ``stat`` calls, no ``git`` process), so it is
asked on every captured turn and every prompt.

Two switches:

* :data:`NO_MEMORY` (``.agents-memory/no-memory``), the whole opt-out, one rule for everyone
  (:func:`memory_off`): nothing of the project is stored (admission refuses its captured turns
  and actions, and what an agent saves from there, as ``opted-out``), a session started there
  gets no brief and its prompts no memories. Rows stored before the marker came **stay**
  (memory is never deleted behind the owner's back): ``mcp-agents-memory forget --project
  ROOT`` removes them. ``mcp-agents-memory memory off|on|status`` writes, removes and shows it.
* :data:`NO_PROMPT_RECALL` (``.agents-memory/no-prompt-recall``): per-prompt recall only
  (:mod:`agents_memory.recall.prompt_switch`, ``mcp-agents-memory recall off|on|status``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SWITCH_DIR = ".agents-memory"
"""The per-project switches' directory, committed in the repository."""
NO_MEMORY = "no-memory"
NO_PROMPT_RECALL = "no-prompt-recall"
NO_MEMORY_TEXT = (
    "mcp-agents-memory stores nothing of this repository: no captured turns, no brief, no\n"
    "per-prompt recall. Delete this file (or run `mcp-agents-memory memory on`) to turn it\n"
    "back on.\n"
)
MAX_DEPTH = 64
"""Directories walked up from a working directory at most (a bound on a hostile path)."""


def project_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding a ``.git`` (a repository's or a
    worktree's root), or ``None`` outside any repository."""
    for depth, directory in enumerate((start, *start.parents)):
        if depth >= MAX_DEPTH:
            return None
        if (directory / ".git").exists():
            return directory
    return None


def find_switch(cwd: str | Path, name: str) -> Path | None:
    """The switch file ``name`` that applies to ``cwd``: in ``cwd`` or a directory above it,
    up to the repository's root (outside a repository: ``cwd`` itself only)."""
    try:
        start = Path(cwd)
        if not start.is_absolute():
            return None
        root = project_root(start)
        for directory in (start, *start.parents)[:MAX_DEPTH]:
            marker = directory / SWITCH_DIR / name
            if marker.is_file():
                return marker
            if root is None or directory == root:
                return None
    except (OSError, ValueError):
        return None
    return None


def memory_off(cwd: object) -> Path | None:
    """The one rule of the opt-out: the :data:`NO_MEMORY` marker that turns memory off for a
    session or a turn in ``cwd`` (``None``: memory is on there, or ``cwd`` is no path)."""
    if not isinstance(cwd, str | Path) or not str(cwd):
        return None
    return find_switch(cwd, NO_MEMORY)


@dataclass(frozen=True, slots=True)
class SwitchChange:
    """What :func:`set_switch` did: the marker's path, whether the switch is now on (no
    marker), and whether anything changed."""

    marker: Path
    on: bool
    changed: bool


def switch_path(directory: Path, name: str) -> Path:
    """Where the switch ``name`` for ``directory``'s project lives: at its repository's root,
    or in ``directory`` itself outside a repository."""
    start = directory.resolve()
    return (project_root(start) or start) / SWITCH_DIR / name


def set_switch(directory: Path, name: str, text: str, *, on: bool) -> SwitchChange:
    """Turn ``name``'s feature on (remove every marker between ``directory`` and its root) or
    off (write the marker, holding ``text``, at the root) for ``directory``'s project.
    Raises :class:`OSError`."""
    marker = switch_path(directory, name)
    if not on:
        if marker.is_file():
            return SwitchChange(marker, on=False, changed=False)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(text, encoding="utf-8")
        return SwitchChange(marker, on=False, changed=True)
    changed = False
    while (found := find_switch(directory.resolve(), name)) is not None:
        found.unlink()
        changed = True
        marker = found
    return SwitchChange(marker, on=True, changed=changed)
