"""The owner's switches of per-prompt recall on real directories: the setting, the project's
marker between the prompt's directory and its repository's root (a worktree's ``.git`` file
counts), nothing above the root, and the CLI's writer of the marker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents_memory.recall.prompt_switch import (
    MARKER,
    find_marker,
    marker_path,
    off_reason,
    set_project_switch,
)


def _repo(root: Path, *, worktree: bool = False) -> Path:
    (root / "a" / "b").mkdir(parents=True)
    if worktree:
        (root / ".git").write_text("gitdir: /elsewhere/.git/worktrees/x\n", encoding="utf-8")
    else:
        (root / ".git").mkdir()
    return root


def _mark(directory: Path) -> Path:
    marker = directory / MARKER
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text("off\n", encoding="utf-8")
    return marker


def test_a_marker_anywhere_from_the_cwd_up_to_the_root_applies(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", worktree=True)
    deep = repo / "a" / "b"
    assert find_marker(deep) is None
    at_root = _mark(repo)
    assert find_marker(deep) == at_root
    in_between = _mark(repo / "a")
    assert find_marker(deep) == in_between
    assert find_marker(str(deep)) == in_between


def test_nothing_above_the_root_and_no_relative_or_odd_paths(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    _mark(tmp_path)  # the repository's parent: not the project's switch
    assert find_marker(repo / "a" / "b") is None
    assert find_marker("relative/dir") is None
    assert find_marker(tmp_path / "missing" / "dir") is None
    outside = tmp_path / "plain"
    outside.mkdir()
    assert find_marker(outside) is None
    marker = _mark(outside)
    assert find_marker(outside) == marker
    (outside / "sub").mkdir()
    assert find_marker(outside / "sub") is None  # no repository: its own directory only


def test_off_reason_names_the_switch(make_settings: Any, tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    on = make_settings()
    assert off_reason(on, str(repo / "a")) is None
    assert off_reason(make_settings(prompt_recall=False), str(repo / "a")) == "setting"
    _mark(repo)
    assert off_reason(on, str(repo / "a")) == "project"
    whole = repo / ".agents-memory" / "no-memory"
    whole.write_text("off\n", encoding="utf-8")
    assert off_reason(on, str(repo / "a")) == "no-memory"  # the project's whole opt-out
    assert off_reason(on, None) is None and off_reason(on, 42) is None


def test_the_cli_s_writer_puts_the_marker_at_the_root_and_takes_every_one_away(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path / "repo")
    deep = repo / "a" / "b"
    assert marker_path(deep) == repo / MARKER
    first = set_project_switch(deep, on=False)
    assert (first.marker, first.on, first.changed) == (repo / MARKER, False, True)
    assert set_project_switch(deep, on=False).changed is False
    _mark(repo / "a")
    done = set_project_switch(deep, on=True)
    assert done.on and done.changed
    assert find_marker(deep) is None and not (repo / MARKER).exists()
    assert set_project_switch(deep, on=True).changed is False
