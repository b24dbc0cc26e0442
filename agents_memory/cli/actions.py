"""``mcp-agents-memory actions``: find what the agents did (tool calls) by words of a path, a
command or an error, with filters; one line per action (or JSON)."""

from __future__ import annotations

import json

import click

from agents_memory.cli.common import debug_option, settings_from
from agents_memory.cli.vocabulary import (
    file_option,
    json_option,
    kind_option,
    platform_filter_option,
)
from agents_memory.recall.actions import OUTCOMES, find_actions
from agents_memory.store.actions import ActionQuery
from agents_memory.store.entry import open_user_connection


@click.command()
@click.argument("query", nargs=-1)
@kind_option("Only this kind of action")
@file_option("Only actions on this path")
@click.option("--outcome", type=click.Choice(OUTCOMES), help="Only this outcome.")
@platform_filter_option("Only this client's actions")
@click.option("--session", help="Only this session.")
@click.option(
    "--limit", type=click.IntRange(1, 200), default=20, show_default=True, help="Results."
)
@json_option("the actions")
@debug_option
@click.pass_context
def actions(
    ctx: click.Context,
    query: tuple[str, ...],
    kind: str | None,
    file_: str | None,
    outcome: str | None,
    platform: str | None,
    session: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Find the agents' actions (files edited, commands run, errors seen) by words of a path,
    a command or an error text; no QUERY = newest first."""
    wanted = ActionQuery(
        text=" ".join(query) or None,
        kind=kind,
        file=file_,
        outcome=outcome,
        platform=platform,
        session_id=session,
        limit=limit,
    )
    settings = settings_from(ctx)
    opened = open_user_connection(settings)
    with opened.conn as conn:
        hits = find_actions(conn, opened.user_id, wanted)
    if as_json:
        click.echo(json.dumps([hit.as_dict() for hit in hits], ensure_ascii=False, indent=2))
        return
    if not hits:
        click.echo("no match")
        return
    for hit in hits:
        row = hit.row
        at = row.started_at.strftime("%Y-%m-%d %H:%M") if row.started_at else "-"
        turn = f"turn {row.memory_id}" if row.memory_id else "no turn"
        session_id = (row.session_id or "-")[:8]
        click.echo(f"{row.id:>6}  {at}  {row.agent_platform}  {session_id}  {turn}  {hit.line}")
