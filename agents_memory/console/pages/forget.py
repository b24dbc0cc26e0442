"""Forget and trash: forget by filter, the dry-run count and sample first (then the same
selection, re-planned, is forgotten only when its count has not changed); archived memories
with restore. The services are :mod:`agents_memory.ops.forget` and ``ops.restore``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

import psycopg
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agents_memory.console.context import Console, console_from
from agents_memory.console.forms import back, change_form, day_bound, number, text
from agents_memory.errors import AgentsMemoryError
from agents_memory.ops.forget import DEFAULT_MIN_SCORE, ForgetPlan, apply_forget, plan_forget
from agents_memory.ops.forget import describe as describe_forget
from agents_memory.store.owner import console as console_store
from agents_memory.store.owner.forget import Selection

FIELDS: Final = ("id", "session", "project", "platform", "device", "since", "until", "match")
TRASH_SHOWN: Final = 100


def selection_of(values: Mapping[str, Any], now: datetime) -> Selection:
    memory_id = number(values, "id")
    return Selection(
        ids=(memory_id,) if memory_id is not None else (),
        session=text(values, "session"),
        project=text(values, "project"),
        platform=text(values, "platform"),
        device=text(values, "device"),
        since=day_bound(text(values, "since"), now, start=True),
        until=day_bound(text(values, "until"), now, start=False),
    )


def _min_score(values: Mapping[str, Any]) -> float:
    value = text(values, "min_score")
    try:
        return min(1.0, max(0.0, float(value))) if value else DEFAULT_MIN_SCORE
    except ValueError:
        return DEFAULT_MIN_SCORE


def _plan(console: Console, values: Mapping[str, Any]) -> ForgetPlan:
    now = datetime.now().astimezone()
    selection = selection_of(values, now)
    with console.state.pool.connection() as conn:
        return plan_forget(
            conn,
            console.user_id,
            console.settings,
            selection,
            match=text(values, "match"),
            min_score=_min_score(values),
            now=now,
        )


async def forget_page(request: Request) -> Response:
    console = console_from(request)
    params = request.query_params
    values = {name: params.get(name, "") for name in (*FIELDS, "min_score")}
    plan, error = None, None
    if any(text(params, name) for name in FIELDS):
        try:
            plan = await run_in_threadpool(_plan, console, params)
        except AgentsMemoryError as exc:
            error = str(exc)
    trash = await console.read(
        lambda conn: console_store.archived_memories(conn, console.user_id, TRASH_SHOWN)
    )
    return console.render(
        request,
        "forget.html",
        status_code=400 if error else 200,
        values=values,
        plan=plan,
        error=error,
        trash=trash,
        default_min_score=DEFAULT_MIN_SCORE,
    )


async def forget(request: Request) -> Response:
    """Forget the selection, re-planned now, when it still names ``expected`` rows."""
    console = console_from(request)
    form = await change_form(request)
    try:
        expected = number(form, "expected")
        plan = await run_in_threadpool(_plan, console, form)
        if plan.count != expected:
            return back(
                "/forget",
                failed=f"the selection now names {plan.count} memories, not {expected}: "
                "check again",
                **{name: text(form, name) for name in FIELDS},
            )

        def apply(conn: psycopg.Connection[Any]) -> str:
            report = apply_forget(conn, console.user_id, console.settings, plan)
            return "; ".join(describe_forget(report))

        message = await console.read(apply)
    except AgentsMemoryError as exc:
        return back("/forget", failed=str(exc))
    return back("/forget", notice=message)


ROUTES = [Route("/forget", forget_page), Route("/forget", forget, methods=["POST"])]
