"""Temp homes seeded with realistic client configs, fake `systemctl` and `codex` executables."""

from __future__ import annotations

import json
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from agents_memory.adapters.base import Commands
from agents_memory.install.installer import Installer

CLAUDE_SETTINGS = """\
{
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
    "hooks": {
        "SessionStart": [
            {"matcher": "startup",
             "hooks": [{"type": "command", "command": "/usr/local/bin/other start"}]}
        ],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]
    },
    "zzz_unknown": {"nested": [1, 2.5, {"x": null}], "ünïcode": "ключ"}
}
"""

CLAUDE_JSON = (
    '{\n\t"numStartups": 42,\n\t"mcpServers": {\n\t\t"github": {"type": "stdio", '
    '"command": "gh-mcp", "args": ["--ro"], "env": {"TOKEN": "x"}}\n\t},\n'
    '\t"projects": {"/home/u/проект": {"allowedTools": []}}\n}\n'
)

CODEX_CONFIG = """\
# Codex settings — hand edited
model = "o4-mini"  # the fast one
approval_policy = "on-request"

[mcp_servers.docs]
# docs server, keep me
command = "docs-mcp"
args = ["--port", "0"]
env = { DOCS_HOME = "/srv/docs" }

[features]
hooks = true

[hooks.state."/elsewhere/hooks.json:stop:0:0"]
trusted_hash = "sha256:0000"

[projects."/home/u/repo"]
trust_level = "trusted"
"""

CODEX_HOOKS = """\
{
  "hooks": {
    "SessionStart": [
      {"matcher": "startup",
       "hooks": [{"type": "command", "command": "notify-send hi", "timeout": 3}]}
    ]
  }
}
"""

GEMINI_SETTINGS = """\
{
   "security": {"auth": {"selectedType": "gemini-api-key"}},
   "mcpServers": {"fake": {"command": "python3", "args": ["/x/fake.py"], "trust": true}},
   "hooks": {"AfterAgent": [{"matcher": "*",
                             "hooks": [{"name": "mine", "type": "command", "command": "log.sh"}]}]}
}
"""

GROK_CONFIG = """\
# grok build config
default_model = "grok-4.5"

[mcp_servers.search]
command = "search-mcp"   # inline comment survives
"""

AGY_MCP = '{"mcpServers": {"other": {"serverUrl": "http://127.0.0.1:1/mcp"}}}'
GEMINI_MD = "# My global rules\n\nAlways answer in English.\n"


def seed_home(home: Path) -> dict[Path, str]:
    """Write the realistic configs; return {path: original text}."""
    files = {
        home / ".claude" / "settings.json": CLAUDE_SETTINGS,
        home / ".claude.json": CLAUDE_JSON,
        home / ".codex" / "config.toml": CODEX_CONFIG,
        home / ".codex" / "hooks.json": CODEX_HOOKS,
        home / ".gemini" / "settings.json": GEMINI_SETTINGS,
        home / ".grok" / "config.toml": GROK_CONFIG,
        home / ".gemini" / "config" / "mcp_config.json": AGY_MCP,
        home / ".gemini" / "GEMINI.md": GEMINI_MD,
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return files


def make_executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fake_systemctl(bin_dir: Path, log: Path, *, rc: int = 0) -> Path:
    """A `systemctl` that appends its argv to ``log`` and exits with ``rc``."""
    return make_executable(bin_dir / "systemctl", f'#!/bin/sh\necho "$@" >> "{log}"\nexit {rc}\n')


FAKE_CODEX = '''\
#!{python}
"""Fake `codex app-server`: answers initialize and hooks/list from $CODEX_HOME like Codex."""
import hashlib, json, os, sys, tomllib
home = os.environ["CODEX_HOME"]
labels = {{
    "SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "Stop": "stop"
}}
def listing():
    path = os.path.join(home, "hooks.json")
    try:
        events = json.load(open(path, encoding="utf-8")).get("hooks", {{}})
    except OSError:
        events = {{}}
    try:
        config = tomllib.load(open(os.path.join(home, "config.toml"), "rb"))
        state = config.get("hooks", {{}}).get("state", {{}})
    except OSError:
        state = {{}}
    hooks = []
    for event, groups in events.items():
        for gi, group in enumerate(groups):
            for hi, handler in enumerate(group.get("hooks", [])):
                key = f"{{path}}:{{labels.get(event, event.lower())}}:{{gi}}:{{hi}}"
                identity = json.dumps([event, group.get("matcher"), handler], sort_keys=True)
                digest = "sha256:" + hashlib.sha256(identity.encode()).hexdigest()
                trusted = state.get(key, {{}}).get("trusted_hash")
                status = "trusted" if trusted == digest else "modified"
                status = "untrusted" if trusted is None else status
                hooks.append({{"key": key, "command": handler.get("command"), "currentHash": digest,
                              "trustStatus": status, "isManaged": False}})
    return [{{"cwd": os.getcwd(), "hooks": hooks}}]
if sys.argv[1:] != ["app-server"]:
    sys.exit(2)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        print(json.dumps({{"id": msg["id"], "result": {{}}}}), flush=True)
    elif msg.get("method") == "hooks/list":
        print(json.dumps({{"id": msg["id"], "result": {{"data": listing()}}}}), flush=True)
'''


def fake_codex(bin_dir: Path) -> Path:
    return make_executable(bin_dir / "codex", FAKE_CODEX.format(python=sys.executable))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def commands(tmp_path: Path) -> Commands:
    return Commands(
        tmp_path / "venv" / "bin" / "memory-capture",
        tmp_path / "venv" / "bin" / "mcp-agents-memory",
    )


@pytest.fixture
def make_installer(home: Path, commands: Commands, tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(**kwargs: object) -> Installer:
        options: dict[str, object] = {
            "commands": commands,
            "state_dir": tmp_path / "state",
            "which": lambda _name: None,
        }
        options.update(kwargs)
        return Installer(home=home, **options)  # type: ignore[arg-type]

    return make


def load(path: Path) -> object:
    """Parse a config file by its suffix (None when absent)."""
    import tomllib

    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        return tomllib.loads(text)
    if path.suffix == ".json":
        return json.loads(text)
    return text


def dedent(text: str) -> str:
    return textwrap.dedent(text)
