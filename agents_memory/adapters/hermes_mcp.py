"""Registering our MCP server with Hermes Agent through Hermes's own command.

Hermes keeps its MCP servers in ``~/.hermes/config.yaml``; rather than edit YAML, install runs
``hermes mcp add mcp-agents-memory --command <mcp-agents-memory>`` and uninstall
``hermes mcp remove mcp-agents-memory`` (Hermes 0.19.0) when ``hermes`` is on PATH. Both
commands ask questions (``Enable all 7 tools? [Y/n/select]``, ``Save config anyway? [y/N]``
when the server does not answer, ``Remove server '…'? [Y/n]``) and cancel on end of input, so
each runs with empty lines for input: every question takes its default. The outcome is read
back from ``config.yaml``; a failure is reported with the command to run by hand. Without
``hermes`` on PATH the command is the note.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

from agents_memory.adapters.base import MCP_SERVER_NAME, InstallContext

TIMEOUT_SEC = 60.0
REMOVAL = f"hermes mcp remove {MCP_SERVER_NAME}"
DEFAULT_ANSWERS = "\n" * 8
"""What the commands read: an empty line per question, i.e. its default (not end of input,
which cancels)."""


def config_yaml(home: Path) -> Path:
    return home / ".hermes" / "config.yaml"


def add_command(hermes: str, mcp_server: Path) -> list[str]:
    return [hermes, "mcp", "add", MCP_SERVER_NAME, "--command", str(mcp_server)]


def remove_command(hermes: str) -> list[str]:
    return [hermes, "mcp", "remove", MCP_SERVER_NAME]


def is_registered(config_text: str | None) -> bool:
    """Whether ``config.yaml`` names our server under ``mcp_servers``."""
    return ("mcp_servers", MCP_SERVER_NAME) in yaml_paths(config_text)


def yaml_paths(config_text: str | None) -> set[tuple[str, ...]]:
    """The key paths of a block-layout YAML mapping (as Hermes's ``save_config`` writes it),
    each list item a last step (``("plugins", "enabled", "x")``, also for a flow list
    ``[x, y]``). Enough to see our entries; not a YAML reader."""
    found: set[tuple[str, ...]] = set()
    for section, item in _yaml_walk(config_text):
        found.add(section if item is None else (*section, item))
    return found


def yaml_list(config_text: str | None, path: tuple[str, ...]) -> list[str]:
    """The items of the list at ``path``, in order (Hermes's ``config unset`` takes an item
    by its index: ``plugins.enabled.0``)."""
    return [item for section, item in _yaml_walk(config_text) if section == path and item]


def _yaml_walk(config_text: str | None) -> Iterator[tuple[tuple[str, ...], str | None]]:
    """Each key's path (``None`` item) and each list item under its key's path, in order."""
    section: list[str] = []
    for line in (config_text or "").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- "):
            yield tuple(section), stripped[2:].strip("'\" ")
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        key, _, value = stripped.partition(":")
        section = [*section[:depth], key.strip().strip("'\"")]
        yield tuple(section), None
        if value.strip().startswith("["):
            items = value.strip().strip("[]").split(",")
            for v in items:
                if v.strip():
                    yield tuple(section), v.strip().strip("'\"")


def register(ctx: InstallContext) -> list[str]:
    """Run ``hermes mcp add`` for our server (install's post-install step); notes for the user."""
    if ctx.commands is None:
        return []
    hermes = ctx.which("hermes")
    shown = shlex.join(add_command("hermes", ctx.commands.mcp_server))
    if is_registered(ctx.read_text(config_yaml(ctx.home))):
        return [f"Hermes already has the MCP server {MCP_SERVER_NAME}"]
    if hermes is None:
        return [f"hermes is not on PATH: register the MCP server with `{shown}`"]
    if ctx.dry_run:
        return [f"would run `{shown}`"]
    outcome = run_hermes(add_command(hermes, ctx.commands.mcp_server))
    if is_registered(ctx.read_text(config_yaml(ctx.home))):
        return [f"registered the MCP server with `{shown}`"]
    return [f"Hermes did not register the MCP server ({outcome}); run `{shown}`"]


def unregister(ctx: InstallContext) -> list[str]:
    """Run ``hermes mcp remove`` for our server (uninstall's step) when ``config.yaml`` has it."""
    if not is_registered(ctx.read_text(config_yaml(ctx.home))):
        return []
    hermes = ctx.which("hermes")
    if hermes is None:
        return [f"hermes is not on PATH: remove the MCP server with `{REMOVAL}`"]
    if ctx.dry_run:
        return [f"would run `{REMOVAL}`"]
    outcome = run_hermes(remove_command(hermes))
    if not is_registered(ctx.read_text(config_yaml(ctx.home))):
        return [f"removed the MCP server with `{REMOVAL}`"]
    return [f"Hermes did not remove the MCP server ({outcome}); run `{REMOVAL}`"]


def run_hermes(argv: list[str]) -> str:
    """``argv`` answering every question with its default; what happened, for a note (the
    caller judges success by ``config.yaml``)."""
    try:
        proc = subprocess.run(
            argv,
            input=DEFAULT_ANSWERS,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SEC,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"it did not finish: {exc}"
    said = [line.strip() for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    return f"exit {proc.returncode}: {said[0]}" if said else f"exit {proc.returncode}"
