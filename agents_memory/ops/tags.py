"""Project tags and the Cold Path's questions about them: the one service behind
``mcp-agents-memory tags``, the web console's Projects page and the MCP tool
``manage_project_tags``.

Suggestion references carry their queue: ``n12`` is new-tag suggestion 12, ``a7`` alias
suggestion 7 (a bare number works when only one queue has it pending). Every decision runs
in the caller's transaction; each function raises :class:`OwnerRequestError` with one line a
person can act on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from agents_memory.errors import OwnerRequestError, TagEditError
from agents_memory.store import tag_suggestions as suggestion_store
from agents_memory.store import tags as tag_store
from agents_memory.store.tag_suggestions import AliasSuggestion, NewTagSuggestion
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
    _tag_id, filed = _create_and_file(conn, suggestion)
    return f"created project tag {suggestion.name!r}; filed {filed} row(s) under it"


def _create_and_file(
    conn: psycopg.Connection[Any], suggestion: NewTagSuggestion
) -> tuple[int, int]:
    """The suggested tag, created with its rows filed under it: its id and how many rows."""
    tag_id = tag_store.create_project_tag(
        conn, suggestion.name, git_root=suggestion.git_root, git_remote=suggestion.git_remote
    )
    filed = 0
    if suggestion.git_root or suggestion.git_remote:
        filed += tag_store.retro_tag_git(conn, tag_id, suggestion.git_root, suggestion.git_remote)
    filed += tag_store.retro_tag_dtag(conn, tag_id, suggestion.name)
    suggestion_store.decide_new_suggestion(
        conn, suggestion.id, "confirmed", project_tag_id=tag_id, retrotagged=filed
    )
    return tag_id, filed


def confirm_alias(conn: psycopg.Connection[Any], user_id: int, suggestion: AliasSuggestion) -> str:
    try:
        tag_store.set_alias(conn, suggestion.source_tag_id, suggestion.target_tag_id)
    except TagEditError as exc:
        raise OwnerRequestError(str(exc)) from exc
    suggestion_store.decide_alias_suggestion(conn, suggestion.id, "confirmed")
    suggestion_store.supersede_alias_suggestions(
        conn, user_id, suggestion.source_tag_id, keep=suggestion.id
    )
    return f"{suggestion.source_name!r} is now an alias of {suggestion.target_name!r}"


def confirm_as_alias(conn: psycopg.Connection[Any], user_id: int, ref: str, target: str) -> str:
    """Answer new-tag suggestion ``ref`` with "it is another name for ``target``": the tag is
    created (filing its rows) as an alias of the existing tag ``target``."""
    suggestion = find_suggestion(conn, user_id, ref)
    if not isinstance(suggestion, NewTagSuggestion):
        raise OwnerRequestError(f"suggestion {ref!r} is an alias question: confirm or reject it")
    dst = tag_by_name(conn, target)
    tag_id, _filed = _create_and_file(conn, suggestion)
    try:
        tag_store.set_alias(conn, tag_id, dst.id)
    except TagEditError as exc:
        raise OwnerRequestError(str(exc)) from exc
    suggestion_store.supersede_alias_suggestions(conn, user_id, tag_id)
    return f"{suggestion.name!r} is now an alias of {dst.name!r}"


def reject_suggestion(
    conn: psycopg.Connection[Any], user_id: int, ref: str, reason: str | None = None
) -> str:
    """Reject ``ref`` for good (it is never suggested again)."""
    suggestion = find_suggestion(conn, user_id, ref)
    if isinstance(suggestion, NewTagSuggestion):
        suggestion_store.decide_new_suggestion(conn, suggestion.id, "rejected", reason=reason)
        what = f"new project tag {suggestion.name!r}"
    else:
        suggestion_store.decide_alias_suggestion(conn, suggestion.id, "rejected", reason=reason)
        what = f"{suggestion.source_name!r} -> {suggestion.target_name!r}"
    return f"rejected {what}"


def tag_by_name(conn: psycopg.Connection[Any], name: str) -> ProjectTag:
    tag = tag_store.tag_by_name(conn, name)
    if tag is None:
        raise OwnerRequestError(f"no project tag {name!r}")
    return tag


def alias_tag(conn: psycopg.Connection[Any], user_id: int, source: str, target: str) -> str:
    """Make tag ``source`` an alias of ``target`` (reads group its rows under ``target``)."""
    src, dst = tag_by_name(conn, source), tag_by_name(conn, target)
    try:
        tag_store.set_alias(conn, src.id, dst.id)
    except TagEditError as exc:
        raise OwnerRequestError(str(exc)) from exc
    suggestion_store.supersede_alias_suggestions(conn, user_id, src.id)
    return f"{src.name!r} is now an alias of {dst.name!r}"


def unalias_tag(conn: psycopg.Connection[Any], source: str) -> str:
    """Make tag ``source`` a project of its own again (history is not rewritten)."""
    tag = tag_by_name(conn, source)
    if tag.alias_of is None:
        raise OwnerRequestError(f"{tag.name!r} is not an alias")
    tag_store.clear_alias(conn, tag.id)
    return f"{tag.name!r} is no longer an alias"
