"""OpenCode's per-prompt recall: a plugin file in ``~/.config/opencode/plugins/``, which
OpenCode loads at start-up (its ``{plugin,plugins}/*.{ts,js}`` scan of the global config
directory, OpenCode 1.18).

OpenCode has no command hooks; a plugin's hooks are functions. Ours runs the same command the
other clients' hooks run, ``memory-capture hook prompt --platform opencode``:

* ``chat.message`` (a user message arrived; its text parts) starts it with the client-hook JSON
  ``{"session_id", "cwd", "prompt"}`` on stdin and keeps the pending answer per session;
* ``experimental.chat.system.transform`` (before each model request of the session, with its
  ``sessionID``) waits for that answer and appends it to the system prompt. Nothing is added to
  the stored message, so capture never reads the memories back as the user's words.

The command fails open within its own budget; the plugin also gives up after
:data:`~agents_memory.adapters.base.PROMPT_HOOK_SEC` and on any error, adding nothing.

The price of any plugin: at start-up OpenCode installs its ``@opencode-ai/plugin`` package from
npm into the config directory and waits for that before it loads plugins (a one-time download
when online; about 70 s more on every start when the registry cannot be reached, measured with
OpenCode 1.18.33 offline: 36 s → 107 s for one headless turn under load). So install adds ours
only where OpenCode has plugins already and pays that price anyway (:func:`wanted`); elsewhere
it says how to turn it on (:data:`SKIPPED`).
"""

from __future__ import annotations

import json
from pathlib import Path

from agents_memory.adapters.base import PROMPT_HOOK_SEC, Commands

PLUGIN_FILE = "mcp-agents-memory.js"
PLUGIN_DIRS = ("plugin", "plugins")
"""The directories of ``~/.config/opencode`` whose ``*.js`` / ``*.ts`` OpenCode loads."""
SKIPPED = (
    "OpenCode: per-prompt recall is a plugin, and the first plugin makes OpenCode install "
    "@opencode-ai/plugin from npm on start (a minute's wait on every start when offline), so "
    "install left it out; to have it, put any plugin in ~/.config/opencode/plugins/ (even an "
    "empty `export {}` file) and run install again"
)


def wanted(config: Path) -> bool:
    """Whether ``config`` (``~/.config/opencode``) has plugins of the user's, or ours already
    (so uninstall finds it): then ours adds no dependency and no wait."""
    for name in PLUGIN_DIRS:
        directory = config / name
        if (directory / PLUGIN_FILE).is_file():
            return True
        try:
            if any(p.suffix in (".js", ".ts") for p in directory.iterdir() if p.is_file()):
                return True
        except OSError:
            continue
    return False


_SOURCE = """\
// mcp-agents-memory: per-prompt recall. Written by `memory-capture install` (which rewrites
// it), removed by `memory-capture uninstall`. It runs the per-prompt hook command and adds
// what it prints (the few memories the prompt needs, or nothing) to the system prompt.
import { spawn } from "node:child_process";

const COMMAND = __COMMAND__;
const CEILING_MS = __CEILING_MS__;
const recalls = new Map();

function recall(event) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    const finish = (text) => {
      if (!done) {
        done = true;
        resolve(text.trim());
      }
    };
    try {
      const child = spawn(COMMAND[0], COMMAND.slice(1), { stdio: ["pipe", "pipe", "ignore"] });
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        finish("");
      }, CEILING_MS);
      child.stdout.on("data", (chunk) => {
        if (out.length < 65536) out += chunk;
      });
      child.on("error", () => {
        clearTimeout(timer);
        finish("");
      });
      child.on("close", () => {
        clearTimeout(timer);
        finish(out);
      });
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(event));
    } catch {
      finish("");
    }
  });
}

export const McpAgentsMemoryRecall = async ({ directory }) => ({
  "chat.message": async (input, output) => {
    if (!input || !input.sessionID) return;
    const prompt = ((output && output.parts) || [])
      .filter((part) => part && part.type === "text" && !part.synthetic)
      .map((part) => String(part.text || ""))
      .join("\\n")
      .trim();
    recalls.delete(input.sessionID);
    if (recalls.size >= 64) recalls.delete(recalls.keys().next().value);
    const event = { session_id: input.sessionID, cwd: directory, prompt };
    recalls.set(input.sessionID, prompt ? recall(event) : Promise.resolve(""));
  },
  "experimental.chat.system.transform": async (input, output) => {
    const pending = input && input.sessionID ? recalls.get(input.sessionID) : undefined;
    if (!pending || !output || !Array.isArray(output.system)) return;
    const text = await pending;
    if (text) output.system.push(text);
  },
});
"""


def plugin_source(commands: Commands) -> str:
    """The plugin's JavaScript, running this installation's ``memory-capture``."""
    argv = [str(commands.memory_capture), "hook", "prompt", "--platform", "opencode"]
    return _SOURCE.replace("__COMMAND__", json.dumps(argv)).replace(
        "__CEILING_MS__", str(PROMPT_HOOK_SEC * 1000)
    )
