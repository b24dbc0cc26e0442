"""Status: capture per client, the daemon, the Cold Path, LLM use, the database; pause and
resume (the services of ``memory-capture status`` / ``pause`` / ``resume``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import psycopg
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agents_memory.console.context import console_from
from agents_memory.console.forms import back, change_form, text
from agents_memory.errors import AgentsMemoryError
from agents_memory.ops.pause import (
    capture_pauses,
    describe_pause,
    describe_resume,
    pause_capture,
    resume_capture,
)
from agents_memory.ops.status import capture_status
from agents_memory.store.capture.cursors import list_cursors
from agents_memory.store.owner import console as console_store

_DURATIONS = {"": None, "1h": timedelta(hours=1), "8h": timedelta(hours=8), "1d": timedelta(days=1)}


async def status_page(request: Request) -> Response:
    console = console_from(request)
    report = await run_in_threadpool(
        capture_status, console.settings, console.catalog, console.pid_file
    )
    device = console.settings.device_name

    def extra(conn: psycopg.Connection[Any]) -> dict[str, Any]:
        cursors = list_cursors(conn, device)
        return {
            "db_size": console_store.database_size(conn),
            "sessions": console_store.session_count(conn, console.user_id),
            "pauses": capture_pauses(conn, device),
            "bad_files": [c for c in cursors if c.issues or c.repaired],
        }

    data = await console.read(extra)
    return console.render(
        request,
        "status.html",
        report=report,
        cold=report.coldpath or {},
        durations=list(_DURATIONS),
        platforms=[a.name for a in console.catalog.adapters],
        **data,
    )


async def pause(request: Request) -> Response:
    console = console_from(request)
    form = await change_form(request)
    platform = text(form, "platform")
    duration = _DURATIONS.get(text(form, "for") or "")
    now = datetime.now().astimezone()

    def work(conn: psycopg.Connection[Any]) -> str:
        held = pause_capture(
            conn, console.settings.device_name, platform=platform, duration=duration, now=now
        )
        return describe_pause(held, console.settings.device_name)

    try:
        return back("/", notice=await console.read(work))
    except AgentsMemoryError as exc:
        return back("/", failed=str(exc))


async def resume(request: Request) -> Response:
    console = console_from(request)
    form = await change_form(request)
    platform = text(form, "platform")

    def work(conn: psycopg.Connection[Any]) -> str:
        report = resume_capture(conn, console.settings.device_name, platform=platform)
        return "; ".join(describe_resume(report, platform))

    try:
        return back("/", notice=await console.read(work))
    except AgentsMemoryError as exc:
        return back("/", failed=str(exc))


ROUTES = [
    Route("/", status_page),
    Route("/pause", pause, methods=["POST"]),
    Route("/resume", resume, methods=["POST"]),
]
