"""``manage_knowledge`` and ``save_message``: the tools' signatures over the service in
:mod:`agents_memory.recall.knowledge` (which the console calls too); its refusals become the
model's :class:`ToolError`."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from agents_memory.adapters import all_adapters, platform_for_client
from agents_memory.errors import KnowledgeError
from agents_memory.recall import knowledge as service
from agents_memory.server.tools.context import ServerContext, client_platform, state_of
from agents_memory.server.tools.text import Text

# Agents never destroy memory: update keeps the old text in history, remove archives.
KNOWLEDGE_ANNOTATIONS = ToolAnnotations(
    title="Pin, correct or archive a memory",
    read_only_hint=False,
    destructive_hint=False,
    idempotent_hint=False,
    open_world_hint=False,
)
SAVE_ANNOTATIONS = ToolAnnotations(
    title="Store a conversation turn",
    read_only_hint=False,
    destructive_hint=False,
    idempotent_hint=False,
    open_world_hint=False,
)


def _and_list(words: Sequence[str]) -> str:
    if len(words) < 2:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def save_message_help(captured: Collection[str]) -> str:
    """``save_message``'s description, naming the clients captured automatically."""
    shown = [a.display_name for a in all_adapters() if a.name in captured]
    are = f"{_and_list(shown)} {'is' if len(shown) == 1 else 'are'}" if shown else "none is"
    return f"Store a turn; only for a client not captured ({are})."


def register(server: MCPServer[Any], *, captured: Collection[str]) -> None:
    """``manage_knowledge`` and ``save_message``."""
    _register_manage_knowledge(server)
    _register_save_message(server, captured)


def _register_manage_knowledge(server: MCPServer[Any]) -> None:
    @server.tool(annotations=KNOWLEDGE_ANNOTATIONS)
    def manage_knowledge(
        ctx: ServerContext,
        action: Annotated[
            Literal["add", "update", "remove"],
            Field(description="remove: archived, recoverable."),
        ],
        target: Annotated[
            Literal["memory", "sub_profile"],
            Field(description="sub_profile: current work."),
        ] = "memory",
        content: Annotated[Text | None, Field(description="The fact, standalone.")] = None,
        memory_id: Annotated[
            int | None,
            Field(description="update/remove: its id."),
        ] = None,
        agent_model: Text | None = None,
        slot: Annotated[
            Text | None,
            Field(description="A name (db.port): replaces its old value."),
        ] = None,
        expires: Annotated[
            Text | None,
            Field(description="7d, 12h or a date."),
        ] = None,
        # seed A's fields: accepted (a client moving from it sends them), not advertised
        agent_platform: SkipJsonSchema[Text | None] = None,
        subagent: SkipJsonSchema[bool] = False,
        subagent_model: SkipJsonSchema[Text | None] = None,
        subagent_role: SkipJsonSchema[Text | None] = None,
    ) -> service.KnowledgeResult:
        """Pin a durable fact or decision (always in the brief), correct it or archive
        it."""
        try:
            return service.manage_knowledge(
                state_of(ctx),
                action=action,
                target=target,
                content=content,
                memory_id=memory_id,
                platform=platform_for_client(agent_platform) or client_platform(ctx),
                model=agent_model,
                slot=slot,
                expires=expires,
                speaker=service.Speaker(subagent, subagent_model, subagent_role),
            )
        except KnowledgeError as exc:
            raise ToolError(str(exc)) from exc


def _register_save_message(server: MCPServer[Any], captured: Collection[str]) -> None:
    @server.tool(description=save_message_help(captured), annotations=SAVE_ANNOTATIONS)
    def save_message(
        ctx: ServerContext,
        role: Literal["user", "assistant"],
        message: Text,
        agent_model: Text | None = None,
        agent_platform: Text | None = None,
        session_id: Text | None = None,
        subagent: bool = False,
        subagent_model: Text | None = None,
        subagent_role: Text | None = None,
    ) -> service.SaveResult:
        platform = platform_for_client(agent_platform) or client_platform(ctx)
        try:
            return service.save_message(
                state_of(ctx),
                role=role,
                message=message,
                platform=platform,
                model=agent_model,
                session_id=session_id,
                subagent=subagent,
                subagent_model=subagent_model,
                subagent_role=subagent_role,
            )
        except KnowledgeError as exc:
            raise ToolError(str(exc)) from exc
