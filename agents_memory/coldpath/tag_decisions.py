"""The owner's answers to the Cold Path's tag questions: one service for the ``tags`` CLI, the
``manage_project_tags`` MCP tool and the console.

The Cold Path asks two kinds of question: *new project tags* (a name seen often enough, with a
recommendation ``project`` / ``generic`` / ``unsure``) and *aliases* (tag A is another name for
tag B). Every decision here takes a connection inside the caller's transaction and raises
:class:`~agents_memory.errors.TagEditError` with a message that says what to do instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import psycopg

from agents_memory.errors import TagEditError
from agents_memory.store import tags as tag_store
from agents_memory.store.coldpath import tag_suggestions as suggestion_store
from agents_memory.store.coldpath.tag_suggestions import AliasSuggestion, NewTagSuggestion

Outcome = Literal["confirmed", "rejected", "left", "failed"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What happened to one suggestion (``apply_recommendations`` reports one per id)."""

    id: int
    outcome: Outcome
    message: str


@dataclass(frozen=True, slots=True)
class PendingQuestions:
    new_tags: list[NewTagSuggestion]
    aliases: list[AliasSuggestion]


def pending(conn: psycopg.Connection[Any], user_id: int) -> PendingQuestions:
    return PendingQuestions(
        suggestion_store.new_suggestions(conn, user_id),
        suggestion_store.alias_suggestions(conn, user_id),
    )


def pending_new_tag(
    conn: psycopg.Connection[Any], user_id: int, suggestion_id: int
) -> NewTagSuggestion:
    found = suggestion_store.get_new_suggestion(conn, user_id, suggestion_id, lock=True)
    if found is None:
        raise TagEditError(
            f"no new-tag suggestion {suggestion_id}; list them with action=list_new_tags"
        )
    if found.status != "pending":
        raise TagEditError(f"new-tag suggestion {suggestion_id} is already {found.status}")
    return found


def pending_alias(
    conn: psycopg.Connection[Any], user_id: int, suggestion_id: int
) -> AliasSuggestion:
    found = suggestion_store.get_alias_suggestion(conn, user_id, suggestion_id, lock=True)
    if found is None:
        raise TagEditError(
            f"no alias suggestion {suggestion_id}; list them with action=list_suggestions"
        )
    if found.status != "pending":
        raise TagEditError(f"alias suggestion {suggestion_id} is already {found.status}")
    return found


def create_and_file(conn: psycopg.Connection[Any], suggestion: NewTagSuggestion) -> tuple[int, int]:
    """Confirm ``suggestion``: the project tag created, the rows of its git root/remote and
    d_tag filed under it; the tag's id and how many rows were filed."""
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


def confirm_new_tag(conn: psycopg.Connection[Any], suggestion: NewTagSuggestion) -> str:
    """Create the project tag and file under it the rows of its git root/remote and d_tag."""
    _tag_id, filed = create_and_file(conn, suggestion)
    return f"created project tag {suggestion.name!r}; filed {filed} row(s) under it"


def reject_new_tag(
    conn: psycopg.Connection[Any], suggestion: NewTagSuggestion, reason: str | None = None
) -> str:
    suggestion_store.decide_new_suggestion(conn, suggestion.id, "rejected", reason=reason)
    return f"rejected new project tag {suggestion.name!r}"


def confirm_alias(conn: psycopg.Connection[Any], user_id: int, suggestion: AliasSuggestion) -> str:
    tag_store.set_alias(conn, suggestion.source_tag_id, suggestion.target_tag_id)
    suggestion_store.decide_alias_suggestion(conn, suggestion.id, "confirmed")
    suggestion_store.supersede_alias_suggestions(
        conn, user_id, suggestion.source_tag_id, keep=suggestion.id
    )
    return f"{suggestion.source_name!r} is now an alias of {suggestion.target_name!r}"


def reject_alias(
    conn: psycopg.Connection[Any], suggestion: AliasSuggestion, reason: str | None = None
) -> str:
    suggestion_store.decide_alias_suggestion(conn, suggestion.id, "rejected", reason=reason)
    return f"rejected {suggestion.source_name!r} -> {suggestion.target_name!r}"


def tag_named(conn: psycopg.Connection[Any], name: str) -> tag_store.ProjectTag:
    tag = tag_store.tag_by_name(conn, name)
    if tag is None:
        raise TagEditError(f"no project tag {name!r}; the brief's Active Projects lists them")
    return tag


def set_alias(conn: psycopg.Connection[Any], user_id: int, source: str, target: str) -> str:
    """Make tag ``source`` an alias of tag ``target`` (pending suggestions about it end)."""
    src, dst = tag_named(conn, source), tag_named(conn, target)
    tag_store.set_alias(conn, src.id, dst.id)
    suggestion_store.supersede_alias_suggestions(conn, user_id, src.id)
    return f"{src.name!r} is now an alias of {dst.name!r}"


def unset_alias(conn: psycopg.Connection[Any], source: str) -> str:
    tag = tag_named(conn, source)
    if tag.alias_of is None:
        raise TagEditError(f"{tag.name!r} is not an alias")
    tag_store.clear_alias(conn, tag.id)
    return f"{tag.name!r} is no longer an alias"


def apply_recommendations(
    conn: psycopg.Connection[Any], user_id: int, suggestion_ids: list[int]
) -> list[Decision]:
    """For the new-tag suggestions the user was shown: confirm those recommended ``project``,
    reject those recommended ``generic``, leave ``unsure`` (and unrated) ones pending. Each id
    is decided in its own savepoint, so one failure does not undo the others."""
    decisions: list[Decision] = []
    for suggestion_id in suggestion_ids:
        try:
            with conn.transaction():
                decisions.append(_apply_one(conn, user_id, suggestion_id))
        except TagEditError as exc:
            decisions.append(Decision(suggestion_id, "failed", str(exc)))
    return decisions


def _apply_one(conn: psycopg.Connection[Any], user_id: int, suggestion_id: int) -> Decision:
    suggestion = pending_new_tag(conn, user_id, suggestion_id)
    if suggestion.recommendation == "project":
        return Decision(suggestion_id, "confirmed", confirm_new_tag(conn, suggestion))
    if suggestion.recommendation == "generic":
        return Decision(
            suggestion_id, "rejected", reject_new_tag(conn, suggestion, "recommended generic")
        )
    why = suggestion.recommendation or "no recommendation"
    return Decision(
        suggestion_id,
        "left",
        f"{suggestion.name!r} left pending ({why}); ask the user, then confirm_new_tag or "
        "reject_new_tag",
    )


Kind = Literal["project", "category", "none"]
"""A registry kind to set (``none``: out of the registry)."""
MAX_DESCRIPTION = 500


def set_registry(
    conn: psycopg.Connection[Any],
    name: str,
    *,
    kind: Kind | None = None,
    paused: bool | None = None,
    description: str | None = None,
) -> str:
    """Set project ``name``'s registry fields (``None``: left as it is; an empty description
    clears it). A tag with a ``kind`` is in the registry the tagger chooses from; a paused
    project is not captured and leaves the brief's Active Projects."""
    tag = tag_named(conn, name)
    if tag.alias_of is not None:
        tags = tag_store.list_project_tags(conn)
        canonical = next((t.name for t in tags if t.id == tag.canonical_id), "?")
        raise TagEditError(f"{tag.name!r} is an alias of {canonical!r}: set {canonical!r} itself")
    if kind is None and paused is None and description is None:
        raise TagEditError("say what to set: kind, paused or description")
    if description is not None and len(description) > MAX_DESCRIPTION:
        raise TagEditError(f"a description is at most {MAX_DESCRIPTION} characters")
    new_kind = tag.kind if kind is None else (None if kind == "none" else kind)
    new_paused = tag.paused if paused is None else paused
    new_description = tag.description if description is None else (description.strip() or None)
    tag_store.set_registry(
        conn, tag.id, kind=new_kind, paused=new_paused, description=new_description
    )
    parts = [f"kind {new_kind or 'none'}", "paused" if new_paused else "active"]
    if new_description:
        parts.append(f"described as {new_description[:60]!r}")
    return f"{tag.name!r}: " + ", ".join(parts)
