"""Brief preview: exactly what the session-start hook of a client injects today for a project
and a model (:func:`agents_memory.recall.session.hook_output`), with its size against that
client's limit; and what a given prompt would get from per-prompt recall in that project (or a
working directory) — the lines, or why nothing, with the best hit's confidence
(:func:`agents_memory.recall.prompt_hook.prompt_recall`, the hook's own switches first,
nothing recorded)."""

from __future__ import annotations

from typing import Any

import psycopg
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agents_memory.adapters import resolve_client
from agents_memory.console.context import console_from
from agents_memory.console.forms import text
from agents_memory.errors import AdapterError, UnknownProjectError
from agents_memory.recall.prompt_hook import prompt_recall
from agents_memory.recall.prompt_recall import PromptRecall
from agents_memory.recall.search import embed_query
from agents_memory.recall.session import brief_for
from agents_memory.store import tags as tag_store
from agents_memory.store.projects import resolve_project


async def brief_page(request: Request) -> Response:
    console = console_from(request)
    params = request.query_params
    platforms = [a.name for a in console.catalog.adapters]
    project, model = text(params, "project"), text(params, "model")
    prompt, cwd = text(params, "prompt"), text(params, "cwd")
    try:  # a client by its full or short name, as in every command
        adapter = resolve_client(text(params, "platform") or platforms[0])
    except AdapterError as exc:
        return _refused(request, str(exc), platforms, dict(params))
    platform = adapter.name
    if platform not in platforms:
        return _refused(request, f"{platform} is not enabled here", platforms, dict(params))

    def build(conn: psycopg.Connection[Any]) -> dict[str, Any]:
        nonlocal project
        project = resolve_project(conn, project) if project else None
        tags = [t for t in tag_store.list_project_tags(conn) if t.alias_of is None]
        root = next((t.git_root for t in tags if t.name == project), None)
        event: dict[str, Any] = {"model": model, "cwd": root}
        brief = brief_for(conn, console.settings, console.user_id, platform, event)
        recalled: PromptRecall | None = None
        if prompt:
            recalled = prompt_recall(
                conn,
                console.settings,
                console.user_id,
                platform,
                {"prompt": prompt, "cwd": cwd or root},
                vector=lambda words: embed_query(console.state.embedder(), words),
                record=False,
            )
        return {
            "projects": [t.name for t in tags],
            "no_root": bool(project) and root is None,
            "brief": brief,
            "output": adapter.hook_output(brief),
            "recalled": recalled,
        }

    try:
        built = await console.read(build)
    except UnknownProjectError as exc:
        return _refused(request, str(exc), platforms, dict(params))
    return console.render(
        request,
        "brief.html",
        platforms=platforms,
        values={
            "platform": platform,
            "project": project or "",
            "model": model or "",
            "prompt": prompt or "",
            "cwd": cwd or "",
        },
        limit=adapter.brief_limit,
        shown=True,
        error=None,
        **built,
    )


def _refused(
    request: Request, error: str, platforms: list[str], values: dict[str, str]
) -> Response:
    return console_from(request).render(
        request,
        "brief.html",
        status_code=400,
        error=error,
        **{"platforms": platforms, "projects": [], "values": values, "shown": None},
    )


ROUTES = [Route("/brief", brief_page)]
