"""Knowledge and profile: pinned facts with their edit history, the core and sub profile with
theirs; add, edit, unpin, archive (``manage_knowledge``'s own function, called with the
console's server state) and restore (:mod:`agents_memory.ops.restore`)."""

from __future__ import annotations

from typing import Any, Final, Literal

import psycopg
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agents_memory.console.context import console_from
from agents_memory.console.forms import back, change_form, number, text
from agents_memory.errors import AgentsMemoryError, OwnerRequestError
from agents_memory.ops.restore import restore_memory
from agents_memory.recall.knowledge import manage_knowledge
from agents_memory.store.knowledge import get_profiles
from agents_memory.store.owner import console as console_store

SHOWN: Final = 200
Action = Literal["add", "update", "remove"]


async def knowledge_page(request: Request) -> Response:
    console = console_from(request)

    def load(conn: psycopg.Connection[Any]) -> dict[str, Any]:
        pinned = console_store.pinned_facts(conn, console.user_id, SHOWN)
        archived = console_store.archived_memories(
            conn, console.user_id, SHOWN, source="manage_knowledge"
        )
        edits = console_store.memory_edits(conn, [r.id for r in pinned])
        by_memory: dict[int, list[console_store.Edit]] = {}
        for edit in edits:
            by_memory.setdefault(edit.memory_id, []).append(edit)
        return {
            "pinned": pinned,
            "archived": archived,
            "edits": by_memory,
            "profiles": get_profiles(conn, console.user_id),
            "history": console_store.profile_history(conn, console.user_id, SHOWN),
        }

    return console.render(request, "knowledge.html", **(await console.read(load)))


def _knowledge(
    request: Request,
    action: Action,
    target: Literal["memory", "sub_profile"],
    content: str | None,
    memory_id: int | None,
) -> str:
    result = manage_knowledge(
        console_from(request).state,
        action=action,
        target=target,
        content=content,
        memory_id=memory_id,
        platform="console",
        model=None,
    )
    if target == "sub_profile":
        return "sub profile saved" if result.sub_profile else "sub profile cleared"
    verb = {"add": "pinned", "update": "saved", "remove": "archived"}[action]
    return f"fact #{result.id} {verb}" + (f" ({result.note})" if result.note else "")


async def fact(request: Request) -> Response:
    """``action`` = add (``content``), update (``id``, ``content``), remove (``id``: archive)."""
    form = await change_form(request)
    actions: dict[str | None, Action] = {"add": "add", "update": "update", "remove": "remove"}
    action = actions.get(text(form, "action"))
    if action is None:
        return back("/knowledge", failed="unknown action")
    try:
        memory_id = number(form, "id")
        message = await run_in_threadpool(
            _knowledge, request, action, "memory", text(form, "content"), memory_id
        )
    except AgentsMemoryError as exc:
        return back("/knowledge", failed=str(exc))
    return back("/knowledge", notice=message)


async def profile(request: Request) -> Response:
    """The sub profile: ``update`` with ``content``, or ``remove``."""
    form = await change_form(request)
    action: Action = "remove" if text(form, "action") == "remove" else "update"
    try:
        message = await run_in_threadpool(
            _knowledge, request, action, "sub_profile", text(form, "content"), None
        )
    except AgentsMemoryError as exc:
        return back("/knowledge", failed=str(exc))
    return back("/knowledge", notice=message)


async def unpin(request: Request) -> Response:
    console = console_from(request)
    form = await change_form(request)
    try:
        memory_id = number(form, "id")
        if memory_id is None:
            raise OwnerRequestError("id is required")
        done = await console.read(
            lambda conn: console_store.unpin_memory(conn, console.user_id, memory_id)
        )
    except AgentsMemoryError as exc:
        return back("/knowledge", failed=str(exc))
    if not done:
        return back("/knowledge", failed=f"memory {memory_id} is not pinned")
    return back("/knowledge", notice=f"fact #{memory_id} unpinned (still searchable)")


async def restore(request: Request) -> Response:
    """Bring an archived memory back; ``next`` names the page to return to."""
    console = console_from(request)
    form = await change_form(request)
    where = "/forget" if text(form, "next") == "forget" else "/knowledge"
    try:
        memory_id = number(form, "id")
        if memory_id is None:
            raise OwnerRequestError("id is required")
        await console.read(lambda conn: restore_memory(conn, console.user_id, memory_id))
    except AgentsMemoryError as exc:
        return back(where, failed=str(exc))
    return back(where, notice=f"memory {memory_id} restored")


ROUTES = [
    Route("/knowledge", knowledge_page),
    Route("/knowledge/fact", fact, methods=["POST"]),
    Route("/knowledge/profile", profile, methods=["POST"]),
    Route("/knowledge/unpin", unpin, methods=["POST"]),
    Route("/restore", restore, methods=["POST"]),
]
