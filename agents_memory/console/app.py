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
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from agents_memory.console.context import Console
from agents_memory.console.live import LiveFeed
from agents_memory.console.pages import (
    brief,
    forget,
    knowledge,
    projects,
    search,
    status,
    timeline,
    transfer,
)
from agents_memory.console.security import Guard, GuardMiddleware
from agents_memory.errors import AgentsMemoryError
from agents_memory.masking import mask

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"


def routes() -> list[BaseRoute]:
    pages = (status, timeline, search, projects, knowledge, brief, forget, transfer)
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
        return PlainTextResponse(mask(f"error: {exc}", secrets_), status_code=400)

    app = Starlette(
        routes=routes(),
        middleware=[Middleware(GuardMiddleware, guard=guard)],
        lifespan=lifespan,
        exception_handlers={HTTPException: refused, AgentsMemoryError: failed},
    )
    app.state.console = console
    return app


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
