"""``manage_project_tags``: the user's answers to the Cold Path's tag questions, recorded by an
agent. The decisions are :mod:`agents_memory.coldpath.tag_decisions` (the ``tags`` CLI and the
console use the same ones); this module checks the arguments and shapes the result."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import psycopg
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from agents_memory.coldpath import tag_decisions
from agents_memory.errors import TagEditError
from agents_memory.recall.state import ServerState
from agents_memory.server.tools.context import ServerContext, state_of
from agents_memory.server.tools.text import Text
from agents_memory.store.coldpath.tag_suggestions import AliasSuggestion, NewTagSuggestion

TagAction = Literal[
    "list_suggestions",
    "confirm_alias",
    "reject_alias",
    "set_alias",
    "unset_alias",
    "list_new_tags",
    "confirm_new_tag",
    "reject_new_tag",
    "apply_recommendations",
    "set_registry",
]


class NewTagOut(BaseModel):
    id: int
    name: str
    uses: int
    recommendation: str | None = None
    rationale: str | None = None
    where: str | None = None
    created_at: datetime


class AliasOut(BaseModel):
    id: int
    source: str
    target: str
    relation: str
    confidence: float | None = None
    rationale: str | None = None
    created_at: datetime


class DecisionOut(BaseModel):
    id: int
    outcome: str
    message: str


@dataclass(frozen=True, slots=True)
class Registry:
    """set_registry's fields (``None``: left as it is)."""

    kind: tag_decisions.Kind | None = None
    paused: bool | None = None
    description: str | None = None


class TagsResult(BaseModel):
    action: str
    ok: bool = True
    message: str | None = None
    new_tags: list[NewTagOut] | None = None
    aliases: list[AliasOut] | None = None
    decisions: list[DecisionOut] | None = None


def run_manage_project_tags(
    state: ServerState,
    *,
    action: TagAction,
    suggestion_id: int | None,
    suggestion_ids: list[int] | None,
    source: str | None,
    target: str | None,
    reason: str | None,
    registry: Registry | None = None,
) -> TagsResult:
    try:
        with state.pool.connection() as conn, conn.transaction():
            if action == "set_registry":
                if not source:
                    raise ToolError("action=set_registry needs `source`: the project tag's name")
                fields = registry or Registry()
                message = tag_decisions.set_registry(
                    conn,
                    source,
                    kind=fields.kind,
                    paused=fields.paused,
                    description=fields.description,
                )
                return TagsResult(action=action, message=message)
            if action in ("list_suggestions", "list_new_tags"):
                questions = tag_decisions.pending(conn, state.user_id)
                return TagsResult(
                    action=action,
                    new_tags=[_new_out(s) for s in questions.new_tags],
                    aliases=[_alias_out(a) for a in questions.aliases]
                    if action == "list_suggestions"
                    else None,
                )
            if action == "apply_recommendations":
                if not suggestion_ids:
                    raise ToolError(
                        "action=apply_recommendations needs `suggestion_ids`: the new-tag ids "
                        "you showed the user (from list_new_tags)"
                    )
                decisions = tag_decisions.apply_recommendations(conn, state.user_id, suggestion_ids)
                return TagsResult(
                    action=action,
                    ok=all(d.outcome != "failed" for d in decisions),
                    decisions=[
                        DecisionOut(id=d.id, outcome=d.outcome, message=d.message)
                        for d in decisions
                    ],
                )
            if action in ("set_alias", "unset_alias"):
                edited = _alias_edit(conn, state, action, source, target)
                return TagsResult(action=action, message=edited)
            return TagsResult(
                action=action, message=_decide(conn, state, action, suggestion_id, reason)
            )
    except TagEditError as exc:
        raise ToolError(f"{exc}") from exc


def _alias_edit(
    conn: psycopg.Connection[Any],
    state: ServerState,
    action: str,
    source: str | None,
    target: str | None,
) -> str:
    if not source:
        raise ToolError(f"action={action} needs `source`: the tag name to change")
    if action == "unset_alias":
        return tag_decisions.unset_alias(conn, source)
    if not target:
        raise ToolError("action=set_alias needs `target`: the project tag `source` belongs to")
    return tag_decisions.set_alias(conn, state.user_id, source, target)


def _decide(
    conn: psycopg.Connection[Any],
    state: ServerState,
    action: str,
    suggestion_id: int | None,
    reason: str | None,
) -> str:
    if suggestion_id is None:
        listing = "list_new_tags" if action.endswith("new_tag") else "list_suggestions"
        raise ToolError(f"action={action} needs `suggestion_id` (the id from action={listing})")
    if action == "confirm_new_tag":
        return tag_decisions.confirm_new_tag(
            conn, tag_decisions.pending_new_tag(conn, state.user_id, suggestion_id)
        )
    if action == "reject_new_tag":
        return tag_decisions.reject_new_tag(
            conn, tag_decisions.pending_new_tag(conn, state.user_id, suggestion_id), reason
        )
    alias = tag_decisions.pending_alias(conn, state.user_id, suggestion_id)
    if action == "confirm_alias":
        return tag_decisions.confirm_alias(conn, state.user_id, alias)
    return tag_decisions.reject_alias(conn, alias, reason)


def _new_out(s: NewTagSuggestion) -> NewTagOut:
    return NewTagOut(
        id=s.id,
        name=s.name,
        uses=s.uses,
        recommendation=s.recommendation,
        rationale=s.rationale,
        where=s.git_remote or s.git_root or (", ".join(s.members) or None),
        created_at=s.created_at,
    )


def _alias_out(a: AliasSuggestion) -> AliasOut:
    return AliasOut(
        id=a.id,
        source=a.source_name,
        target=a.target_name,
        relation=a.relation,
        confidence=a.confidence,
        rationale=a.rationale,
        created_at=a.created_at,
    )


MAX_IDS = 100
"""The most suggestion ids one call takes (a longer list is refused before the tool runs)."""

ANNOTATIONS = ToolAnnotations(
    title="Project tag decisions",
    read_only_hint=False,
    destructive_hint=False,
    idempotent_hint=False,
    open_world_hint=False,
)


def register(server: MCPServer[Any]) -> None:
    @server.tool(annotations=ANNOTATIONS)
    def manage_project_tags(
        ctx: ServerContext,
        action: Annotated[
            TagAction,
            Field(
                description="list_*: questions; confirm_*/reject_*/apply_*: the user's "
                "answers; set_registry: kind/paused/description."
            ),
        ],
        suggestion_id: Annotated[
            int | None,
            Field(description="From list_*."),
        ] = None,
        suggestion_ids: Annotated[
            list[int] | None,
            Field(
                max_length=MAX_IDS,
                description="The new tags the user approved.",
            ),
        ] = None,
        source: Annotated[
            Text | None,
            Field(description="The alias."),
        ] = None,
        target: Annotated[Text | None, Field(description="Its project tag.")] = None,
        reason: Annotated[Text | None, Field(description="Why, in the user's words.")] = None,
        kind: tag_decisions.Kind | None = None,
        paused: bool | None = None,
        description: Text | None = None,
    ) -> TagsResult:
        """The user's answers to the brief's tag questions: ask first, never decide alone."""
        return run_manage_project_tags(
            state_of(ctx),
            action=action,
            suggestion_id=suggestion_id,
            suggestion_ids=suggestion_ids,
            source=source,
            target=target,
            reason=reason,
            registry=Registry(kind, paused, description),
        )
