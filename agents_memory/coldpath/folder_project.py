"""The project a working directory names when it is not a git repository on this machine
(history from another machine, a deleted checkout): its last folder's name.

The one rule (the tagger applies it after git identity, before asking a model): a turn with no
git identity but a working directory is filed under the project of that folder's name. When a
project of that name exists (or an alias), the name is unambiguous, because names are unique:
the turn joins it. When none exists, the project is created confirmed, as a repository's is.
A name a person rejected stays untagged; a generic folder (a home directory, ``src``, ``tmp``)
names nothing, and those turns wait on the Projects page to be filed by hand.

Pure (no SQL, no filesystem)."""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath

from agents_memory.coldpath.text import slugify

GENERIC = frozenset(
    {
        "code", "desktop", "dev", "documents", "downloads", "git", "github", "home", "proj",
        "project", "projects",
        "repo", "repos", "repositories", "root", "src", "source", "tmp", "temp", "users", "work",
        "workspace", "workspaces", "sandbox", "scratch",
    }
)  # fmt: skip
"""Folder names that say where code lives, not which project it is."""
_HOMES = frozenset({"home", "Users", "users"})


def folder_project(cwd: str | None) -> str | None:
    """The project name ``cwd`` gives (a slug), or ``None`` when it names none."""
    if not cwd or not cwd.strip():
        return None
    text = cwd.strip()
    path = PureWindowsPath(text) if "\\" in text else PurePosixPath(text)
    if not path.is_absolute():
        return None  # a trimmed or placeholder value, not a folder
    parts = [p for p in path.parts if p not in ("/", "\\", path.anchor)]
    if not parts or (parts[0] in _HOMES and len(parts) <= 2):
        return None  # the filesystem root, /home, or a home directory itself
    name = slugify(parts[-1])
    if not name or name in GENERIC or name.startswith("."):
        return None
    return name
