"""Deterministic project hints: the git root and remote of a working directory.

Read straight from the ``.git`` files (no ``git`` process on the hot path). A linked worktree
resolves to its main repository, so all worktrees of one project share a root. Credentials
embedded in a remote URL are removed before the URL is returned.
"""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True, slots=True)
class GitInfo:
    root: str | None
    remote: str | None


NO_GIT = GitInfo(None, None)
_CREDENTIALS = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@]*@", re.IGNORECASE)


def strip_credentials(url: str) -> str:
    """``https://user:token@host/x`` -> ``https://host/x``; scp-style ``git@host:x`` stays."""
    return _CREDENTIALS.sub(r"\g<scheme>", url.strip())


@lru_cache(maxsize=4096)
def git_info(cwd: str | None) -> GitInfo:
    """The repository that contains ``cwd``; :data:`NO_GIT` when none exists locally."""
    if not cwd:
        return NO_GIT
    try:
        start = Path(cwd)
        if not start.is_absolute() or not start.is_dir():
            return NO_GIT
        for directory in (start, *start.parents):
            dot_git = directory / ".git"
            if dot_git.is_dir():
                return GitInfo(str(directory), _origin(dot_git))
            if dot_git.is_file():
                return _from_worktree_file(directory, dot_git)
    except OSError:
        return NO_GIT
    return NO_GIT


def _from_worktree_file(directory: Path, dot_git: Path) -> GitInfo:
    """A ``.git`` file (linked worktree or submodule): ``gitdir: <path>``."""
    text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    if not text.startswith("gitdir:"):
        return GitInfo(str(directory), None)
    gitdir = Path(text.partition(":")[2].strip())
    if not gitdir.is_absolute():
        gitdir = (directory / gitdir).resolve()
    common = gitdir
    commondir = gitdir / "commondir"
    if commondir.is_file():
        common = (gitdir / commondir.read_text(encoding="utf-8").strip()).resolve()
    if common.name == ".git":
        return GitInfo(str(common.parent), _origin(common))
    return GitInfo(str(directory), _origin(common))


def _origin(git_dir: Path) -> str | None:
    config_path = git_dir / "config"
    if not config_path.is_file():
        return None
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read(config_path, encoding="utf-8")
    except configparser.Error:
        return None
    remotes = [s for s in parser.sections() if s.startswith('remote "')]
    if not remotes:
        return None
    preferred = 'remote "origin"' if 'remote "origin"' in remotes else remotes[0]
    url = parser.get(preferred, "url", fallback=None)
    return strip_credentials(url) if url else None
