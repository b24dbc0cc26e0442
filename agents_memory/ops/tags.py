"""Project tags and the Cold Path's questions about them, for the owner: ``mcp-agents-memory
tags`` and the web console's Projects page. The decisions themselves are
:mod:`agents_memory.coldpath.tag_decisions`, which the MCP tool ``manage_project_tags`` calls too
(it sits below ``server``); this module finds suggestions by reference and turns a decision's
error into the owner's one line.

Suggestion references carry their queue: ``n12`` is new-tag suggestion 12, ``a7`` alias
suggestion 7 (a bare number works when only one queue has it pending). Every decision runs
in the caller's transaction; each function raises :class:`OwnerRequestError` with one line a
person can act on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg

from agents_memory.coldpath import tag_decisions as decisions
from agents_memory.coldpath.tag_decisions import Kind
from agents_memory.errors import OwnerRequestError, TagEditError
from agents_memory.store import tags as tag_store
from agents_memory.store import untagged as untagged_store
from agents_memory.store.coldpath import tag_suggestions as suggestion_store
from agents_memory.store.coldpath.tag_suggestions import AliasSuggestion, NewTagSuggestion
from agents_memory.store.projects import resolve_project
from agents_memory.store.tags import ProjectTag

Suggestion = NewTagSuggestion | AliasSuggestion


@dataclass(frozen=True, slots=True)
class TagOverview:
    """Every project tag with its row counts, and the suggestions waiting for a decision."""

    tags: list[ProjectTag]
    rows: dict[int, int]
    """Rows filed under each tag itself."""
    rows_with_aliases: dict[int, int]
    """Per canonical tag: its rows and its aliases' rows."""
    new: list[NewTagSuggestion]
    aliases: list[AliasSuggestion]

    @property
    def names(self) -> dict[int, str]:
        return {t.id: t.name for t in self.tags}

    def aliases_of(self, tag: ProjectTag) -> list[str]:
        return [a.name for a in self.tags if a.canonical_id == tag.id and a.id != tag.id]


def tag_overview(conn: psycopg.Connection[Any], user_id: int) -> TagOverview:
    all_tags = tag_store.list_project_tags(conn)
    counts = tag_store.tag_row_counts(conn)
    total: dict[int, int] = {}
    for tag in all_tags:
        total[tag.canonical_id] = total.get(tag.canonical_id, 0) + counts.get(tag.id, 0)
    return TagOverview(
        all_tags,
        counts,
        total,
        suggestion_store.new_suggestions(conn, user_id),
        suggestion_store.alias_suggestions(conn, user_id),
    )


def find_suggestion(conn: psycopg.Connection[Any], user_id: int, ref: str) -> Suggestion:
    """The pending suggestion ``ref`` names, locked for the caller's transaction."""
    text = ref.strip().lower()
    kind = text[0] if text[:1] in ("n", "a") else None
    number = text[1:] if kind else text
    if not number.isdigit():
        raise OwnerRequestError(f"not a suggestion id: {ref!r} (use n<id> or a<id>)")
    suggestion_id = int(number)
    new = (
        suggestion_store.get_new_suggestion(conn, user_id, suggestion_id, lock=True)
        if kind in (None, "n")
        else None
    )
    alias = (
        suggestion_store.get_alias_suggestion(conn, user_id, suggestion_id, lock=True)
        if kind in (None, "a")
        else None
    )
    if kind is None and new is not None and alias is not None:
        if new.status == "pending" and alias.status != "pending":
            alias = None
        elif alias.status == "pending" and new.status != "pending":
            new = None
        else:
            raise OwnerRequestError(f"id {suggestion_id} is ambiguous: use n{ref} or a{ref}")
    found = new or alias
    if found is None:
        raise OwnerRequestError(f"no suggestion {ref!r}")
    if found.status != "pending":
        raise OwnerRequestError(f"suggestion {ref!r} is already {found.status}")
    return found


def confirm_suggestion(conn: psycopg.Connection[Any], user_id: int, ref: str) -> str:
    """Accept ``ref``: create the project tag (filing its rows) or apply the alias."""
    suggestion = find_suggestion(conn, user_id, ref)
    if isinstance(suggestion, NewTagSuggestion):
        return confirm_new_tag(conn, suggestion)
    return confirm_alias(conn, user_id, suggestion)


def confirm_new_tag(conn: psycopg.Connection[Any], suggestion: NewTagSuggestion) -> str:
    return decisions.confirm_new_tag(conn, suggestion)


def confirm_alias(conn: psycopg.Connection[Any], user_id: int, suggestion: AliasSuggestion) -> str:
    with _owner_error():
        return decisions.confirm_alias(conn, user_id, suggestion)


def confirm_as_alias(conn: psycopg.Connection[Any], user_id: int, ref: str, target: str) -> str:
    """Answer new-tag suggestion ``ref`` with "it is another name for ``target``": the tag is
    created (filing its rows) as an alias of the existing tag ``target``."""
    suggestion = find_suggestion(conn, user_id, ref)
    if not isinstance(suggestion, NewTagSuggestion):
        raise OwnerRequestError(f"suggestion {ref!r} is an alias question: confirm or reject it")
    dst = tag_by_name(conn, target)
    tag_id, _filed = decisions.create_and_file(conn, suggestion)
    with _owner_error():
        tag_store.set_alias(conn, tag_id, dst.id)
    suggestion_store.supersede_alias_suggestions(conn, user_id, tag_id)
    return f"{suggestion.name!r} is now an alias of {dst.name!r}"


def reject_suggestion(
    conn: psycopg.Connection[Any], user_id: int, ref: str, reason: str | None = None
) -> str:
    """Reject ``ref`` for good (it is never suggested again)."""
    suggestion = find_suggestion(conn, user_id, ref)
    if isinstance(suggestion, NewTagSuggestion):
        return decisions.reject_new_tag(conn, suggestion, reason)
    return decisions.reject_alias(conn, suggestion, reason)


def tag_by_name(conn: psycopg.Connection[Any], name: str) -> ProjectTag:
    with _owner_error():
        return decisions.tag_named(conn, name)


def alias_tag(conn: psycopg.Connection[Any], user_id: int, source: str, target: str) -> str:
    """Make tag ``source`` an alias of ``target`` (reads group its rows under ``target``)."""
    with _owner_error():
        return decisions.set_alias(conn, user_id, source, target)


def unalias_tag(conn: psycopg.Connection[Any], source: str) -> str:
    """Make tag ``source`` a project of its own again (history is not rewritten)."""
    with _owner_error():
        return decisions.unset_alias(conn, source)


def set_registry(
    conn: psycopg.Connection[Any],
    name: str,
    *,
    kind: Kind | None = None,
    paused: bool | None = None,
    description: str | None = None,
) -> str:
    """Set project ``name``'s registry fields (``None``: unchanged; see
    :func:`agents_memory.coldpath.tag_decisions.set_registry`)."""
    with _owner_error():
        return decisions.set_registry(conn, name, kind=kind, paused=paused, description=description)


@contextmanager
def _owner_error() -> Iterator[None]:
    """The decisions' :class:`TagEditError` as the owner's one-line :class:`OwnerRequestError`."""
    try:
        yield
    except TagEditError as exc:
        raise OwnerRequestError(str(exc)) from exc


def file_untagged(
    conn: psycopg.Connection[Any], user_id: int, project: str, folder: str | None
) -> str:
    """File the untagged turns of ``folder`` (``None``: those with no folder recorded) under
    ``project`` (a name or alias, resolved by the one project rule); what was done, in a line."""
    name = resolve_project(conn, project)
    tag = tag_by_name(conn, name)
    filed = untagged_store.file_folder(conn, user_id, tag.id, folder)
    where = folder if folder is not None else "no folder recorded"
    if not filed:
        return f"no untagged turns from {where}"
    return f"filed {filed} turn(s) from {where} under {name}"
