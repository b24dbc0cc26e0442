"""The README tells the truth: every command, option and setting is in it, and ``systemd/`` holds
the units ``memory-capture install`` writes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from agents_memory.adapters.base import Commands
from agents_memory.cli.capture import cli as capture_cli
from agents_memory.cli.common import ScriptGroup
from agents_memory.cli.memory import cli as memory_cli
from agents_memory.config import Settings
from agents_memory.install import services

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
SCRIPTS: dict[str, click.Group] = {"mcp-agents-memory": memory_cli, "memory-capture": capture_cli}
# Options every command shares, documented once under the Commands table.
SHARED_OPTIONS = ("--help", "--debug")


def _commands() -> Iterator[tuple[str, click.Command]]:
    """Every command and subcommand of both console scripts, by its full command line."""

    def walk(path: str, command: click.Command) -> Iterator[tuple[str, click.Command]]:
        yield path, command
        if isinstance(command, click.Group):
            subs = command.all_commands() if isinstance(command, ScriptGroup) else command.commands
            for name, sub in sorted(subs.items()):
                if not sub.hidden:
                    yield from walk(f"{path} {name}", sub)

    for script, group in SCRIPTS.items():
        yield from walk(script, group)


def _long_flags(command: click.Command) -> list[str]:
    """The flags ``--help`` shows (an older spelling kept for a release is not shown)."""
    return [
        flag
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden
        for flag in (*param.opts, *param.secondary_opts)
        if flag.startswith("--")
        and flag not in SHARED_OPTIONS
        and flag not in getattr(param, "old_spellings", ())
    ]


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.M | re.S)
    assert match, f"README has no '## {title}' section"
    return match.group(1)


def _rows_naming(path: str) -> list[str]:
    """README lines that name the command line ``path`` in code (`` `path`` then a break)."""
    pattern = re.compile(rf"`{re.escape(path)}(?=[\s`\[])")
    return [line for line in README.splitlines() if pattern.search(line)]


def _mentions_flag(text: str, flag: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is not None


COMMANDS = list(_commands())


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[path for path, _ in COMMANDS])
def test_every_command_and_its_options_are_in_the_readme(path: str, command: click.Command) -> None:
    rows = _rows_naming(path)
    assert rows, f"README names no `{path}`: add it to the Commands table"
    is_script = " " not in path
    text = README if is_script else "\n".join(rows)
    missing = [flag for flag in _long_flags(command) if not _mentions_flag(text, flag)]
    assert not missing, f"README's rows for `{path}` do not mention {missing}"


def test_the_options_every_command_shares_are_in_the_readme() -> None:
    assert all(_mentions_flag(README, flag) for flag in SHARED_OPTIONS)


def _env_names() -> list[str]:
    names = []
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias if isinstance(field.validation_alias, str) else field.alias
        names.append((alias or name).upper())
    return names


@pytest.mark.parametrize("variable", _env_names())
def test_every_setting_is_in_the_readmes_configuration_table(variable: str) -> None:
    table = "\n".join(
        line for line in _section("Configuration").splitlines() if line.startswith("|")
    )
    assert re.search(rf"(?<![A-Z0-9_]){variable}(?![A-Z0-9_])", table), (
        f"{variable} is missing from README's Configuration table"
    )


def test_the_systemd_folder_holds_exactly_the_unit_templates_install_renders() -> None:
    shipped = sorted(p.name for p in (REPO / "systemd").iterdir())
    assert shipped == sorted([services.CAPTURE_UNIT, services.COLDPATH_UNIT])
    for name in shipped:
        assert (REPO / "systemd" / name).read_text(encoding="utf-8") == services.template(name)


def test_install_fills_every_placeholder_of_the_shipped_units(tmp_path: Path) -> None:
    bin_dir = tmp_path / "venv" / "bin"
    commands = Commands(
        memory_capture=bin_dir / "memory-capture", mcp_server=bin_dir / "mcp-agents-memory"
    )
    plan = services.unit_plan(tmp_path, commands, cold_path=True)
    written = {edit.path.name: edit for edit in plan.edits}
    assert sorted(written) == sorted(p.name for p in (REPO / "systemd").iterdir())
    for name in written:
        text = services.render_unit(name, commands)
        assert "${" not in text
        exec_start = next(line for line in text.splitlines() if line.startswith("ExecStart="))
        assert exec_start.startswith(f"ExecStart={bin_dir}/")


def test_the_readme_points_at_architecture_md() -> None:
    assert "ARCHITECTURE.md" in README
    assert (REPO / "ARCHITECTURE.md").is_file()


def test_architecture_md_states_the_layering_that_import_linter_checks() -> None:
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["type"] == "layers"]
    checked = " > ".join(contract["layers"])
    architecture = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```text\n(.*?)```", architecture, re.S)
    stated = [" ".join(b.split()) for b in blocks if b.startswith(contract["layers"][0] + " ")]
    assert stated == [checked]


def test_architecture_md_states_the_forbidden_imports_that_import_linter_checks() -> None:
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    architecture = " ".join((REPO / "ARCHITECTURE.md").read_text(encoding="utf-8").split())
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "forbidden":
            assert contract["name"] in architecture


def test_every_path_the_where_to_add_recipes_name_exists() -> None:
    """The recipes name real files: a move that leaves a recipe behind fails here."""
    architecture = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    recipes = architecture.split("## Where to add", 1)[1]
    named = set(re.findall(r"`((?:agents_memory/|tests/)?[\w./]+\.(?:py|html|md))`", recipes))
    package = REPO / "agents_memory"
    missing = [
        path
        for path in sorted(named)
        if "<" not in path and not (REPO / path).exists() and not (package / path).exists()
    ]
    assert named and missing == []
