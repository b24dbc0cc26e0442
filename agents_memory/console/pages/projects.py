"""Projects: tags with their aliases and counts, and the Cold Path's pending new-tag and merge
questions with confirm / reject / alias, each project's registry fields (kind, paused,
description) and turns without a project filed by folder (the service
:mod:`agents_memory.ops.tags`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import psycopg
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agents_memory.coldpath.tag_decisions import Kind
from agents_memory.console.context import console_from
from agents_memory.console.forms import back, change_form, text
from agents_memory.errors import AgentsMemoryError, OwnerRequestError
from agents_memory.ops import tags as tag_service
from agents_memory.store import untagged as untagged_store

UNTAGGED_SHOWN: Final = 30


async def projects_page(request: Request) -> Response:
    console = console_from(request)
    overview, folders, waiting = await console.read(
        lambda conn: (
            tag_service.tag_overview(conn, console.user_id),
            untagged_store.untagged_folders(conn, console.user_id, limit=UNTAGGED_SHOWN),
            untagged_store.untagged_count(conn, console.user_id),
        )
    )
    canonical = [t for t in overview.tags if t.alias_of is None]
    return console.render(
        request,
        "projects.html",
        overview=overview,
        canonical=canonical,
        names=overview.names,
        untagged=folders,
        untagged_total=waiting,
    )


async def _decide(
    request: Request, work: Callable[[psycopg.Connection[Any], Any], str]
) -> Response:
    console = console_from(request)
    form = await change_form(request)
    try:
        message = await console.read(lambda conn: work(conn, form))
    except AgentsMemoryError as exc:
        return back("/projects", failed=str(exc))
    return back("/projects", notice=message)


def _required(form: Any, name: str) -> str:
    value = text(form, name)
    if value is None:
        raise OwnerRequestError(f"{name} is required")
    return value


async def suggestion(request: Request) -> Response:
    """Confirm, reject, or answer "alias of TARGET" to one pending suggestion."""
    user_id = console_from(request).user_id

    def work(conn: psycopg.Connection[Any], form: Any) -> str:
        ref, action = _required(form, "ref"), _required(form, "action")
        if action == "confirm":
            return tag_service.confirm_suggestion(conn, user_id, ref)
        if action == "reject":
            return tag_service.reject_suggestion(conn, user_id, ref, text(form, "reason"))
        if action == "alias":
            return tag_service.confirm_as_alias(conn, user_id, ref, _required(form, "target"))
        raise OwnerRequestError(f"unknown action {action!r}")

    return await _decide(request, work)


async def alias(request: Request) -> Response:
    user_id = console_from(request).user_id
    return await _decide(
        request,
        lambda conn, form: tag_service.alias_tag(
            conn, user_id, _required(form, "source"), _required(form, "target")
        ),
    )


async def unalias(request: Request) -> Response:
    return await _decide(
        request, lambda conn, form: tag_service.unalias_tag(conn, _required(form, "source"))
    )


_KINDS: dict[str, Kind] = {"project": "project", "category": "category", "none": "none"}


async def registry(request: Request) -> Response:
    """A project's registry fields from its row's form: kind, paused, description (a blank
    description clears it)."""

    def work(conn: psycopg.Connection[Any], form: Any) -> str:
        kind = _KINDS.get(text(form, "kind") or "none")
        if kind is None:
            raise OwnerRequestError(f"unknown kind {text(form, 'kind')!r}")
        return tag_service.set_registry(
            conn,
            _required(form, "name"),
            kind=kind,
            paused=text(form, "paused") is not None,
            description=text(form, "description") or "",
        )

    return await _decide(request, work)


async def file_untagged(request: Request) -> Response:
    """File a folder's untagged turns under a project (the service of ``tags file``)."""
    user_id = console_from(request).user_id

    def work(conn: psycopg.Connection[Any], form: Any) -> str:
        folder = form.get("folder")
        where = folder if isinstance(folder, str) and form.get("has_folder") else None
        return tag_service.file_untagged(conn, user_id, _required(form, "project"), where)

    return await _decide(request, work)


ROUTES = [
    Route("/projects", projects_page),
    Route("/projects/suggestion", suggestion, methods=["POST"]),
    Route("/projects/alias", alias, methods=["POST"]),
    Route("/projects/unalias", unalias, methods=["POST"]),
    Route("/projects/registry", registry, methods=["POST"]),
    Route("/projects/file", file_untagged, methods=["POST"]),
]
