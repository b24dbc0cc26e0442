"""``mcp-agents-memory team``: a team on one PostgreSQL (the service is
:mod:`agents_memory.ops.team`; the database enforces who sees what)."""

from __future__ import annotations

import json
from dataclasses import asdict

import click

from agents_memory.cli.common import debug_option, settings_from
from agents_memory.ops import team as team_service
from agents_memory.store.entry import Opened


@click.group()
def team() -> None:
    """A team on one PostgreSQL: each person's memory private, shared by project.

    The admin (the role that owns the schema) runs `init`, `add` and `remove`; each person
    runs `share`, `unshare` and `hide` for their own memory. Row-level security in the
    database enforces it, for `psql` too."""


def _open(ctx: click.Context, *, prepare: bool = False) -> Opened:
    from agents_memory.store.entry import open_user_connection

    return open_user_connection(settings_from(ctx), prepare=prepare)


@team.command("init")
@debug_option
@click.pass_context
def init_cmd(ctx: click.Context) -> None:
    """Set the team up in this database (run once, as the schema's owner with CREATEROLE)."""
    with _open(ctx, prepare=True) as opened:
        ready = team_service.init(opened.conn)
        click.echo(f"team ready: its members' group role is {ready.group}")
        if ready.admin_statements:
            click.echo(
                "for members' searches to use the full-text and vector indexes, the server's "
                "admin (a superuser) runs once in this database:"
            )
            for statement in ready.admin_statements:
                click.echo(f"  {statement};")
        if team_service.socket_only(opened.db):
            click.echo(f"note: {team_service.SOCKET_ONLY}")
    click.echo("next: `mcp-agents-memory team add <role>` for each person")


@team.command("add")
@click.argument("role")
@click.option("--name", "user_name", help="The person's name in results (default: ROLE).")
@click.option("--cold-path", is_flag=True, help="The Cold Path's role, not a person.")
@click.option(
    "--existing-role", is_flag=True, help="Use a role the server's admin made (no password)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@debug_option
@click.pass_context
def add_cmd(
    ctx: click.Context,
    role: str,
    user_name: str | None,
    cold_path: bool,
    existing_role: bool,
    as_json: bool,
) -> None:
    """Add a person (or, with --cold-path, the Cold Path's role) and print their DATABASE_URL.

    The password in it is made now and shown once: give it to them privately."""
    with _open(ctx, prepare=True) as opened:
        server = (
            team_service.member_server(opened.db, settings_from(ctx).embedded_listen)
            if not existing_role
            else opened.db.conninfo
        )
        added = team_service.add(
            opened.conn,
            server,
            role,
            kind="coldpath" if cold_path else "person",
            user_name=user_name,
            existing_role=existing_role,
        )
    if as_json:
        click.echo(json.dumps(asdict(added)))
        return
    what = "the Cold Path's role" if cold_path else "a person"
    click.echo(f"added {role} as {what}")
    if added.database_url:
        click.echo("their setting (shown once, give it privately; it is not stored):")
        click.echo(f"  DATABASE_URL={added.database_url}")


@team.command("remove")
@click.argument("role")
@debug_option
@click.pass_context
def remove_cmd(ctx: click.Context, role: str) -> None:
    """Remove a member: access ends at once, their rows stay."""
    with _open(ctx, prepare=True) as opened:
        removed = team_service.remove(opened.conn, role)
    if not removed:
        raise click.ClickException(f"{role} is not on the team")
    click.echo(f"removed {role}: no access from now on (their memory stays in the database)")


@team.command("share")
@click.argument("project")
@debug_option
@click.pass_context
def share_cmd(ctx: click.Context, project: str) -> None:
    """Share your turns in PROJECT with the team."""
    with _open(ctx) as opened:
        name, changed = team_service.share(opened.conn, opened.user_id, project)
    click.echo(f"{name}: shared with the team" + ("" if changed else " (already)"))


@team.command("unshare")
@click.argument("project")
@debug_option
@click.pass_context
def unshare_cmd(ctx: click.Context, project: str) -> None:
    """Stop sharing PROJECT: teammates no longer see your turns in it."""
    with _open(ctx) as opened:
        name, changed = team_service.unshare(opened.conn, opened.user_id, project)
    click.echo(f"{name}: private" + ("" if changed else " (it was not shared)"))


@team.command("hide")
@click.argument("memory_id", type=int)
@debug_option
@click.pass_context
def hide_cmd(ctx: click.Context, memory_id: int) -> None:
    """Hide a teammate's shared turn for yourself (forgetting it is its owner's right)."""
    with _open(ctx) as opened:
        hidden = team_service.hide(opened.conn, opened.user_id, memory_id)
    if not hidden:
        raise click.ClickException(f"no teammate's turn {memory_id} to hide (or hidden already)")
    click.echo(f"turn {memory_id} hidden for you")


@team.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the members as JSON.")
@debug_option
@click.pass_context
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """Who is on the team and which projects each person shares."""
    with _open(ctx) as opened:
        found = team_service.members(opened.conn)
    if as_json:
        click.echo(json.dumps([asdict(m) for m in found]))
        return
    if not found:
        click.echo("nobody on the team yet")
    for member in found:
        if member.kind == "coldpath":
            click.echo(f"{member.db_role}  Cold Path (processes every row)")
            continue
        shares = ", ".join(member.shares) or "nothing"
        click.echo(f"{member.db_role}  {member.user_name}  shares: {shares}")


@team.command("whoami")
@debug_option
@click.pass_context
def whoami_cmd(ctx: click.Context) -> None:
    """Which database role you are and what you share."""
    with _open(ctx) as opened:
        click.echo(team_service.describe(team_service.whoami(opened.conn)))
