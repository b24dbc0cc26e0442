"""``manage_project_tags``: the tool's signature; the logic is :mod:`..tags_tool`."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from agents_memory.server import tags_tool
from agents_memory.server.tools.context import ServerContext, state_of
from agents_memory.server.tools.text import Text

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
            tags_tool.TagAction,
            Field(
                description="list_suggestions / list_new_tags: the pending questions; "
                "confirm_new_tag / reject_new_tag and confirm_alias / reject_alias: record the "
                "user's answer (suggestion_id); set_alias / unset_alias: edit aliases by name; "
                "apply_recommendations: for the new-tag ids the user approved, confirm those "
                "recommended 'project', reject 'generic', leave 'unsure'."
            ),
        ],
        suggestion_id: Annotated[
            int | None,
            Field(description="The suggestion's id from list_suggestions or list_new_tags."),
        ] = None,
        suggestion_ids: Annotated[
            list[int] | None,
            Field(
                max_length=MAX_IDS,
                description="apply_recommendations: the new-tag ids the user was shown "
                f"(at most {MAX_IDS}).",
            ),
        ] = None,
        source: Annotated[
            Text | None,
            Field(description="set_alias / unset_alias: the tag that is (or was) an alias."),
        ] = None,
        target: Annotated[
            Text | None, Field(description="set_alias: the project tag it is another name for.")
        ] = None,
        reason: Annotated[
            Text | None, Field(description="reject_*: why, in the user's words (kept).")
        ] = None,
    ) -> tags_tool.TagsResult:
        """Record the user's decisions on project tags: the brief's "Pending tag questions"
        come from here. Ask the user first; never confirm or reject on your own."""
        return tags_tool.manage_project_tags(
            state_of(ctx),
            action=action,
            suggestion_id=suggestion_id,
            suggestion_ids=suggestion_ids,
            source=source,
            target=target,
            reason=reason,
        )
