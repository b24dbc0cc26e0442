"""``task_pin``: the tool's signature; the logic is :mod:`..pins_tool`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import AfterValidator, Field

from agents_memory.adapters import all_platforms
from agents_memory.server import pins_tool
from agents_memory.server.tools.context import ServerContext, client_platform, state_of
from agents_memory.server.tools.text import Text, checked_text

MAX_ITEMS = 200
"""The most items a list or object ``payload`` holds (its text is capped too:
``pins_tool.MAX_PAYLOAD``)."""

ANNOTATIONS = ToolAnnotations(
    title="Task pins between agents",
    read_only_hint=False,
    destructive_hint=False,
    idempotent_hint=False,
    open_world_hint=False,
)


def to_help() -> str:
    """The ``to`` description: the registered clients' names."""
    return (
        f"create: the agent that should do it ({', '.join(all_platforms())}); query: only pins "
        "addressed to this agent."
    )


def register(server: MCPServer[Any]) -> None:
    """``task_pin``. Long because the signature is the tool's contract: ten typed, described
    parameters, one per line."""

    @server.tool(annotations=ANNOTATIONS)
    def task_pin(
        ctx: ServerContext,
        action: Annotated[
            Literal["create", "update", "query"],
            Field(
                description="create: hand a task to another agent; update: report progress on "
                "a pin (yours or addressed to you); query: list pins with their history."
            ),
        ],
        to: Annotated[
            Text | None,
            Field(description=to_help()),
        ] = None,
        title: Annotated[
            Text | None, Field(description="create: one line saying what to do.")
        ] = None,
        payload: Annotated[
            Annotated[dict[str, Any], Field(max_length=MAX_ITEMS)]
            | Annotated[list[Any], Field(max_length=MAX_ITEMS)]
            | Text
            | None,
            AfterValidator(checked_text),  # the strings inside an object or list too
            Field(
                description="create: details the recipient needs (files, commands, context; "
                f"a list or object of at most {MAX_ITEMS} items)."
            ),
        ] = None,
        from_agent: Annotated[
            Text | None,
            Field(description="create: who asks (default: your client's name)."),
        ] = None,
        project: Annotated[
            Text | None,
            Field(
                description="create: the project (default: this directory's project); query: "
                "only this project's pins."
            ),
        ] = None,
        pin: Annotated[
            int | None,
            Field(description="update: the pin's id; query: show just this pin's history."),
        ] = None,
        status: Annotated[
            Literal["pending", "in_progress", "done", "failed"] | None,
            Field(
                description="update: the new status (pending → in_progress → done | failed); "
                "query: only pins currently in this status."
            ),
        ] = None,
        note: Annotated[
            Text | None,
            Field(description="update: what happened (required for done and failed)."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="query: at most this many.")] = 20,
    ) -> pins_tool.PinResult:
        """Hand work to another agent and track it: pins are an append-only log kept out of
        search and of the conversation history. Open pins addressed to an agent appear in its
        brief; when you take one, update it to in_progress, then done or failed with a note."""
        return pins_tool.task_pin(
            state_of(ctx),
            action=action,
            caller=client_platform(ctx),
            to=to,
            title=title,
            from_agent=from_agent,
            payload=payload,
            project=project,
            pin=pin,
            status=status,
            note=note,
            limit=limit,
        )
