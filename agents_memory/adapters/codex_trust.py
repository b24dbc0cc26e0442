"""Trust for our Codex hooks.

Codex runs a user hook from ``~/.codex/hooks.json`` only if ``config.toml`` holds
``[hooks.state."<hooks.json path>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"`` that
matches the hook's current hash; otherwise it skips the hook without a word. The hash is
Codex's own (a SHA-256 of a normalized, version-dependent serialization of the handler), so we
do not compute it: we ask Codex. ``codex app-server`` answers the JSON-RPC method ``hooks/list``
with each hook's ``key``, ``currentHash`` and ``trustStatus``; we write the hash of each of our
untrusted hooks back. Without ``codex`` on ``PATH`` the user trusts them once in ``/hooks``.

:func:`trust_hooks`, :func:`trust_removal` and :func:`trust_entries` are the Codex adapter's
post-install, uninstall and status steps; the installer lends them its file access.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agents_memory.adapters.base import (
    FileEdit,
    InstallContext,
    OwnedEntry,
    Reader,
    is_our_hook_command,
)
from agents_memory.errors import CodexRpcError, ConfigFileError

HookLister = Callable[[Path, Path], list[dict[str, Any]]]
"""``(codex_home, cwd) -> hooks`` as ``hooks/list`` reports them (flattened)."""

TRUST_INSTRUCTION = (
    "Codex runs new hooks only once you trust them: start `codex`, type /hooks and trust the "
    "three mcp-agents-memory hooks (or re-run `memory-capture install` with `codex` on PATH)."
)
_EVENT_LABELS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "Stop": "stop",
    "SessionEnd": "session_end",
}


def _files(home: Path) -> tuple[Path, Path]:
    """``hooks.json`` and ``config.toml`` of the Codex home under ``home``."""
    return home / ".codex" / "hooks.json", home / ".codex" / "config.toml"


# --- the adapter's install steps -----------------------------------------------------------


def trust_hooks(ctx: InstallContext) -> list[str]:
    """Ask ``codex app-server`` for our hooks' hashes, trust them, verify; notes for the user
    (the instruction to trust them in ``/hooks`` when Codex cannot be asked)."""
    codex = ctx.which("codex")
    if ctx.dry_run or codex is None:
        return _without_asking(ctx, codex)
    lister = app_server_lister(codex, ctx.home)
    codex_home = ctx.home / ".codex"
    hooks_json, config = _files(ctx.home)
    try:
        listed = lister(codex_home, ctx.home)
        todo = untrusted_ours(listed, hooks_json)
        edit = trust_edit(config, todo)
        if edit is None:
            return _trust_check(listed, hooks_json)
        ctx.apply(edit)
        remaining = untrusted_ours(lister(codex_home, ctx.home), hooks_json)
    except (CodexRpcError, OSError, ConfigFileError) as exc:
        return [f"could not record Codex hook trust ({exc}). {TRUST_INSTRUCTION}"]
    if remaining:
        return [f"Codex still reports {len(remaining)} hook(s) untrusted. " + TRUST_INSTRUCTION]
    return [f"trusted {len(todo)} Codex hook(s) (verified with `codex app-server`)"]


def _without_asking(ctx: InstallContext, codex: str | None) -> list[str]:
    """The notes of a dry run, or of a run without ``codex`` on PATH."""
    if codex is not None:
        return ["would ask `codex app-server` for the new hooks' hashes and trust them"]
    if not ctx.dry_run and trust_entries(ctx.home, ctx.read_text):
        return []
    return [TRUST_INSTRUCTION]


def _trust_check(listed: list[dict[str, Any]], hooks_json: Path) -> list[str]:
    if listed_ours(listed, hooks_json):
        return []
    return [
        f"Codex does not list the hooks in {hooks_json}; are hooks enabled "
        "(`[features] hooks = true` in ~/.codex/config.toml)?"
    ]


def trust_removal(home: Path, read_text: Reader) -> list[FileEdit]:
    """The ``config.toml`` edit that removes the trust entries of our hooks at their current
    positions (and under the symlink-free path)."""
    hooks_json, config = _files(home)
    text = read_text(hooks_json)
    try:
        data = json.loads(text) if text else {}
    except ValueError as exc:
        raise ConfigFileError(f"{hooks_json}: not valid JSON ({exc})") from exc
    keys = hook_keys(hooks_json, data, resolved_too=True)
    return [FileEdit(config, "toml", tuple(OwnedEntry(("hooks", "state", k), {}) for k in keys))]


def trust_entries(home: Path, read_text: Reader) -> list[tuple[Path, str]]:
    """``[(config.toml, "hook trust")]`` when every hook of ours has a trusted hash there."""
    hooks_json, config = _files(home)
    try:
        text = read_text(hooks_json)
        keys = hook_keys(hooks_json, json.loads(text) if text else {})
        trusted = has_trust_entries(read_text(config), keys)
    except (ConfigFileError, ValueError):
        return []
    return [(config, "hook trust")] if trusted else []


def app_server_lister(codex: str, home: Path, timeout: float = 30.0) -> HookLister:
    """A :data:`HookLister` that asks ``<codex> app-server`` (``HOME=home``)."""

    def lister(codex_home: Path, cwd: Path) -> list[dict[str, Any]]:
        return list_hooks(codex, home=home, codex_home=codex_home, cwd=cwd, timeout=timeout)

    return lister


def list_hooks(
    codex: str, *, home: Path, codex_home: Path, cwd: Path, timeout: float = 30.0
) -> list[dict[str, Any]]:
    """Run ``codex app-server`` and return every hook ``hooks/list`` reports for ``cwd``."""
    # The child gets the user's environment (PATH, proxies) with HOME/CODEX_HOME pinned to the
    # home being installed into, so it reads exactly the files we wrote.
    env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(codex_home)}
    proc = subprocess.Popen(
        [codex, "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env=env,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        _send(proc, {"id": 1, "method": "initialize", "params": _client_info()})
        _receive(lines, 1, timeout)
        _send(proc, {"method": "initialized"})
        _send(proc, {"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}})
        answer = _receive(lines, 2, timeout)
    finally:
        _stop(proc)
        reader.join(5)
        if proc.stdout is not None:
            proc.stdout.close()
    if "error" in answer:
        raise CodexRpcError(f"codex app-server hooks/list failed: {answer['error']}")
    data = answer.get("result", {}).get("data", [])
    return [hook for group in data for hook in group.get("hooks", []) if isinstance(hook, dict)]


def _client_info() -> dict[str, Any]:
    from agents_memory import __version__

    return {"clientInfo": {"name": "mcp-agents-memory-installer", "version": __version__}}


def _send(proc: subprocess.Popen[str], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
    except OSError as exc:
        raise CodexRpcError(f"codex app-server exited early: {exc}") from exc


def _receive(lines: queue.Queue[str | None], want: int, timeout: float) -> dict[str, Any]:
    import time

    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            raise CodexRpcError("codex app-server exited before answering")
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == want:
            return message
    raise CodexRpcError(f"codex app-server did not answer within {timeout:.0f} s")


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.stdin is not None:
        with contextlib.suppress(OSError):  # the server is gone and the pipe broken
            proc.stdin.close()
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# --- pure parts ------------------------------------------------------------------------------


def _same_file(key: str, hooks_json: Path) -> bool:
    source = key.rsplit(":", 3)[0]
    return source in {str(hooks_json), str(hooks_json.resolve())}


def listed_ours(hooks: Iterable[dict[str, Any]], hooks_json: Path) -> list[dict[str, Any]]:
    """The hooks Codex lists from ``hooks_json`` whose command is ours."""
    return [
        hook
        for hook in hooks
        if is_our_hook_command(hook.get("command"))
        and isinstance(hook.get("key"), str)
        and _same_file(hook["key"], hooks_json)
    ]


def untrusted_ours(hooks: Iterable[dict[str, Any]], hooks_json: Path) -> list[dict[str, Any]]:
    """Our hooks from ``hooks_json`` that Codex does not (or no longer) trust."""
    return [
        hook
        for hook in listed_ours(hooks, hooks_json)
        if not hook.get("isManaged")
        and hook.get("trustStatus") != "trusted"
        and isinstance(hook.get("currentHash"), str)
    ]


def trust_edit(config_toml: Path, hooks: Iterable[dict[str, Any]]) -> FileEdit | None:
    """The ``config.toml`` edit that records Codex's own hashes for ``hooks`` as trusted."""
    entries = tuple(
        OwnedEntry(("hooks", "state", hook["key"]), {"trusted_hash": hook["currentHash"]}, ())
        for hook in hooks
    )
    return FileEdit(config_toml, "toml", entries, "hook trust") if entries else None


def hook_keys(hooks_json: Path, data: Any, *, resolved_too: bool = False) -> list[str]:
    """The ``hooks.state`` keys of our handlers at their current positions in ``hooks.json``
    (``resolved_too``: also under the symlink-free path, for removal)."""
    keys: list[str] = []
    events = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(events, dict):
        return keys
    sources = {str(hooks_json)} | ({str(hooks_json.resolve())} if resolved_too else set())
    for event, groups in events.items():
        label = _EVENT_LABELS.get(event) or _snake(event)
        for gi, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for hi, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if isinstance(handler, dict) and is_our_hook_command(handler.get("command")):
                    keys.extend(f"{source}:{label}:{gi}:{hi}" for source in sorted(sources))
    return keys


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def has_trust_entries(config_text: str | None, keys: Iterable[str]) -> bool:
    """Whether ``config.toml`` holds a trusted hash for every key (hash not verified)."""
    import tomllib

    wanted = list(keys)
    if not wanted or not config_text:
        return False
    try:
        state = tomllib.loads(config_text).get("hooks", {}).get("state", {})
    except tomllib.TOMLDecodeError:
        return False
    return all(isinstance(state.get(k), dict) and "trusted_hash" in state[k] for k in wanted)
