"""The MCP server: seven typed tools and a compact brief in ``instructions``.

``create_server(settings)`` builds it; the pool, the user and the embedder arrive through the
lifespan; the tools live in :mod:`agents_memory.server.tools`, one module per group. Nothing
here prints to stdout (it is the stdio transport).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import FrameType
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from agents_memory.config import Settings
from agents_memory.errors import AgentsMemoryError
from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.recall.state import ServerState, open_state
from agents_memory.server.definitions import MemoryServer
from agents_memory.server.resources import register_resources
from agents_memory.server.stdio import run_stdio
from agents_memory.server.tools import register_tools

log = logging.getLogger(__name__)

INSTRUCTIONS_HEAD = (
    "Long-term memory shared by all of this user's coding agents. Call `memory_startup` "
    "first in every session, and `search_memory` before assuming past decisions, names or "
    "preferences. "
)
INSTRUCTIONS_BRIEF_ELSEWHERE = (
    "Long-term memory shared by all of this user's coding agents. Its brief is already in "
    "your context (the managed mcp-agents-memory block of your rules file): do not call "
    "`memory_startup` for it. Call `search_memory` before assuming past decisions, names or "
    "preferences."
)
"""The instructions of a server whose client reads the brief from a context file the daemon
keeps fresh (``serve --no-brief``; OpenCode's ``AGENTS.md``): the brief is not sent twice."""


def compact_brief(state: ServerState, platform: str | None = None) -> str:
    """The brief fitted into ``INSTRUCTIONS_MAX_CHARS`` together with the instructions."""
    budget = state.settings.instructions_max_chars - len(INSTRUCTIONS_HEAD) - 2
    with state.pool.connection() as conn:
        return build_brief(
            conn,
            state.settings,
            state.user_id,
            BriefRequest.compact(
                state.settings, platform=platform, cwd=state.cwd, max_chars=budget
            ),
        )


def create_server(
    settings: Settings, state: ServerState | None = None, *, brief: bool = True
) -> MCPServer[Any]:
    """The MCP server. ``state`` may be given (tests); otherwise it is opened here, since the
    instructions must be known before the first client connects. ``brief=False``: the client
    gets the brief from a context file, so the instructions only point at it."""
    state = state or open_state(settings)
    instructions = _instructions(state) if brief else INSTRUCTIONS_BRIEF_ELSEWHERE

    @asynccontextmanager
    async def lifespan(_server: MCPServer[ServerState]) -> AsyncIterator[ServerState]:
        yield state

    server: MCPServer[Any] = MemoryServer(
        "mcp-agents-memory",
        instructions=instructions,
        lifespan=lifespan,
        version=_version(),
    )
    register_tools(server, state)
    register_resources(server, state)
    return server


def _instructions(state: ServerState) -> str:
    try:
        brief = compact_brief(state)
    except Exception:  # the server must start even when the brief cannot be built
        log.exception("could not build the instructions brief")
        brief = ""
    return INSTRUCTIONS_HEAD + ("\n\n" + brief if brief else "")


def _version() -> str:
    from agents_memory import __version__

    return __version__


def serve(
    settings: Settings,
    *,
    http: bool = False,
    host: str = "127.0.0.1",
    port: int = 8765,
    brief: bool = True,
) -> None:
    """Run until the client goes away (stdio) or the process is stopped (HTTP)."""
    state = open_state(settings)
    try:
        server = create_server(settings, state, brief=brief)
        if http:
            from agents_memory.server.http import run_http

            run_http(
                server,
                host=host,
                port=port,
                token=settings.mcp_http_token,
                extra_hosts=settings.mcp_http_allowed_hosts,
            )
        else:
            _end_on_signals(state)
            anyio.run(run_stdio, server)
    except AgentsMemoryError:
        raise
    finally:
        state.close()


def _end_on_signals(state: ServerState) -> None:
    """Ctrl-C (SIGINT) and SIGTERM end the stdio server at once and quietly (exit 130 and 0):
    its stdin reader sits in a thread that no cancellation reaches, so the process would
    otherwise hang (SIGINT) or die without closing the pool (SIGTERM). A closed stdin ends it
    through the transport, as before."""

    def leave(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(Exception):
            state.close()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os._exit(130 if signum == signal.SIGINT else 0)

    signal.signal(signal.SIGINT, leave)
    signal.signal(signal.SIGTERM, leave)
