"""What every console page shares for the life of one server: the MCP server's state (settings,
pool, owner, embedder), where transcripts and the daemon's pid file are, and the templates."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse

from agents_memory.capture.discovery import Catalog
from agents_memory.clipping import clip
from agents_memory.config import Settings
from agents_memory.console import render
from agents_memory.console.inputs import check_encoded
from agents_memory.ops.units import human_bytes
from agents_memory.recall.state import ServerState

T = TypeVar("T")


def create_templates() -> Environment:
    """Jinja2 with autoescape on every template (transcripts hold HTML and JavaScript)."""
    env = Environment(
        loader=PackageLoader("agents_memory.console", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = render.when
    env.filters["size"] = human_bytes
    env.filters["clip"] = _clip
    env.filters["markdown"] = render.markdown
    return env


def _clip(value: str, room: int) -> str:
    """``value`` clipped to ``room`` characters by the one rule (:mod:`agents_memory.clipping`)."""
    return clip(value, room)[0]


@dataclass(slots=True)
class Console:
    """One console server's shared state."""

    state: ServerState
    catalog: Catalog
    pid_file: Path
    home: Path
    conninfo: str
    """Where the live feed's LISTEN connection goes."""
    templates: Environment = field(default_factory=create_templates)
    work_dir: Path | None = None
    """Where uploaded bundles wait between their dry run and the import."""

    @property
    def settings(self) -> Settings:
        return self.state.settings

    @property
    def user_id(self) -> int:
        return self.state.user_id

    async def read(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """``work`` on a pooled connection, in a worker thread; committed when it returns."""

        def run() -> T:
            with self.state.pool.connection() as conn:
                return work(conn)

        return await run_in_threadpool(run)

    def render(
        self, request: Request, template: str, status_code: int = 200, **values: Any
    ) -> HTMLResponse:
        page = self.templates.get_template(template).render(
            request=request,
            csrf=request.scope.get("csrf", ""),
            notice=request.query_params.get("notice"),
            failed=request.query_params.get("failed"),
            nav=NAV,
            **values,
        )
        return HTMLResponse(page, status_code=status_code)


NAV = (
    ("/", "Status", "s"),
    ("/timeline", "Timeline", "t"),
    ("/search", "Search", "f"),
    ("/sessions", "Sessions", "n"),
    ("/projects", "Projects", "p"),
    ("/knowledge", "Knowledge", "k"),
    ("/brief", "Brief", "b"),
    ("/forget", "Forget & archive", "x"),
    ("/transfer", "Export / import", "e"),
    ("/team", "Team", "m"),
)
"""Each page: its path, its name and its access key."""


def console_from(request: Request) -> Console:
    """The console serving ``request``, once its query string passes the input rule
    (:mod:`agents_memory.console.inputs`; a :class:`BadInput` otherwise)."""
    check_encoded(request.scope.get("query_string", b""))
    console = request.app.state.console
    assert isinstance(console, Console)
    return console
