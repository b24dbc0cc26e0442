"""The team (``/team``): which role the console is connected as, who is on the team and which
projects each person shares; a person shares and unshares their own projects, the team's
admin removes a member. The same service as ``mcp-agents-memory team``
(:mod:`agents_memory.ops.team`); the database refuses whatever the role may not do."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agents_memory.console.context import console_from
from agents_memory.console.forms import back, change_form, text
from agents_memory.errors import AgentsMemoryError, OwnerRequestError
from agents_memory.ops import team as team_service
from agents_memory.store.team import Member, Whoami


@dataclass(frozen=True, slots=True)
class TeamView:
    who: Whoami
    line: str
    members: list[Member]
    projects: list[str]
    """The connected person's own projects (what they may share); empty for others."""


def _view(conn: psycopg.Connection[Any], user_id: int) -> TeamView:
    who = team_service.whoami(conn)
    members = team_service.members(conn) if who.team and who.kind != "other" else []
    projects = team_service.own_projects(conn, user_id) if who.kind == "person" else []
    return TeamView(who, team_service.describe(who), members, projects)


async def team_page(request: Request) -> Response:
    console = console_from(request)
    view = await console.read(lambda conn: _view(conn, console.user_id))
    return console.render(request, "team.html", view=view)


def _project(form: Any) -> str:
    project = text(form, "project")
    if not project:
        raise OwnerRequestError("name the project to share or unshare")
    return project


async def share(request: Request) -> Response:
    """Share (``action=share``) or stop sharing (``action=unshare``) one of one's projects."""
    console = console_from(request)
    form = await change_form(request)
    action = text(form, "action")
    if action not in ("share", "unshare"):
        raise OwnerRequestError("action must be share or unshare")

    def work(conn: psycopg.Connection[Any]) -> str:
        project = _project(form)
        if action == "share":
            name, changed = team_service.share(conn, console.user_id, project)
            return f"{name}: shared with the team" + ("" if changed else " (already)")
        name, changed = team_service.unshare(conn, console.user_id, project)
        return f"{name}: private" + ("" if changed else " (it was not shared)")

    try:
        return back("/team", notice=await console.read(work))
    except (AgentsMemoryError, psycopg.errors.InsufficientPrivilege) as exc:
        return back("/team", failed=str(exc).splitlines()[0])


async def remove(request: Request) -> Response:
    """The admin removes a member (their access ends at once; their rows stay)."""
    console = console_from(request)
    form = await change_form(request)
    role = text(form, "role")
    if not role:
        raise OwnerRequestError("name the member to remove")
    try:
        removed = await console.read(lambda conn: team_service.remove(conn, role))
    except AgentsMemoryError as exc:
        return back("/team", failed=str(exc))
    if not removed:
        return back("/team", failed=f"{role} is not on the team")
    return back("/team", notice=f"removed {role}: no access from now on (their memory stays)")


ROUTES = [
    Route("/team", team_page),
    Route("/team/share", share, methods=["POST"]),
    Route("/team/remove", remove, methods=["POST"]),
]
