"""Timeline: every agent's turns, newest first, filtered, in keyset pages; new turns arrive
live over server-sent events while the page is open."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any, Final
from urllib.parse import urlencode

import psycopg
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from agents_memory.adapters import platform_filter
from agents_memory.console.context import Console, console_from
from agents_memory.console.forms import day_bound, query_string, text
from agents_memory.console.live import LiveFeed
from agents_memory.errors import AgentsMemoryError
from agents_memory.recall.actions import KINDS, actions_shown, turns_that_acted
from agents_memory.store.owner import console as console_store
from agents_memory.store.owner.console import ConsoleTurn, Cursor, TimelineFilters
from agents_memory.store.owner.known_values import KnownValues, known_values
from agents_memory.store.projects import resolve_project
from agents_memory.store.search.action_text import FoundAction

PAGE_SIZE: Final = 50
FILTERS: Final = (
    "project",
    "platform",
    "model",
    "device",
    "role",
    "since",
    "until",
    "actions",
    "kind",
)
"""``actions=show`` lists each turn's actions under it; ``kind`` keeps the turns that made an
action of that kind (and lists those)."""
_KEEPALIVE_SECONDS: Final = 15.0
Acted = dict[int, tuple[FoundAction, ...]]


def timeline_filters(values: Mapping[str, Any], now: datetime) -> TimelineFilters:
    """The filters as the form gives them, a client by its full or short name; the project
    is checked on the connection (:func:`checked_project`)."""
    return TimelineFilters(
        project=text(values, "project"),
        platform=platform_filter(text(values, "platform")),
        model=text(values, "model"),
        device=text(values, "device"),
        role=text(values, "role"),
        since=day_bound(text(values, "since"), now, start=True),
        until=day_bound(text(values, "until"), now, start=False),
    )


def _cursor(value: str | None) -> Cursor | None:
    """``<iso time>_<id>`` (what the "older" link carries)."""
    if not value or "_" not in value:
        return None
    when, _, ident = value.rpartition("_")
    try:
        return Cursor(datetime.fromisoformat(when), int(ident))
    except ValueError:
        return None


async def timeline(request: Request) -> Response:
    console = console_from(request)
    params = request.query_params
    try:
        filters = timeline_filters(params, datetime.now().astimezone())
    except AgentsMemoryError as exc:
        return console.render(request, "timeline.html", status_code=400, error=str(exc), **_blank())
    before = _cursor(text(params, "before"))
    kind = text(params, "kind")
    if kind is not None and kind not in KINDS:
        error = f"kind must be one of {', '.join(KINDS)}"
        return console.render(request, "timeline.html", status_code=400, error=error, **_blank())
    shown = bool(kind) or text(params, "actions") == "show"

    def page(
        conn: psycopg.Connection[Any],
    ) -> tuple[list[ConsoleTurn], int, Acted, KnownValues]:
        wanted = filters
        if filters.project:
            resolve_project(conn, filters.project)  # a misspelt one is named, not empty
        if kind:
            wanted = replace(filters, ids=turns_that_acted(conn, console.user_id, kind))
        rows = console_store.timeline_page(
            conn, console.user_id, wanted, before=before, limit=PAGE_SIZE
        )
        acted = actions_shown(conn, console.user_id, [r.id for r in rows], kind) if shown else {}
        return rows, console_store.newest_id(conn), acted, known_values(conn, console.user_id)

    try:
        rows, newest, acted, known = await console.read(page)
    except AgentsMemoryError as exc:
        return console.render(request, "timeline.html", status_code=400, error=str(exc), **_blank())
    kept = query_string(params, *FILTERS)
    older = None
    if len(rows) == PAGE_SIZE:
        last = rows[-1]
        mark = f"{last.message_at.isoformat()}_{last.id}"
        older = f"/timeline?{kept + '&' if kept else ''}{urlencode({'before': mark})}"
    live = None if before or kind else f"/live?{kept + '&' if kept else ''}after={newest}"
    return console.render(
        request,
        "timeline.html",
        turns=rows,
        values={n: params.get(n, "") for n in FILTERS},
        platforms=[a.name for a in console.catalog.adapters],
        kinds=KINDS,
        actions=acted,
        older=older,
        live=live,
        error=None,
        known=known,
    )


def _blank() -> dict[str, Any]:
    return {
        "turns": [],
        "values": {},
        "platforms": [],
        "kinds": KINDS,
        "older": None,
        "live": None,
        "known": KnownValues([], [], []),
    }


def _event(name: str, data: str, ident: int) -> str:
    lines = "".join(f"data: {line}\n" for line in data.splitlines() or [""])
    return f"event: {name}\nid: {ident}\n{lines}\n"


async def live(request: Request) -> Response:
    """Server-sent events: ``turns`` with the rendered rows of every new matching turn."""
    console = console_from(request)
    feed = request.app.state.feed
    assert isinstance(feed, LiveFeed)
    try:
        filters = timeline_filters(request.query_params, datetime.now().astimezone())
        after = int(request.query_params.get("after", "0"))
    except (AgentsMemoryError, ValueError):
        return Response("bad filters", status_code=400)
    return StreamingResponse(
        _stream(console, feed, filters, after),
        media_type="text/event-stream",
        headers={"x-accel-buffering": "no"},
    )


def _newer(
    conn: psycopg.Connection[Any], *, user_id: int, filters: TimelineFilters, after_id: int
) -> list[ConsoleTurn]:
    return console_store.turns_after(conn, user_id, filters, after_id=after_id, limit=PAGE_SIZE)


async def _stream(
    console: Console, feed: LiveFeed, filters: TimelineFilters, after: int
) -> AsyncIterator[str]:
    queue = feed.subscribe()
    rows_template = console.templates.get_template("_turns.html")
    try:
        yield "retry: 2000\n\n"
        while True:
            rows = await console.read(
                partial(_newer, user_id=console.user_id, filters=filters, after_id=after)
            )
            if rows:
                after = max(row.id for row in rows)
                yield _event("turns", rows_template.render(turns=rows), after)
            try:
                await asyncio.wait_for(queue.get(), timeout=_KEEPALIVE_SECONDS)
            except TimeoutError:
                yield ": keepalive\n\n"
    finally:
        feed.unsubscribe(queue)


ROUTES = [Route("/timeline", timeline), Route("/live", live)]
