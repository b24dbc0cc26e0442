"""``mcp-agents-memory search``: hybrid search from the command line (a table or JSON)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from agents_memory.adapters import short_platform
from agents_memory.cli.common import debug_option, settings_from
from agents_memory.cli.fast_search import DAEMON_WAIT_SEC
from agents_memory.cli.tables import Terminal, compact_time, table_console
from agents_memory.cli.vocabulary import (
    file_option,
    json_option,
    kind_option,
    platform_filter_option,
    project_option,
    since_option,
    until_option,
)
from agents_memory.clipping import clip
from agents_memory.config import Settings
from agents_memory.errors import SearchArgumentError, UnknownProjectError
from agents_memory.recall.search_request import SearchRequest
from agents_memory.store.search.types import MAX_LIMIT

if TYPE_CHECKING:
    from rich.table import Table

log = logging.getLogger(__name__)

TABLE_CHARS = 300
"""A hit's message in the table is clipped to this many characters (``--json``: the search's
own clip, ``HIT_MAX_CHARS``)."""

_HINTS = {
    "project": "--project",
    "since": "--since",
    "until": "--until",
    "platform": "--platform",
    "role": "--role",
    "limit": "--limit",
    "as_of": "--as-of",
    "queries": "--also",
    "kind": "--kind",
    "file": "--file",
}
"""The option each argument of the search request is typed as."""


@click.command()
@click.argument("query", nargs=-1)
@project_option("Only this project (an alias finds its project).", old_spellings=("--p-tag",))
@since_option()
@until_option()
@click.option("--date-range", hidden=True, help="Old spelling of --since A --until B (A..B).")
@click.option("--role", type=click.Choice(["user", "assistant"]), help="Only this role.")
@platform_filter_option("Only this client")
@click.option(
    "--device-scope",
    type=click.Choice(["global", "local"]),
    default="global",
    show_default=True,
    help="local = this device's rows plus every pinned row.",
)
@click.option(
    "--limit", type=click.IntRange(1, MAX_LIMIT), default=10, show_default=True, help="Results."
)
@click.option("--include-archived", is_flag=True, help="Also search archived rows.")
@click.option(
    "--as-of",
    default=None,
    help="The pool as it was at the end of this date: facts and slot values live then.",
)
@click.option(
    "--also",
    "also",
    multiple=True,
    help="Another phrasing of the same question (repeatable, up to 4), fused into one ranking.",
)
@kind_option()
@file_option()
@json_option("the result")
@click.option(
    "--why", is_flag=True, help="Also show why each row ranks (its full-text and vector ranks)."
)
@debug_option
@click.pass_context
def search(ctx: click.Context, /, **_params: Any) -> None:
    """Search memories: full-text and vector arms fused, newest first with no QUERY. The
    agents' tool calls (paths, commands, error text) are searched too; a turn found through
    one lists it under its message.

    Without an embedding backend (EMBEDDING_BACKEND=none, or the model cannot load) the search
    runs full-text only and says so on stderr.
    """
    respond(settings_from(ctx), ctx.params, find_anywhere, Terminal.standard())


Find = Callable[[Settings, SearchRequest, datetime, Callable[[str], None]], dict[str, Any]]
"""Where a search runs: the result (its JSON form) of a request asked at a moment, each note
given to the callback. Raises :class:`click.BadParameter` for a request refused."""


def respond(settings: Settings, params: dict[str, Any], find: Find, terminal: Terminal) -> None:
    """The command's work once its arguments are parsed: the request checked, found by
    ``find``, printed on ``terminal`` as a table or JSON. The capture daemon calls it too,
    for a client's command line (:mod:`agents_memory.cli.search_remote`)."""
    now = datetime.now().astimezone()
    try:
        request = SearchRequest.build(
            query=" ".join(params["query"]),
            project=params["project"],
            since=params["since"],
            until=params["until"],
            date_range=params["date_range"],
            role=params["role"],
            platform=params["platform"],
            device_scope=params["device_scope"],
            limit=params["limit"],
            include_archived=params["include_archived"],
            as_of=params["as_of"],
            queries=params["also"],
            kind=params["kind"],
            file=params["file_"],
        )
        request.period(now)  # a date it cannot read is refused before any search
        request.moment(now)
    except SearchArgumentError as exc:
        raise click.BadParameter(str(exc), param_hint=_HINTS.get(exc.argument or "")) from exc
    result = find(settings, request, now, lambda note: _note(note, terminal))
    if params["as_json"]:
        click.echo(json.dumps(result, ensure_ascii=False, indent=2), file=terminal.out)
        return
    _print_table(result, terminal, why=params["why"])


def find_anywhere(
    settings: Settings, request: SearchRequest, now: datetime, note: Callable[[str], None]
) -> dict[str, Any]:
    """The running capture daemon's answer, else the search in this process."""
    result = ask_daemon(settings, request, now, note)
    return _search_here(settings, request, now, note) if result is None else result


def _search_here(
    settings: Settings, request: SearchRequest, now: datetime, note: Callable[[str], None]
) -> dict[str, Any]:
    """The search in this process (no daemon answered), the embedding backend made only when
    the query has words to embed."""
    from agents_memory.recall.search import prepare_search, search_database

    prepared = prepare_search(request, device_name=settings.device_name, now=now)
    try:
        return search_database(settings, prepared, on_note=note).as_dict()
    except UnknownProjectError as exc:
        raise click.BadParameter(str(exc), param_hint="--project") from exc


def ask_daemon(
    settings: Settings, request: SearchRequest, now: datetime, note: Callable[[str], None]
) -> dict[str, Any] | None:
    """The capture daemon's answer to this search (its notes printed), or ``None`` when no
    daemon of this database, user and model answers in time: then the command searches
    itself. The daemon runs the same search (:mod:`agents_memory.recall.search_service`);
    a request it refuses (a project that is no tag) is refused here with its reason."""
    from agents_memory.hooks.fast import ask_daemon as ask
    from agents_memory.paths import brief_socket_path
    from agents_memory.recall.search_wire import search_line

    socket_path = brief_socket_path()
    if not socket_path.exists():
        return None
    deadline = time.monotonic() + DAEMON_WAIT_SEC
    answer = ask(str(socket_path), search_line(settings, request, now), deadline)
    if answer is None:
        log.debug("no capture daemon answered the search: searching in this process")
        return None
    try:
        data = json.loads(answer)
        if isinstance(data, dict) and isinstance(data.get("refused"), str):
            hint = "--project" if "project" in data["refused"] else None
            raise click.BadParameter(data["refused"], param_hint=hint)
        result: dict[str, Any] = data["result"]
        hits = result["results"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(hits, list):
        return None
    log.debug("search answered by the capture daemon")
    for said in data.get("notes") or ():
        note(str(said))
    return result


def _note(note: str, terminal: Terminal) -> None:
    click.echo(f"note: {note}", file=terminal.err)


def _print_table(result: dict[str, Any], terminal: Terminal, *, why: bool = False) -> None:
    """The hits (the result's JSON form, whichever process searched) in a table of the one
    width rule (:mod:`agents_memory.cli.tables`): id, when, project, who, the message
    wrapped; ranking internals only with ``why``."""
    console = table_console(terminal)
    hits: list[dict[str, Any]] = result["results"]
    if not hits:
        console.print("no match", highlight=False, markup=False)
        return
    summary = f"{len(hits)} result(s) by {result['used']}"
    if result.get("p_tag"):
        summary += f", project {result['p_tag']}"
    if why and result.get("top_similarity") is not None:
        summary += f", top similarity {result['top_similarity']:.3f}"
    console.print(summary, highlight=False, markup=False)
    if result.get("note"):
        console.print(f"note: {result['note']}", highlight=False, markup=False)
    table = hits_table(hits, result["used"], why=why)
    # The table's lines are never wider than the console (rich sizes its columns to it), so
    # cropping them again is a no-op that costs a pass over every segment; only a console
    # too narrow for its columns (under 2 characters each) overflows and is cropped.
    console.print(table, crop=console.width < 2 * len(table.columns))
    for found in result.get("sessions") or ():  # the sessions the query names
        title = clip(" ".join(str(found["title"]).split()), TABLE_CHARS)[0]
        when = datetime.fromisoformat(found["last_at"]).astimezone().strftime("%Y-%m-%d")
        line = f"session {short_platform(found['agent_platform'])} {found['session_id']}"
        console.print(f"{line} ({when}): {title}", highlight=False, markup=False)


def hits_table(hits: list[dict[str, Any]], used: str, *, why: bool = False) -> Table:
    """The hits' rows (their JSON form): id, when, project, who, the message wrapped, and
    with ``why`` the ranking internals."""
    from rich.table import Table
    from rich.text import Text

    table = Table(show_edge=False, expand=True, pad_edge=False)
    table.add_column("id", justify="right", no_wrap=True)
    table.add_column("when", no_wrap=True)
    table.add_column("project", max_width=14, overflow="ellipsis", no_wrap=True)
    table.add_column("who", no_wrap=True)
    if why:
        table.add_column("why", max_width=18, overflow="fold")
    table.add_column("message", ratio=1, overflow="fold")
    for hit in hits:
        message, _clipped = clip(" ".join(str(hit["message"]).split()), TABLE_CHARS)
        when = compact_time(datetime.fromisoformat(hit["message_at"]))
        who = f"{short_platform(hit['agent_platform'])} {str(hit['role'])[0]}"
        marks = (" (pinned)" if hit.get("is_pinned") else "") + (
            " (archived)" if hit.get("archived") else ""
        )
        cells = [str(hit["id"]), when, hit.get("p_tag_name") or "-", who + marks]
        if why:
            cells.append(_why(used, hit.get("why") or {}, hit.get("confidence")))
        cells.append(message + "".join(f"\n  {a['line']}" for a in hit.get("actions") or ()))
        table.add_row(*(Text(cell) for cell in cells))
    return table


def _why(used: str, why: dict[str, Any], confidence: float | None = None) -> str:
    """Why a hit ranks, in the console's words: its place in the full-text and the vector
    ranking, how close its meaning is (similarity 0-1), the fused score, how likely it is
    the answer (confidence 0-1)."""
    parts: list[str] = []
    if why.get("fts_rank") is not None:
        parts.append(f"full-text #{why['fts_rank']}")
    if why.get("vector_rank") is not None:
        parts.append(f"vector #{why['vector_rank']}")
    if why.get("similarity") is not None:
        parts.append(f"similarity {why['similarity']:.2f}")
    if why.get("words_matched") is not None:
        parts.append(f"{why['words_matched']} word(s)")
    if why.get("score") is not None:
        parts.append(f"score {why['score']:.4f}")
    if confidence is not None:
        parts.append(f"confidence {confidence:.2f}")
    return " ".join(parts) or used
