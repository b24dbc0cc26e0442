"""Platform adapters and their registry.

Adding a client is one module in this package, its fixtures, and one line in ``_FACTORIES``.
Everything client-specific lives on its :class:`Adapter`; nothing outside this package names a
client. :func:`register` is the registry's run-time extension point: it adds an adapter (a
plugin, a test's throwaway client) and returns the function that takes it away again.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from importlib import import_module

from agents_memory.adapters.base import (
    Adapter,
    Commands,
    FileEdit,
    InstallPlan,
    ParseIssue,
    ParseResult,
    Turn,
)
from agents_memory.errors import AdapterError

__all__ = [
    "Adapter",
    "Commands",
    "FileEdit",
    "InstallPlan",
    "ParseIssue",
    "ParseResult",
    "Turn",
    "all_adapters",
    "all_platforms",
    "client_help",
    "client_names",
    "get_adapter",
    "names",
    "platform_filter",
    "platform_for_client",
    "register",
    "resolve_client",
    "resolve_platform",
    "short_platform",
]

Factory = Callable[[], Adapter]

# platform name -> "module:Class"; modules are imported lazily so the hook path stays light.
_FACTORIES: dict[str, str | Factory] = {
    "claude-code": "agents_memory.adapters.claude_code:ClaudeCodeAdapter",
    "codex-cli": "agents_memory.adapters.codex:CodexAdapter",
    "gemini-cli": "agents_memory.adapters.gemini_cli:GeminiCliAdapter",
    "grok": "agents_memory.adapters.grok:GrokAdapter",
    "antigravity": "agents_memory.adapters.antigravity:AntigravityAdapter",
    "opencode": "agents_memory.adapters.opencode:OpenCodeAdapter",
    "hermes": "agents_memory.adapters.hermes:HermesAdapter",
}


def names() -> list[str]:
    return list(_FACTORIES)


def register(name: str, factory: Factory) -> Callable[[], None]:
    """Add the adapter ``factory()`` under ``name`` (after the built-in ones) and return the
    function that removes it again. ``factory().name`` must be ``name``; a name already
    registered raises :class:`AdapterError`."""
    if name in _FACTORIES:
        raise AdapterError(f"platform {name!r} is already registered")
    _FACTORIES[name] = factory

    def unregister() -> None:
        if _FACTORIES.get(name) is factory:
            del _FACTORIES[name]

    return unregister


def get_adapter(name: str) -> Adapter:
    """The adapter for ``name``; an unknown name raises :class:`AdapterError` listing the known."""
    target = _FACTORIES.get(name)
    if target is None:
        raise AdapterError(f"unknown platform {name!r}; known: {', '.join(_FACTORIES)}")
    if isinstance(target, str):
        module_name, _, class_name = target.partition(":")
        factory: Factory = getattr(import_module(module_name), class_name)
    else:
        factory = target
    adapter = factory()
    if adapter.name != name:
        raise AdapterError(f"the adapter registered as {name!r} calls itself {adapter.name!r}")
    return adapter


def all_adapters(enabled: tuple[str, ...] = ()) -> list[Adapter]:
    """Every registered adapter, or only those named in ``enabled`` (validated)."""
    chosen = enabled or tuple(_FACTORIES)
    return [get_adapter(name) for name in chosen]


def all_platforms(enabled: tuple[str, ...] = ()) -> list[str]:
    """Every platform name the (enabled) adapters write, e.g. ``codex-cli`` and
    ``codex-desktop`` for the Codex adapter."""
    return [p for adapter in all_adapters(enabled) for p in adapter.platforms]


def platform_for_client(client_name: str | None) -> str | None:
    """The platform an MCP client's self-reported ``clientInfo.name`` belongs to: the adapter
    that lists the whole name in :attr:`~Adapter.mcp_client_exact_names`, else the first whose
    :attr:`~Adapter.mcp_client_names` fragment it contains. Names no adapter claims pass
    through lower-cased, so clients without transcripts keep their own identity."""
    if not client_name:
        return None
    lowered = client_name.strip().lower()
    adapters = all_adapters()
    for adapter in adapters:
        if lowered in adapter.mcp_client_exact_names:
            return adapter.name
    for adapter in adapters:
        if any(fragment in lowered for fragment in adapter.mcp_client_names):
            return adapter.name
    return lowered


def resolve_platform(value: str) -> str:
    """The platform ``value`` names, in any case: a platform an adapter writes (``claude-code``,
    ``codex-desktop``), an adapter's short name (``claude``), or the name of a client without
    an adapter as :func:`platform_for_client` keeps it (``cursor``: its ``save_message`` rows).
    A name close to a known one (``cluade``) or not a name at all raises :class:`AdapterError`
    with the suggestion and the list. The one rule for every caller (``search --platform``,
    the MCP tool ``search_memory``)."""
    wanted = value.strip().lower()
    adapters = all_adapters()
    for adapter in adapters:
        if wanted in adapter.platforms or wanted == adapter.short_name:
            return adapter.name if wanted == adapter.short_name else wanted
    forms = [p for a in adapters for p in a.platforms] + [
        a.short_name for a in adapters if a.short_name
    ]
    close = difflib.get_close_matches(wanted, forms, n=1, cutoff=0.75)
    if _CLIENT_NAME.fullmatch(wanted) and not close:
        return wanted
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise AdapterError(f"unknown platform {value!r}{hint}; one of: {', '.join(forms)}")


def resolve_client(value: str) -> Adapter:
    """The adapter ``value`` names, in any case: its name (``codex-cli``), its short name
    (``codex``) or a platform it writes (``codex-desktop``). The one rule of every command
    that acts on a client's capture (``pause``, ``resume``, ``backfill``, ``install``,
    ``uninstall``); anything else raises :class:`AdapterError` with the close name and the
    list."""
    wanted = value.strip().lower()
    adapters = all_adapters()
    for adapter in adapters:
        if wanted in (adapter.name, adapter.short_name) or wanted in adapter.platforms:
            return adapter
    forms = client_names()
    close = difflib.get_close_matches(wanted, forms, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise AdapterError(f"unknown client {value!r}{hint}; one of: {', '.join(forms)}")


def client_names() -> list[str]:
    """Every registered client's name, each followed by its short name when it has one."""
    out: list[str] = []
    for adapter in all_adapters():
        out.append(adapter.name)
        if adapter.short_name:
            out.append(adapter.short_name)
    return out


def client_help() -> str:
    """The registered clients as help texts list them: ``claude-code (claude), codex-cli
    (codex), …, grok``."""
    return ", ".join(
        f"{a.name} ({a.short_name})" if a.short_name else a.name for a in all_adapters()
    )


_CLIENT_NAME = re.compile(r"[a-z0-9][a-z0-9._ -]{0,63}")
"""What a client's self-reported name looks like once lower-cased."""


def platform_filter(value: str | None) -> str | None:
    """A search's platform filter: ``None``, empty or ``*`` = every platform, else the one
    :func:`resolve_platform` names."""
    if value is None or value.strip() in ("", "*"):
        return None
    return resolve_platform(value)


def short_platform(platform: str) -> str:
    """The short name tables show for ``platform`` (itself when its adapter has none)."""
    for adapter in all_adapters():
        if platform == adapter.name and adapter.short_name:
            return adapter.short_name
    return platform
