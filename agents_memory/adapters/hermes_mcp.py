"""Registering our MCP server with Hermes Agent through Hermes's own command.

Hermes keeps its MCP servers in ``~/.hermes/config.yaml``; rather than edit YAML, install runs
``hermes mcp add mcp-agents-memory --command <mcp-agents-memory>`` (Hermes 0.19.0) when
``hermes`` is on PATH. The command asks questions when something is off (the ``mcp`` extra
missing, the server not answering); it runs with no input, so each question takes its default,
and the outcome is read back from ``config.yaml``: a name that is not there is reported with the
command to run by hand. Without ``hermes`` on PATH the command is the note. Uninstall leaves
the entry, and says how to remove it (``hermes mcp remove mcp-agents-memory``).
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from agents_memory.adapters.base import MCP_SERVER_NAME, InstallContext

TIMEOUT_SEC = 60.0
REMOVAL = f"hermes mcp remove {MCP_SERVER_NAME}"


def config_yaml(home: Path) -> Path:
    return home / ".hermes" / "config.yaml"


def add_command(hermes: str, mcp_server: Path) -> list[str]:
    return [hermes, "mcp", "add", MCP_SERVER_NAME, "--command", str(mcp_server)]


def is_registered(config_text: str | None) -> bool:
    """Whether ``config.yaml`` names our server (a key at the start of a line, any indent)."""
    return config_text is not None and any(
        line.strip() == f"{MCP_SERVER_NAME}:" for line in config_text.splitlines()
    )


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
    return _run(ctx, add_command(hermes, ctx.commands.mcp_server), shown)


def _run(ctx: InstallContext, argv: list[str], shown: str) -> list[str]:
    """``argv`` with no input (each question takes its default), judged by ``config.yaml``."""
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SEC,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [f"`{shown}` did not finish ({exc}); run it yourself"]
    if is_registered(ctx.read_text(config_yaml(ctx.home))):
        return [f"registered the MCP server with `{shown}`"]
    said = (proc.stdout + proc.stderr).strip().splitlines()
    why = f": {said[0].strip()}" if said else ""
    return [f"Hermes did not register the MCP server (exit {proc.returncode}{why}); run `{shown}`"]
