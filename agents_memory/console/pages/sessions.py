"""The sessions list (``/sessions``): the newest sessions with their summaries, of one project
(``?project=`` a tag name or a git root) or of all, each linking to its session page."""

from __future__ import annotations

from typing import Any, Final

import psycopg
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agents_memory.console.context import console_from
from agents_memory.console.forms import text
from agents_memory.recall.sessions import project_sessions
from agents_memory.store.session_summaries import SessionSummaryRow

PAGE: Final = 50


async def sessions_page(request: Request) -> Response:
    console = console_from(request)
    project = text(request.query_params, "project")
    page = text(request.query_params, "page")
    number = int(page) if page and page.isdigit() and int(page) < 10_000 else 0

    def load(conn: psycopg.Connection[Any]) -> list[SessionSummaryRow]:
        root = project if project and project.startswith("/") else None
        tag = project if project and not project.startswith("/") else None
        return project_sessions(
            conn, console.user_id, project=tag, git_root=root, limit=PAGE, offset=number * PAGE
        )

    rows = await console.read(load)
    return console.render(
        request,
        "sessions.html",
        sessions=rows,
        project=project,
        page=number,
        more=len(rows) == PAGE,
    )


ROUTES = [Route("/sessions", sessions_page)]
