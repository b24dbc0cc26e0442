"""The MCP server: four typed tools and a compact brief in ``instructions``.

``create_server(settings)`` builds it; the pool, the user and the embedder arrive through the
lifespan. Nothing here prints to stdout (it is the stdio transport).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from agents_memory.adapters import platform_for_client
from agents_memory.config import Settings
from agents_memory.errors import AgentsMemoryError
from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.server import knowledge_tools, search_tool
from agents_memory.server.state import ServerState, open_state
from agents_memory.store.knowledge import latest_model

log = logging.getLogger(__name__)

INSTRUCTIONS_HEAD = (
    "Long-term memory shared by all of this user's coding agents. Call `memory_startup` "
    "first in every session, and `search_memory` before assuming past decisions, names or "
    "preferences. "
)

ServerContext = Context[ServerState, Any]


def _client_platform(ctx: ServerContext) -> str | None:
    try:
        params = ctx.session.client_params
    except (AttributeError, ValueError):
        return None
    info = getattr(params, "client_info", None)
    return platform_for_client(getattr(info, "name", None))


def _state(ctx: ServerContext) -> ServerState:
    state = ctx.request_context.lifespan_context
    assert isinstance(state, ServerState)
    return state


def compact_brief(state: ServerState, platform: str | None = None) -> str:
    """The brief fitted into ``INSTRUCTIONS_MAX_CHARS`` together with the instructions."""
    budget = state.settings.instructions_max_chars - len(INSTRUCTIONS_HEAD) - 2
    with state.pool.connection() as conn:
        return build_brief(
            conn,
            state.settings,
            state.user_id,
            BriefRequest(
                platform=platform,
                model=None,
                device=state.settings.device_name,
                cwd=state.cwd,
                mode="compact",
                max_chars=budget,
                same_agent_only=platform is not None,
            ),
        )


def create_server(settings: Settings, state: ServerState | None = None) -> MCPServer[Any]:
    """The MCP server. ``state`` may be given (tests); otherwise it is opened here, since the
    instructions must be known before the first client connects."""
    state = state or open_state(settings)
    try:
        brief = compact_brief(state)
    except Exception:  # the server must start even when the brief cannot be built
        log.exception("could not build the instructions brief")
        brief = ""
    instructions = INSTRUCTIONS_HEAD + ("\n\n" + brief if brief else "")

    @asynccontextmanager
    async def lifespan(_server: MCPServer[ServerState]) -> AsyncIterator[ServerState]:
        yield state

    server: MCPServer[Any] = MCPServer(
        "mcp-agents-memory",
        instructions=instructions,
        lifespan=lifespan,
        version=_version(),
    )
    _register(server)
    return server


def _version() -> str:
    from agents_memory import __version__

    return __version__


def _register(server: MCPServer[Any]) -> None:
    @server.tool()
    def memory_startup(
        ctx: ServerContext,
        short_term_days: Annotated[
            int | None,
            Field(
                ge=1,
                le=30,
                description="Days of recent raw turns to include (default: the "
                "configured SHORT_TERM_DAYS, usually 3).",
            ),
        ] = None,
        agent_platform_filter: Annotated[
            bool,
            Field(
                description="true (default): recent turns of this client and model first; "
                "false: every agent's recent turns."
            ),
        ] = True,
        agent_model: Annotated[
            str | None,
            Field(
                description="Your model id, if you know it (e.g. claude-opus-4-6); picks your own "
                "recent turns."
            ),
        ] = None,
    ) -> str:
        """Your memory brief for this session: the user's profile, pinned facts, active
        projects, recent turns and open questions. Call it once at the start of a session."""
        state = _state(ctx)
        platform = _client_platform(ctx)
        with state.pool.connection() as conn:
            model = agent_model or (
                latest_model(conn, state.user_id, platform, None) if platform else None
            )
            return build_brief(
                conn,
                state.settings,
                state.user_id,
                BriefRequest(
                    platform=platform,
                    model=model,
                    device=state.settings.device_name,
                    cwd=state.cwd,
                    mode="full",
                    max_chars=max(8000, int(state.settings.short_term_token_limit * 1.7) + 4000),
                    short_term_days=short_term_days,
                    same_agent_only=agent_platform_filter,
                ),
            )

    @server.tool()
    def search_memory(
        ctx: ServerContext,
        query: Annotated[
            str | None,
            Field(
                description="What to look for, in any language. Omit to list the newest memories."
            ),
        ] = None,
        p_tag: Annotated[
            str | None,
            Field(description="Only this project tag (aliases resolve to their project)."),
        ] = None,
        date_range: Annotated[
            str | None,
            Field(
                description="today, yesterday, last_week, last_month, N_days_ago, YYYY-MM-DD "
                "(since that day) or a range A..B such as 2026-01-01..2026-02-01."
            ),
        ] = None,
        role: Annotated[
            Literal["user", "assistant"] | None,
            Field(description="Only what the user said, or only what agents answered."),
        ] = None,
        agent_platform: Annotated[
            str | None,
            Field(
                description="Only this client (claude-code, codex-cli, gemini-cli, grok, "
                'antigravity, …); "*" or omitted = all.'
            ),
        ] = None,
        device_scope: Annotated[
            Literal["global", "local"],
            Field(
                description="global (default): every machine; local: this machine only "
                "(pinned memories always included)."
            ),
        ] = "global",
        limit: Annotated[int, Field(ge=1, le=50, description="How many results (1-50).")] = 10,
        include_archived: Annotated[
            bool, Field(description="Also search archived (older or removed) memories.")
        ] = False,
    ) -> search_tool.SearchOutput:
        """Search the shared memory of all agents: full-text and meaning, newest first when
        equally relevant. Use it before assuming what was decided, named or preferred."""
        return search_tool.run_search(
            _state(ctx),
            query=query,
            p_tag=p_tag,
            date_range=date_range,
            role=role,
            agent_platform=agent_platform,
            device_scope=device_scope,
            limit=limit,
            include_archived=include_archived,
            now=datetime.now(UTC),
        )

    @server.tool()
    def manage_knowledge(
        ctx: ServerContext,
        action: Annotated[
            Literal["add", "update", "remove"],
            Field(
                description="add a pinned memory or profile line; update its text; remove it "
                "(archived, recoverable)."
            ),
        ],
        target: Annotated[
            Literal["memory", "sub_profile"],
            Field(
                description="memory: a pinned fact; sub_profile: the user's current-work profile."
            ),
        ] = "memory",
        content: Annotated[
            str | None, Field(description="The text (add/update). Write it as a standalone fact.")
        ] = None,
        memory_id: Annotated[
            int | None,
            Field(description="The memory's id from search_memory (update/remove of a memory)."),
        ] = None,
        agent_model: Annotated[str | None, Field(description="Your model id, if known.")] = None,
    ) -> knowledge_tools.KnowledgeResult:
        """Remember something on purpose (the user asked, or a durable fact or decision),
        correct it, or forget it. Pinned memories always appear in the brief."""
        return knowledge_tools.manage_knowledge(
            _state(ctx),
            action=action,
            target=target,
            content=content,
            memory_id=memory_id,
            platform=_client_platform(ctx),
            model=agent_model,
        )

    @server.tool()
    def save_message(
        ctx: ServerContext,
        role: Annotated[Literal["user", "assistant"], Field(description="Who said it.")],
        message: Annotated[str, Field(description="The turn's full text.")],
        agent_model: Annotated[str | None, Field(description="Your model id.")] = None,
        agent_platform: Annotated[
            str | None, Field(description="Your client's name if the server cannot tell.")
        ] = None,
        session_id: Annotated[str | None, Field(description="Your session id, if any.")] = None,
        subagent: Annotated[bool, Field(description="true when a subagent speaks.")] = False,
        subagent_model: Annotated[str | None, Field(description="The subagent's model.")] = None,
        subagent_role: Annotated[str | None, Field(description="The subagent's role.")] = None,
    ) -> knowledge_tools.SaveResult:
        """Only for clients whose conversations are NOT captured automatically (Claude
        Code, Codex, Gemini CLI, Grok and Antigravity are): store one conversation turn."""
        platform = platform_for_client(agent_platform) or _client_platform(ctx)
        return knowledge_tools.save_message(
            _state(ctx),
            role=role,
            message=message,
            platform=platform,
            model=agent_model,
            session_id=session_id,
            subagent=subagent,
            subagent_model=subagent_model,
            subagent_role=subagent_role,
        )


def serve(
    settings: Settings, *, http: bool = False, host: str = "127.0.0.1", port: int = 8765
) -> None:
    """Run until the client goes away (stdio) or the process is stopped (HTTP)."""
    state = open_state(settings)
    try:
        server = create_server(settings, state)
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
            server.run()
    except AgentsMemoryError:
        raise
    finally:
        state.close()
