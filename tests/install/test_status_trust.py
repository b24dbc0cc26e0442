"""`status` flags Codex hooks that Codex has not trusted (Codex skips them without a word)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agents_memory.install.installer import Installer, installed_entries
from agents_memory.ops.status import untrusted_hooks
from tests.install.conftest import fake_codex, seed_home
from tests.install.test_codex_trust import finds


def test_untrusted_codex_hooks_are_a_problem_and_trusted_ones_are_not(
    home: Path, tmp_path: Path, make_installer: Callable[..., Installer]
) -> None:
    seed_home(home)
    make_installer().run("install", ("codex-cli",))  # no codex on PATH: no trust
    problems = untrusted_hooks(installed_entries(home))
    assert len(problems) == 1 and "has not trusted our hooks" in problems[0]

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    codex = fake_codex(bin_dir)
    make_installer(which=finds(codex)).run("install", ("codex-cli",))
    assert untrusted_hooks(installed_entries(home)) == []


def test_no_codex_hooks_no_problem(home: Path) -> None:
    assert untrusted_hooks(installed_entries(home)) == []
