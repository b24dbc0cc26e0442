"""The console's ASGI application and its server: routes from every page module, the static
files shipped in the package, the guard in front, the live feed for the life of the app."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

from psycopg.errors import InsufficientPrivilege
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from agents_memory.console.context import Console
from agents_memory.console.live import LiveFeed
from agents_memory.console.pages import (
    brief,
    forget,
    knowledge,
    projects,
    search,
    sessions,
    status,
    team,
    timeline,
    transfer,
)
from agents_memory.console.security import Guard, GuardMiddleware
from agents_memory.errors import AgentsMemoryError, first_line
from agents_memory.masking import mask

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"


def routes() -> list[BaseRoute]:
    pages = (status, timeline, search, sessions, projects, knowledge, brief, forget, transfer, team)
    found: list[BaseRoute] = [route for page in pages for route in page.ROUTES]
    found.append(Mount("/static", app=StaticFiles(directory=STATIC), name="static"))
    return found


def create_app(console: Console, guard: Guard) -> Starlette:
    """The console for ``console``'s pool, guarded by ``guard`` (its port and login token)."""
    secrets_ = console.settings.secrets()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        feed = LiveFeed(console.conninfo)
        feed.start(asyncio.get_running_loop())
        app.state.feed = feed
        try:
            yield
        finally:
            feed.stop()
            if console.work_dir is not None:
                shutil.rmtree(console.work_dir, ignore_errors=True)

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return PlainTextResponse(str(exc.detail), status_code=exc.status_code)

    async def failed(request: Request, exc: Exception) -> Response:
        message = mask(str(exc), secrets_)
        shown = await page_with_error(request, message)
        return shown or PlainTextResponse(f"error: {message}", status_code=400)

    async def denied(request: Request, exc: Exception) -> Response:
        """A table or action the connected role may not use (a team member's console on
        what only the team's admin reads or changes): a line saying so, never a traceback."""
        message = "your database role may not do this (the team's admin may): " + mask(
            first_line(exc), secrets_
        )
        if request.method != "GET":
            shown = await page_with_error(request, message)
            if shown is not None:
                return shown
        return console.render(request, "denied.html", status_code=403, message=message)

    app = Starlette(
        routes=routes(),
        middleware=[Middleware(GuardMiddleware, guard=guard)],
        lifespan=lifespan,
        exception_handlers={
            HTTPException: refused,
            AgentsMemoryError: failed,
            InsufficientPrivilege: denied,
        },
    )
    app.state.console = console
    return app


_FORM_PAGE: Final[dict[str, str | None]] = {
    "/export": "/transfer",
    "/import": "/transfer",
    "/session": "/search",
    "/turn": "/search",
    "/pause": "/",
    "/resume": "/",
    "/restore": "/knowledge",
    "/live": None,
}
"""Requests whose form is on another page (``None``: no page, a plain 400); any other
request's form is on the page of its first path segment (``/knowledge/fact``: ``/knowledge``)."""


_SHOWN_CHARS: Final = 1000
"""An error longer than this is cut on the page (it must pass the input rule itself)."""


def form_page(path: str) -> str | None:
    first = "/" + path.split("/")[1]
    return _FORM_PAGE.get(first, first)


async def page_with_error(request: Request, message: str) -> Response | None:
    """The page holding the form of ``request``, shown with ``message`` as its error (HTTP
    400); ``None`` when there is no such page or it cannot be shown either."""
    path = form_page(request.url.path)
    endpoint = next(
        (
            route.endpoint
            for route in request.app.routes
            if isinstance(route, Route) and route.path == path and "GET" in (route.methods or ())
        ),
        None,
    )
    if endpoint is None:
        return None
    scope = {
        **request.scope,
        "method": "GET",
        "path": path,
        "query_string": urlencode({"failed": message[:_SHOWN_CHARS]}).encode(),
        "path_params": {},
    }
    try:
        response = await endpoint(Request(scope, request.receive))
    except Exception as exc:  # the error page must not fail in turn
        log.warning("cannot show %s with its error: %s", path, first_line(exc))
        return None
    assert isinstance(response, Response)
    response.status_code = 400
    return response


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 only (``port`` 0: any free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve(app: Any, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until interrupted."""
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        server_header=False,
    )
    uvicorn.Server(config).run(sockets=[sock])
