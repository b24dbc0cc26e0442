"""Where the product keeps its files, and the few settings hooks read before anything else.

Kept free of pydantic (and of everything heavy): the hook path imports this module first, and
every millisecond of a hook's import time is the agent's waiting time. The full settings live
in :mod:`agents_memory.config`, which re-exports these.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "mcp-agents-memory"
DEFAULT_HOOK_BUDGET_MS = 1500
DEFAULT_PROMPT_HOOK_BUDGET_MS = 300


def user_config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME))


def user_state_dir() -> Path:
    """Pid files, sockets and other small runtime state (``~/.local/state/mcp-agents-memory``)."""
    return Path(platformdirs.user_state_dir(APP_NAME))


def hook_budget_ms() -> int:
    """``HOOK_TIMEOUT_MS`` from the environment, read before (and without) the full settings,
    whose loading is itself part of a hook's budget. Bad or missing values give 1500."""
    raw = os.environ.get("HOOK_TIMEOUT_MS", "")
    if raw.isdigit() and 50 <= int(raw) <= 60_000:
        return int(raw)
    return DEFAULT_HOOK_BUDGET_MS


def prompt_hook_budget_ms() -> int:
    """``PROMPT_HOOK_TIMEOUT_MS`` from the environment: the per-prompt hook's own budget (it
    runs on every prompt, so it is far shorter than the session-start hook's). Bad or missing
    values give 300."""
    raw = os.environ.get("PROMPT_HOOK_TIMEOUT_MS", "")
    if raw.isdigit() and 50 <= int(raw) <= 60_000:
        return int(raw)
    return DEFAULT_PROMPT_HOOK_BUDGET_MS


def login_name() -> str:
    """The login name ``USER_NAME`` defaults to (the session's, else the process owner's)."""
    try:
        return os.getlogin()
    except OSError:
        import getpass

        return getpass.getuser()


def capture_socket_path() -> Path:
    """Where the capture daemon listens for flush nudges (a Unix datagram socket)."""
    return user_state_dir() / "capture.sock"


def brief_socket_path() -> Path:
    """Where the capture daemon serves session-start briefs (a Unix stream socket)."""
    return user_state_dir() / "brief.sock"
