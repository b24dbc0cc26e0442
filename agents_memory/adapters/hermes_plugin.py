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
no). Uninstall (:func:`unregister`) takes our name out of Hermes's lists with Hermes's own
``hermes config unset plugins.enabled.<i>`` (an item by its index: ``plugins disable`` would
move the name to ``plugins.disabled`` and leave it there, as no command takes it out; likewise
from ``plugins.disabled`` when the user had disabled it) and ``hermes config unset
plugins.entries.mcp-agents-memory``, then deletes the directory we created. Hermes keeps a
list it empties (``enabled: []``), with no name of ours in it. Without ``hermes`` on PATH the
commands are notes.

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
from agents_memory.adapters.hermes_mcp import run_hermes, yaml_list, yaml_paths

NAME = MCP_SERVER_NAME
MARK = "# mcp-agents-memory: per-prompt recall"
LISTS = (("plugins", "enabled"), ("plugins", "disabled"))
"""Hermes's plugin lists our name may be in."""
ENTRY = f"plugins.entries.{NAME}"


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
    """Take our name out of Hermes's plugin lists through Hermes, then delete the plugin's
    directory (uninstall's step)."""
    if not plugin_dir(ctx.home).exists():
        return []
    listed = _listed(ctx.read_text(_config(ctx.home)))
    shown = "; ".join(f"`hermes config unset {key}`" for key in [*listed, ENTRY])
    if ctx.dry_run:
        return [f"would run {shown}, then delete {plugin_dir(ctx.home)}"]
    notes: list[str] = []
    if listed:
        hermes = ctx.which("hermes")
        if hermes is None:
            notes.append(f"hermes is not on PATH: take the plugin out with {shown}")
        else:
            notes += _unlist(ctx, hermes, shown)
    if is_ours(ctx.home):
        shutil.rmtree(plugin_dir(ctx.home), ignore_errors=True)
        notes.append(f"removed {plugin_dir(ctx.home)}")
    return notes


def _listed(config_text: str | None) -> list[str]:
    """``hermes config unset`` keys of our name in Hermes's plugin lists, each list's last
    first (an unset shifts the items after it)."""
    keys: list[str] = []
    for path in LISTS:
        items = yaml_list(config_text, path)
        at = [n for n, item in enumerate(items) if item == NAME]
        keys += [".".join((*path, str(n))) for n in reversed(at)]
    return keys


def _unlist(ctx: InstallContext, hermes: str, shown: str) -> list[str]:
    outcome = ""
    for key in _listed(ctx.read_text(_config(ctx.home))):
        outcome = run_hermes([hermes, "config", "unset", key])
    run_hermes([hermes, "config", "unset", ENTRY])
    if _listed(ctx.read_text(_config(ctx.home))):
        return [f"Hermes did not take the plugin out of its lists ({outcome}); run {shown}"]
    return ["turned per-prompt recall off in Hermes's config (`hermes config unset`)"]
