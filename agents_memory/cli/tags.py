"""``mcp-agents-memory tags``: project tags and the questions the Cold Path asks about them
(the service is :mod:`agents_memory.ops.tags`).

Suggestion ids carry their queue: ``n12`` is new-tag suggestion 12, ``a7`` alias suggestion 7
(a bare number works when only one queue has it pending).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

import click
import psycopg

from agents_memory.cli.common import debug_option, settings_from
from agents_memory.coldpath.tag_decisions import Kind
from agents_memory.errors import OwnerRequestError, UnknownProjectError
from agents_memory.ops import tags as tag_service
from agents_memory.store import tags as tag_store
from agents_memory.store.coldpath.tag_suggestions import AliasSuggestion, NewTagSuggestion


@click.group()
def tags() -> None:
    """Project tags, their aliases, and the suggestions waiting for your decision."""


def _open(ctx: click.Context) -> tuple[psycopg.Connection[Any], int]:
    from agents_memory.store.entry import open_user_connection

    opened = open_user_connection(settings_from(ctx), prepare=True)
    return opened.conn, opened.user_id


@tags.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print tags and suggestions as JSON.")
@debug_option
@click.pass_context
def list_tags(ctx: click.Context, as_json: bool) -> None:
    """Project tags (with aliases and row counts) and pending suggestions with their ids."""
    conn, user_id = _open(ctx)
    with conn:
        overview = tag_service.tag_overview(conn, user_id)
    all_tags, counts, total = overview.tags, overview.rows, overview.rows_with_aliases
    new, aliases, names = overview.new, overview.aliases, overview.names
    if as_json:
        payload = {
            "tags": [
                {
                    "id": t.id,
                    "name": t.name,
                    "alias_of": names.get(t.alias_of) if t.alias_of else None,
                    "canonical": names[t.canonical_id],
                    "aliases": [a.name for a in all_tags if a.alias_of == t.id],
                    "rows": counts.get(t.id, 0),
                    "rows_with_aliases": total.get(t.id, 0) if t.alias_of is None else None,
                    "kind": t.kind,
                    "paused": t.paused,
                    "git_root": t.git_root,
                    "git_remote": t.git_remote,
                }
                for t in all_tags
            ],
            "new_tag_suggestions": [{**_jsonable(asdict(s)), "ref": f"n{s.id}"} for s in new],
            "alias_suggestions": [{**_jsonable(asdict(s)), "ref": f"a{s.id}"} for s in aliases],
        }
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    _print_tags(all_tags, counts, total, names)
    _print_suggestions(new, aliases)


@contextmanager
def _one_line() -> Iterator[None]:
    """The service's refusal as the command's one-line error (exit 1)."""
    try:
        yield
    except OwnerRequestError as exc:
        raise click.ClickException(str(exc)) from exc


def _jsonable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in data.items()}


def _print_tags(
    all_tags: list[tag_store.ProjectTag],
    counts: dict[int, int],
    total: dict[int, int],
    names: dict[int, str],
) -> None:
    if not all_tags:
        click.echo("no project tags yet")
    for tag in all_tags:
        if tag.alias_of is not None:
            continue
        aliases = [a.name for a in all_tags if a.canonical_id == tag.id and a.id != tag.id]
        flags = [f for f in (tag.kind, "paused" if tag.paused else None) if f]
        line = f"{tag.name}  {total.get(tag.id, 0)} row(s)"
        if aliases:
            line += f"  aliases: {', '.join(aliases)}"
        if flags:
            line += f"  [{', '.join(flags)}]"
        if tag.git_remote or tag.git_root:
            line += f"  {tag.git_remote or tag.git_root}"
        click.echo(line)
    for tag in all_tags:
        if tag.alias_of is not None:
            click.echo(
                f"{tag.name} -> {names.get(tag.alias_of, '?')}  {counts.get(tag.id, 0)} row(s)"
            )


def _print_suggestions(new: list[NewTagSuggestion], aliases: list[AliasSuggestion]) -> None:
    if not new and not aliases:
        click.echo("no pending suggestions")
        return
    click.echo("pending suggestions (confirm or reject by id):")
    for s in new:
        where = s.git_remote or s.git_root or ", ".join(s.members)
        rec = f" ({s.recommendation})" if s.recommendation else ""
        click.echo(f"  n{s.id}  new project tag {s.name!r}{rec}, {s.uses} use(s): {where}")
    for a in aliases:
        conf = f", confidence {a.confidence:.2f}" if a.confidence is not None else ""
        why = f": {a.rationale}" if a.rationale else ""
        click.echo(f"  a{a.id}  {a.source_name!r} -> {a.target_name!r} ({a.relation}{conf}){why}")


@tags.command()
@click.argument("ref")
@debug_option
@click.pass_context
def confirm(ctx: click.Context, ref: str) -> None:
    """Accept suggestion REF: create the project tag (filing its rows) or apply the alias."""
    conn, user_id = _open(ctx)
    with conn, _one_line():
        message = tag_service.confirm_suggestion(conn, user_id, ref)
    click.echo(message)


@tags.command()
@click.argument("ref")
@click.option("--reason", default=None, help="Why (kept with the decision).")
@debug_option
@click.pass_context
def reject(ctx: click.Context, ref: str, reason: str | None) -> None:
    """Reject suggestion REF for good (it is never suggested again)."""
    conn, user_id = _open(ctx)
    with conn, _one_line():
        message = tag_service.reject_suggestion(conn, user_id, ref, reason)
    click.echo(message)


@tags.command()
@click.argument("source")
@click.argument("target")
@debug_option
@click.pass_context
def alias(ctx: click.Context, source: str, target: str) -> None:
    """Make tag SOURCE an alias of tag TARGET (reads group SOURCE's rows under TARGET)."""
    conn, user_id = _open(ctx)
    with conn, _one_line():
        message = tag_service.alias_tag(conn, user_id, source, target)
    click.echo(message)


@tags.command()
@click.argument("source")
@debug_option
@click.pass_context
def unalias(ctx: click.Context, source: str) -> None:
    """Make tag SOURCE a project of its own again (history is not rewritten)."""
    conn, _user_id = _open(ctx)
    with conn, _one_line():
        message = tag_service.unalias_tag(conn, source)
    click.echo(message)


@tags.command("set")
@click.argument("name")
@click.option(
    "--kind",
    type=click.Choice(["project", "category", "none"]),
    default=None,
    help="Put the tag in the registry the tagger chooses from (none: take it out).",
)
@click.option(
    "--paused/--active",
    default=None,
    help="Pause the project (not captured, left out of the brief) or make it active again.",
)
@click.option("--description", default=None, help="What the project is (empty text clears it).")
@debug_option
@click.pass_context
def set_tag(
    ctx: click.Context,
    name: str,
    kind: Kind | None,
    paused: bool | None,
    description: str | None,
) -> None:
    """Set project NAME's registry fields: kind, paused, description."""
    conn, _user_id = _open(ctx)
    with conn, _one_line():
        message = tag_service.set_registry(
            conn, name, kind=kind, paused=paused, description=description
        )
    click.echo(message)


@tags.command()
@click.option("--json", "as_json", is_flag=True, help="Print the folders as JSON.")
@debug_option
@click.pass_context
def untagged(ctx: click.Context, as_json: bool) -> None:
    """Turns without a project, by the folder they were written in (file them with
    `tags file PROJECT --folder DIR`)."""
    from agents_memory.store import untagged as untagged_store

    conn, user_id = _open(ctx)
    with conn:
        folders = untagged_store.untagged_folders(conn, user_id)
    if as_json:
        click.echo(json.dumps([_jsonable(asdict(f)) for f in folders], ensure_ascii=False))
        return
    if not folders:
        click.echo("every turn has a project")
        return
    for f in folders:
        where = f.cwd if f.cwd is not None else "(no folder recorded)"
        click.echo(
            f"{f.turns:>6} turn(s), {f.sessions} session(s), {', '.join(f.platforms)}: {where}"
        )


@tags.command("file")
@click.argument("project")
@click.option(
    "--folder",
    required=True,
    help='The folder of the untagged turns to file ("" for turns with no folder recorded).',
)
@debug_option
@click.pass_context
def file_turns(ctx: click.Context, project: str, folder: str) -> None:
    """File the untagged turns written in FOLDER under PROJECT (the console's Projects page
    does the same)."""
    conn, user_id = _open(ctx)
    with conn, _one_line():
        try:
            message = tag_service.file_untagged(conn, user_id, project, folder or None)
        except UnknownProjectError as exc:
            raise OwnerRequestError(str(exc)) from exc
    click.echo(message)
