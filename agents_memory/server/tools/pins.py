"""``task_pin``: hand-offs between agents, as an append-only log
(:mod:`agents_memory.store.recall.pins`).

``create`` addresses a task to another agent; ``update`` moves it pending → in_progress →
done | failed with a note; ``query`` shows each pin once (its current state and history).
Errors are :class:`ToolError` messages that say what to call instead.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import AfterValidator, BaseModel, Field

from agents_memory.adapters import all_platforms
from agents_memory.gitinfo import git_info
from agents_memory.recall.state import ServerState
from agents_memory.server.tools.context import ServerContext, client_platform, state_of
from agents_memory.server.tools.text import Text, checked_text
from agents_memory.store import team
from agents_memory.store.recall import briefdata, pins
from agents_memory.store.recall.pins import NewPin, PinEvent, PinStatus

MAX_TITLE = 300
MAX_NOTE = 4000
MAX_PAYLOAD = 20_000

NEXT_STATUSES: dict[str, tuple[str, ...]] = {
    "pending": ("in_progress", "done", "failed"),
    "in_progress": ("in_progress", "done", "failed"),
    "done": (),
    "failed": (),
}


class PinHistoryItem(BaseModel):
    event: str
    status: str
    note: str | None = None
    by: str | None = None
    at: datetime


class PinOut(BaseModel):
    pin: int
    title: str
    status: str
    to: str
    from_agent: str | None = None
    project: str | None = None
    payload: Any = None
    created_at: datetime
    updated_at: datetime
    note: str | None = None
    history: list[PinHistoryItem] = []


class PinResult(BaseModel):
    action: str
    count: int = 1
    pins: list[PinOut] = []
    note: str | None = None


def run_task_pin(
    state: ServerState,
    *,
    action: Literal["create", "update", "query"],
    caller: str | None,
    to: str | None = None,
    title: str | None = None,
    from_agent: str | None = None,
    payload: Any = None,
    project: str | None = None,
    pin: int | None = None,
    status: PinStatus | None = None,
    note: str | None = None,
    limit: int = 20,
) -> PinResult:
    if action == "create":
        return _create(state, caller, to, title, from_agent, payload, project)
    if action == "update":
        return _update(state, caller, pin, status, note)
    return _query(state, to, status, project, pin, limit)


def _create(
    state: ServerState,
    caller: str | None,
    to: str | None,
    title: str | None,
    from_agent: str | None,
    payload: Any,
    project: str | None,
) -> PinResult:
    if not to or not to.strip():
        raise ToolError(
            "action=create needs `to`: the agent that should do the task, e.g. codex-cli, "
            "claude-code or gemini-cli"
        )
    if not title or not title.strip():
        raise ToolError("action=create needs `title`: one line saying what to do")
    if len(title) > MAX_TITLE:
        raise ToolError(
            f"title is {len(title)} characters; keep it under {MAX_TITLE} and put details in "
            "`payload`"
        )
    if payload is not None and len(str(payload)) > MAX_PAYLOAD:
        raise ToolError(f"payload is too large (limit {MAX_PAYLOAD} characters); summarise it")
    with state.pool.connection() as conn:
        agent, person = _recipient(conn, state.user_id, to.strip())
        where = project or _current_project(state, conn)
        if person is not None and not (
            where and team.project_shared(conn, where, state.user_id, person)
        ):
            raise ToolError(
                f"a pin for a teammate goes in a project you or they share with the team "
                f"(`mcp-agents-memory team share PROJECT`); {where or 'no project'} is not shared"
            )
        created = pins.create_pin(
            conn,
            state.user_id,
            NewPin(
                to_agent=agent,
                title=" ".join(title.split()),
                from_agent=from_agent or caller,
                project=where,
                payload=payload,
                device_name=state.settings.device_name,
                to_user_id=person,
            ),
        )
    whom = created.to_agent if person is None else f"{to.strip()} (a teammate)"
    return PinResult(
        action="create",
        pins=[_pin_out([created])],
        note=f"pin {created.pin_id} is waiting for {whom}; it appears in that "
        "agent's brief until it is marked done or failed",
    )


def _recipient(conn: Any, user_id: int, to: str) -> tuple[str, int | None]:
    """``to`` as (agent, teammate): an agent of one's own (``codex-cli``), or a teammate's
    person, by role or name, with one of their agents (``bob/codex-cli``) or any (``bob``)."""
    name, _, agent = to.partition("/")
    person = team.person_named(conn, name.strip()) if name.strip() else None
    if person is None or person == user_id:
        if agent:
            raise ToolError(f"no teammate {name!r}: `to` is an agent, or teammate/agent")
        return to, None
    return agent.strip() or pins.ANY_AGENT, person


def _update(
    state: ServerState,
    caller: str | None,
    pin_id: int | None,
    status: PinStatus | None,
    note: str | None,
) -> PinResult:
    if pin_id is None or status is None:
        raise ToolError(
            "action=update needs `pin` (its id from task_pin query or the brief) and `status` "
            "(in_progress, done or failed)"
        )
    if note is not None and len(note) > MAX_NOTE:
        raise ToolError(f"note is {len(note)} characters; keep it under {MAX_NOTE}")
    with state.pool.connection() as conn, conn.transaction():
        pins.lock_pin(conn, state.user_id, pin_id)
        events = pins.history(conn, state.user_id, pin_id)
        if not events:
            raise ToolError(f"no task pin {pin_id}; list pins with task_pin action=query")
        now = events[-1].status
        if status not in NEXT_STATUSES[now]:
            allowed = ", ".join(NEXT_STATUSES[now])
            raise ToolError(
                f"pin {pin_id} is {now}; it can move to {allowed}"
                if allowed
                else f"pin {pin_id} is already {now} (final); create a new pin for new work"
            )
        if status in ("done", "failed") and not (note and note.strip()):
            raise ToolError(f"status={status} needs a `note` saying what was done or why it failed")
        added = pins.append_update(
            conn,
            state.user_id,
            pin_id,
            status=status,
            note=note,
            by_agent=caller,
            device_name=state.settings.device_name,
        )
    return PinResult(action="update", pins=[_pin_out([*events, added])])


def _query(
    state: ServerState,
    to: str | None,
    status: PinStatus | None,
    project: str | None,
    pin_id: int | None,
    limit: int,
) -> PinResult:
    with state.pool.connection() as conn:
        if pin_id is not None:
            events = pins.history(conn, state.user_id, pin_id)
            if not events:
                raise ToolError(f"no task pin {pin_id}; query without `pin` to list them")
            return PinResult(action="query", pins=[_pin_out(events)])
        latest = pins.current(
            conn,
            state.user_id,
            to_agent=to,
            statuses=(status,) if status else None,
            project=project,
            limit=limit,
        )
        found = [_pin_out(pins.history(conn, state.user_id, p.pin_id)) for p in latest]
    return PinResult(
        action="query",
        count=len(found),
        pins=found,
        note=None if found else "no pins match; drop a filter to see more",
    )


def _pin_out(events: list[PinEvent]) -> PinOut:
    """One pin collapsed from its events (oldest first)."""
    first, last = events[0], events[-1]
    return PinOut(
        pin=first.pin_id,
        title=first.title,
        status=last.status,
        to=first.to_agent,
        from_agent=first.from_agent,
        project=first.project,
        payload=first.payload,
        created_at=first.created_at,
        updated_at=last.created_at,
        note=last.note,
        history=[
            PinHistoryItem(
                event=e.event, status=e.status, note=e.note, by=e.from_agent, at=e.created_at
            )
            for e in events
        ],
    )


def _current_project(state: ServerState, conn: Any) -> str | None:
    root = git_info(state.cwd).root if state.cwd else None
    if not root:
        return None
    return briefdata.project_tag_for_root(conn, root) or root.rsplit("/", 1)[-1]


MAX_ITEMS = 200
"""The most items a list or object ``payload`` holds (its text is capped too:
``MAX_PAYLOAD``)."""

ANNOTATIONS = ToolAnnotations(
    title="Task pins between agents",
    read_only_hint=False,
    destructive_hint=False,
    idempotent_hint=False,
    open_world_hint=False,
)


def to_help() -> str:
    """The ``to`` description: the registered clients' names."""
    return f"create: {all_platforms()[1]}, person/agent."


def register(server: MCPServer[Any]) -> None:
    """``task_pin``. Long because the signature is the tool's contract: ten typed, described
    parameters, one per line."""

    @server.tool(annotations=ANNOTATIONS)
    def task_pin(
        ctx: ServerContext,
        action: Annotated[
            Literal["create", "update", "query"],
            Field(description="update: your progress."),
        ],
        to: Annotated[
            Text | None,
            Field(description=to_help()),
        ] = None,
        title: Annotated[Text | None, Field(description="One line.")] = None,
        payload: Annotated[
            Annotated[dict[str, Any], Field(max_length=MAX_ITEMS)]
            | Annotated[list[Any], Field(max_length=MAX_ITEMS)]
            | Text
            | None,
            AfterValidator(checked_text),  # the strings inside an object or list too
            Field(description="create: files, commands, context."),
        ] = None,
        from_agent: Annotated[
            Text | None,
            Field(description="Default: you."),
        ] = None,
        project: Annotated[
            Text | None,
            Field(description="Default: here."),
        ] = None,
        pin: Annotated[
            int | None,
            Field(description="update: its id."),
        ] = None,
        status: Annotated[
            Literal["pending", "in_progress", "done", "failed"] | None,
            Field(description="update: the new one."),
        ] = None,
        note: Annotated[
            Text | None,
            Field(description="update: what happened."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> PinResult:
        """Hand work to an agent. Pins to you are in your brief: set in_progress, then
        done/failed with a note."""
        return run_task_pin(
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
