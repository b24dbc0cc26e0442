"""Hermes Agent's per-prompt recall: a user plugin whose ``pre_llm_call`` hook runs our
per-prompt hook command and hands Hermes what it prints.

Seen in Hermes 0.19.0 (``hermes_cli/plugins.py``, ``agent/turn_context.py``): a user plugin is a
directory ``~/.hermes/plugins/<name>/`` with a ``plugin.yaml`` manifest and an ``__init__.py``
whose ``register(ctx)`` registers hooks; it loads only when its name is in ``plugins.enabled``
of ``config.yaml``, which ``hermes plugins enable <name>`` writes. ``pre_llm_call`` fires once
per turn with the user's message (``user_message``) and the ``session_id``; a callback's
``{"context": …}`` is added to that turn's user message in the model request and is never
stored in Hermes's session database (so capture never reads it back as the user's words).

Install (its post-install step, :func:`register`): writes the directory (both files ours,
recorded and shown like any edit) and runs ``hermes plugins enable mcp-agents-memory
--no-allow-tool-override`` (the flag answers Hermes's question about replacing built-in tools:
no). Uninstall (:func:`unregister`): ``hermes plugins disable mcp-agents-memory`` and ``hermes
config unset plugins.entries.mcp-agents-memory`` while the plugin is still there (Hermes
resolves the name from it), then deletes the directory we created. Hermes has no command that
takes a name out of its lists without a trace: ``disable`` leaves our name in
``plugins.disabled`` (harmless without the directory; a later ``enable`` takes it out).
Without ``hermes`` on PATH the commands are notes.

The plugin runs ``memory-capture hook prompt --platform hermes`` (the same command and fast
path as the other clients' hooks: it fails open within ``PROMPT_HOOK_TIMEOUT_MS``), killed
after :data:`~agents_memory.adapters.base.PROMPT_HOOK_SEC`; on any error it adds nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agents_memory.adapters.base import (
    MCP_SERVER_NAME,
    PROMPT_HOOK_SEC,
    Commands,
    FileEdit,
    InstallContext,
    WholeFile,
)
from agents_memory.adapters.hermes_mcp import run_hermes, yaml_paths

NAME = MCP_SERVER_NAME
MARK = "# mcp-agents-memory: per-prompt recall"
DISABLE = f"hermes plugins disable {NAME}"
UNSET = f"hermes config unset plugins.entries.{NAME}"


def plugin_dir(home: Path) -> Path:
    return home / ".hermes" / "plugins" / NAME


def _config(home: Path) -> Path:
    return home / ".hermes" / "config.yaml"


MANIFEST = f"""\
{MARK}. Written by `memory-capture install`, removed by `memory-capture uninstall`.
name: {NAME}
version: 1.0.0
description: Adds the few memories a prompt needs (mcp-agents-memory), or nothing.
hooks:
  - pre_llm_call
"""

_SOURCE = """\
{mark}. Written by `memory-capture install`, removed by `memory-capture uninstall`.
# Runs the per-prompt hook command with the turn's prompt and adds what it prints (the few
# memories the prompt needs, or nothing) to the turn's user message. Never raises.
import json
import os
import subprocess

COMMAND = {command}
CEILING_SEC = {ceiling}


def _recall(session_id="", user_message="", **_kwargs):
    try:
        prompt = user_message if isinstance(user_message, str) else ""
        if not prompt.strip():
            return None
        event = {{"session_id": session_id or None, "cwd": os.getcwd(), "prompt": prompt}}
        done = subprocess.run(
            COMMAND,
            input=json.dumps(event),
            capture_output=True,
            text=True,
            timeout=CEILING_SEC,
            check=False,
        )
        text = done.stdout.strip()[:65536]
        return {{"context": text}} if text else None
    except Exception:
        return None


def register(ctx):
    ctx.register_hook("pre_llm_call", _recall)
"""


def plugin_source(commands: Commands) -> str:
    """The plugin's ``__init__.py``, running this installation's ``memory-capture``."""
    argv = [str(commands.memory_capture), "hook", "prompt", "--platform", "hermes"]
    return _SOURCE.format(mark=MARK, command=json.dumps(argv), ceiling=PROMPT_HOOK_SEC)


def plugin_edits(home: Path, commands: Commands) -> tuple[FileEdit, ...]:
    directory = plugin_dir(home)
    return (
        FileEdit(directory / "plugin.yaml", "file", (WholeFile(MANIFEST),), "plugin manifest"),
        FileEdit(
            directory / "__init__.py",
            "file",
            (WholeFile(plugin_source(commands)),),
            "per-prompt recall plugin (pre_llm_call)",
        ),
    )


def is_ours(home: Path) -> bool:
    """Whether the plugin directory is there with our manifest."""
    try:
        return (plugin_dir(home) / "plugin.yaml").read_text("utf-8").startswith(MARK)
    except (OSError, UnicodeDecodeError):
        return False


def is_enabled(config_text: str | None) -> bool:
    """Whether ``config.yaml`` lists our plugin under ``plugins.enabled``."""
    return ("plugins", "enabled", NAME) in yaml_paths(config_text)


def enable_command(hermes: str) -> list[str]:
    return [hermes, "plugins", "enable", NAME, "--no-allow-tool-override"]


def register(ctx: InstallContext) -> list[str]:
    """Write the plugin and enable it (install's post-install step); notes for the user."""
    if ctx.commands is None:
        return []
    shown = f"hermes plugins enable {NAME} --no-allow-tool-override"
    if ctx.dry_run:
        return [f"would write {plugin_dir(ctx.home)} and run `{shown}`"]
    for edit in plugin_edits(ctx.home, ctx.commands):
        ctx.apply(edit)
    if is_enabled(ctx.read_text(_config(ctx.home))):
        return [f"Hermes already has the plugin {NAME} enabled"]
    hermes = ctx.which("hermes")
    if hermes is None:
        return [f"hermes is not on PATH: turn per-prompt recall on with `{shown}`"]
    outcome = run_hermes(enable_command(hermes))
    if is_enabled(ctx.read_text(_config(ctx.home))):
        return [f"enabled per-prompt recall with `{shown}`"]
    return [f"Hermes did not enable the plugin ({outcome}); run `{shown}`"]


def unregister(ctx: InstallContext) -> list[str]:
    """Disable the plugin through Hermes, then delete its directory (uninstall's step)."""
    if not plugin_dir(ctx.home).exists():
        return []
    if ctx.dry_run:
        return [f"would run `{DISABLE}` and `{UNSET}`, then delete {plugin_dir(ctx.home)}"]
    notes: list[str] = []
    if is_enabled(ctx.read_text(_config(ctx.home))):
        hermes = ctx.which("hermes")
        if hermes is None:
            notes.append(f"hermes is not on PATH: take the plugin out with `{DISABLE}`")
        else:
            outcome = run_hermes([hermes, "plugins", "disable", NAME])
            run_hermes([hermes, "config", "unset", f"plugins.entries.{NAME}"])
            if is_enabled(ctx.read_text(_config(ctx.home))):
                notes.append(f"Hermes did not disable the plugin ({outcome}); run `{DISABLE}`")
            else:
                notes.append(f"disabled per-prompt recall with `{DISABLE}`")
    if is_ours(ctx.home):
        shutil.rmtree(plugin_dir(ctx.home), ignore_errors=True)
        notes.append(f"removed {plugin_dir(ctx.home)}")
    return notes
