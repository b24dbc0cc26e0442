"""The memory as MCP resources and a prompt, for clients that offer them to the user or the
model (an ``@`` mention, an attach menu, a slash command) instead of calling tools.

* ``memory://brief``: the memory brief (what ``memory_startup`` returns).
* ``memory://projects``: the project tags, each with its aliases (JSON).
* ``memory://session/{session_id}``: a session from its first turn, within a budget (what
  ``read_memory session_id=…`` returns, JSON), with the Cold Path's summary of it when one is
  written (``summary``: its title and text; ``null`` before).
* the ``recall`` prompt: how to look something up (several phrasings, then read the best hit).

The same services as the tools; nothing here writes.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError

from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.recall.sessions import session_summary
from agents_memory.recall.state import ServerState
from agents_memory.server.tools.read import run_read_memory
from agents_memory.store.projects import project_names

MAX_PROJECTS = 500
"""The project list holds at most this many projects."""
SESSION_CHARS = 20_000
"""A session resource holds at most this many characters of turns (``next`` says how to read
on with ``read_memory``)."""


def projects_json(state: ServerState) -> str:
    """Each project with its aliases, by name."""
    with state.pool.connection() as conn:
        names = project_names(conn)
    projects: dict[str, list[str]] = {}
    for name, canonical in names.items():
        aliases = projects.setdefault(canonical, [])
        if name != canonical:
            aliases.append(name)
    listed = [{"name": n, "aliases": a} for n, a in sorted(projects.items())[:MAX_PROJECTS]]
    return json.dumps(
        {"projects": listed, "more": max(0, len(projects) - MAX_PROJECTS)}, ensure_ascii=False
    )


def recall_prompt(topic: str) -> str:
    """The ``recall`` prompt's message for ``topic``."""
    return (
        f"Look up in the shared memory what was said or decided about: {topic}\n"
        "Call search_memory with it as `query` and, in `queries`, one to three other phrasings "
        "(a synonym or abbreviation the user may have used, a paraphrase, the identifier or "
        "error text verbatim). Then read the best hits whole with read_memory memory_id=<id>, "
        "and answer from what they say, citing the ids; say so if nothing matched well."
    )


def register_resources(server: MCPServer[Any], state: ServerState) -> None:
    """The three resources and the prompt, over ``state`` (the server's own)."""

    @server.resource(
        "memory://brief",
        name="brief",
        title="Memory brief",
        description="The user's profile, pinned facts, projects and recent work.",
        mime_type="text/markdown",
    )
    def brief() -> str:
        with state.pool.connection() as conn:
            request = BriefRequest.full(
                state.settings, platform=None, model=None, cwd=state.cwd, same_agent_only=False
            )
            return build_brief(conn, state.settings, state.user_id, request)

    @server.resource(
        "memory://projects",
        name="projects",
        title="Projects",
        description="The project tags and their aliases.",
        mime_type="application/json",
    )
    def projects() -> str:
        return projects_json(state)

    @server.resource(
        "memory://session/{session_id}",
        name="session",
        title="A session",
        description="A session's summary and turns from its start (a search hit's session_id).",
        mime_type="application/json",
    )
    def session(session_id: str) -> str:
        try:
            read = run_read_memory(
                state,
                memory_id=None,
                session_id=session_id,
                before=0,
                after=50,
                max_chars=SESSION_CHARS,
            )
        except ToolError as exc:
            raise ResourceError(str(exc)) from exc
        with state.pool.connection() as conn:
            summary = session_summary(conn, state.user_id, read.agent_platform, session_id)
        body = read.model_dump(mode="json")
        body["summary"] = (
            None if summary is None else {"title": summary.title, "summary": summary.summary}
        )
        return json.dumps(body, ensure_ascii=False)

    @server.prompt(name="recall", title="Recall from memory")
    def recall(topic: str) -> str:
        """Look something up in the shared memory of all agents."""
        return recall_prompt(topic)
