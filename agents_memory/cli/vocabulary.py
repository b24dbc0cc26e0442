"""The one vocabulary of both console scripts' options: the same idea has the same name, help
and resolver in every command (``--project``, ``--platform``, ``--since`` / ``--until``,
``--session``, ``--device``, ``--limit``, ``--json``).

A client is named by its full or short name (``claude-code`` or ``claude``) everywhere, through
the adapters' registry (:func:`agents_memory.adapters.resolve_client` for the commands that act
on a client's capture, :func:`agents_memory.adapters.platform_filter` for those that filter
stored turns). Older spellings (search's ``--p-tag``) still work for one release but are left
out of the help (:class:`VocabularyOption`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from agents_memory.adapters import client_help, platform_filter, resolve_client
from agents_memory.daterange import ACCEPTED_FORMS
from agents_memory.errors import AdapterError

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class VocabularyOption(click.Option):
    """An option whose ``old_spellings`` still parse but are not shown by ``--help`` (nor
    required in the README). A ``{clients}`` in its help is filled from the adapters'
    registry when the help is shown (a command line that does not ask for help imports no
    adapter for it)."""

    def __init__(
        self, param_decls: list[str], *, old_spellings: tuple[str, ...] = (), **attrs: Any
    ) -> None:
        super().__init__([*param_decls, *old_spellings], **attrs)
        self.old_spellings = old_spellings

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        shown, written = self.opts, self.help
        self.opts = [flag for flag in shown if flag not in self.old_spellings]
        if written and "{clients}" in written:
            self.help = written.replace("{clients}", client_help())
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts, self.help = shown, written


def _resolved_filter(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    try:
        return platform_filter(value)
    except AdapterError as exc:
        raise click.BadParameter(str(exc)) from exc


def _resolved_clients(
    _ctx: click.Context, _param: click.Parameter, value: str | tuple[str, ...] | None
) -> str | tuple[str, ...] | None:
    try:
        if isinstance(value, tuple):
            return tuple(dict.fromkeys(resolve_client(v).name for v in value))
        return None if value is None else resolve_client(value).name
    except AdapterError as exc:
        raise click.BadParameter(str(exc)) from exc


def project_option(help_text: str, *, old_spellings: tuple[str, ...] = ()) -> Decorator:
    """``--project NAME``: a project tag or an alias of one; a name that is neither is refused
    with the close ones (:func:`agents_memory.store.projects.resolve_project`)."""
    return click.option(
        "--project",
        cls=VocabularyOption,
        old_spellings=old_spellings,
        metavar="NAME",
        help=help_text,
    )


def platform_filter_option(help_text: str = "Only this client's turns") -> Decorator:
    """``--platform NAME`` over stored turns: a client's full or short name, ``*`` = all."""
    return click.option(
        "--platform",
        cls=VocabularyOption,
        metavar="NAME",
        callback=_resolved_filter,
        help=help_text + ": {clients}; '*' = all.",
    )


def client_option(help_text: str = "Only this client", *, multiple: bool = False) -> Decorator:
    """``--platform NAME`` for a command that acts on a client's capture: its full or short
    name, resolved to the client (``codex`` is ``codex-cli``)."""
    return click.option(
        "--platform",
        "platforms" if multiple else "platform",
        cls=VocabularyOption,
        metavar="NAME",
        multiple=multiple,
        callback=_resolved_clients,
        help=help_text + (" (repeatable)" if multiple else "") + ": {clients}.",
    )


def since_option(help_text: str = "Only turns from the start of this day or period") -> Decorator:
    return click.option("--since", metavar="WHEN", help=f"{help_text}: {ACCEPTED_FORMS}.")


def until_option(help_text: str = "Only turns up to the end of this day or period") -> Decorator:
    return click.option("--until", metavar="WHEN", help=f"{help_text} (same forms as --since).")


def json_option(what: str) -> Decorator:
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what} as JSON.")


def kind_option(help_text: str = "Only turns that made a tool call of this kind") -> Decorator:
    """``--kind``: an action's kind (edit, write, read, shell, search, web, mcp, agent, other)."""
    from agents_memory.store.search.action_text import ACTION_KINDS

    return click.option("--kind", type=click.Choice(ACTION_KINDS), help=f"{help_text}.")


def file_option(help_text: str = "Only turns that touched this path") -> Decorator:
    """``--file``: a path, a part of one, or a glob with ``*`` and ``?``."""
    return click.option(
        "--file", "file_", metavar="PATH", help=f"{help_text} (a part of it, or a glob with *)."
    )
