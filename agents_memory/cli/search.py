"""``mcp-agents-memory search``: hybrid search from the command line (a table or JSON)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click
import numpy as np

from agents_memory.cli.common import debug_option, settings_from
from agents_memory.config import Settings
from agents_memory.daterange import ACCEPTED_FORMS, DateRange, parse_date_range
from agents_memory.store.search import (
    MAX_LIMIT,
    MatchWhy,
    SearchFilters,
    SearchResult,
    SearchTuning,
)


@click.command()
@click.argument("query", nargs=-1)
@click.option("--p-tag", help="Only this project (aliases resolve to the canonical tag).")
@click.option("--date-range", help=f"Only this period: {ACCEPTED_FORMS}.")
@click.option("--role", type=click.Choice(["user", "assistant"]), help="Only this role.")
@click.option("--platform", help="Only this agent platform ('*' = all).")
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
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@debug_option
@click.pass_context
def search(
    ctx: click.Context,
    query: tuple[str, ...],
    p_tag: str | None,
    date_range: str | None,
    role: str | None,
    platform: str | None,
    device_scope: str,
    limit: int,
    include_archived: bool,
    as_json: bool,
) -> None:
    """Search memories: full-text and vector arms fused, newest first with no QUERY.

    Without an embedding backend (EMBEDDING_BACKEND=none, or the model cannot load) the search
    runs full-text only and says so on stderr.
    """
    settings: Settings = settings_from(ctx)
    text = " ".join(query).strip() or None
    dates: DateRange | None = None
    if date_range:
        try:
            dates = parse_date_range(date_range, datetime.now().astimezone())
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--date-range") from exc
    filters = SearchFilters(
        p_tag=p_tag,
        date_range=dates,
        role="user" if role == "user" else "assistant" if role == "assistant" else None,
        agent_platform=platform,
        device_scope="local" if device_scope == "local" else "global",
        device_name=settings.device_name,
        include_archived=include_archived,
        limit=limit,
    )
    result = run_search(settings, text, filters)
    if as_json:
        click.echo(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
        return
    _print_table(result)


def run_search(settings: Settings, text: str | None, filters: SearchFilters) -> SearchResult:
    """Open the database, embed ``text`` when a backend is available, search."""
    from agents_memory.store import database
    from agents_memory.store.search import find_user_id, search_memories

    vector = _embed_query(settings, text) if text else None
    db = database.open_database(settings)
    with database.connect(db) as conn:
        user_id = find_user_id(conn, settings.user_name)
        if user_id is None:
            return SearchResult(used="none", note=f"no memories for user {settings.user_name!r}")
        if vector is not None and not _model_matches(conn, settings):
            vector = None
        return search_memories(
            conn,
            user_id,
            query=text,
            query_vector=vector,
            filters=filters,
            tuning=SearchTuning(
                recency_halflife_days=settings.search_recency_halflife_days,
                fallback_threshold=settings.search_fallback_threshold,
            ),
        )


def _embed_query(settings: Settings, text: str) -> np.ndarray[Any, Any] | None:
    """The query's vector, or ``None`` (with a note on stderr) when no backend can give one."""
    if settings.embedding_backend == "none":
        click.echo("note: EMBEDDING_BACKEND=none, full-text search only", err=True)
        return None
    try:
        from agents_memory.embeddings import create_embedder

        embedder = create_embedder(settings)
        if embedder is None:
            click.echo("note: no embedding backend available, full-text search only", err=True)
            return None
        with embedder:
            vectors: np.ndarray[Any, Any] = np.asarray(embedder.embed_queries([text]), np.float32)
        return np.asarray(vectors[0])
    except Exception as exc:  # any backend failure degrades to full-text, by design
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        click.echo(f"note: embedding the query failed ({reason}), full-text search only", err=True)
        return None


def _model_matches(conn: Any, settings: Settings) -> bool:
    from agents_memory.embeddings import embedding_spec
    from agents_memory.store.vectors import vector_status

    spec = embedding_spec(settings)
    stored = vector_status(conn).model
    if spec is None or stored in (None, spec.model):
        return True
    click.echo(
        f"note: stored vectors come from {stored}, the configured model is {spec.model} "
        "(run `mcp-agents-memory reembed`); full-text search only",
        err=True,
    )
    return False


def _print_table(result: SearchResult) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    summary = f"used: {result.used}, {result.count} result(s)"
    if result.p_tag:
        summary += f", project {result.p_tag}"
    if result.top_similarity is not None:
        summary += f", top similarity {result.top_similarity:.3f}"
    console.print(summary, highlight=False, markup=False)
    if result.note:
        console.print(f"note: {result.note}", highlight=False, markup=False)
    if not result.hits:
        return
    table = Table(show_lines=True, expand=True)
    table.add_column("id", justify="right", no_wrap=True)
    table.add_column("when", no_wrap=True)
    table.add_column("where / why", max_width=22, overflow="fold")
    table.add_column("message", ratio=1, overflow="fold")
    for hit in result.hits:
        message = " ".join(hit.message.split())
        if len(message) > 300:
            message = message[:299] + "…"
        where = f"{hit.agent_platform} {hit.role}"
        if hit.p_tag:
            where += f" {hit.p_tag}"
        if hit.is_pinned:
            where += " (pinned)"
        cells = (
            str(hit.id),
            hit.message_at.astimezone().strftime("%Y-%m-%d\n%H:%M"),
            f"{where}\n{_why(result, hit.why)}",
            message,
        )
        table.add_row(*(Text(cell) for cell in cells))
    console.print(table)


def _why(result: SearchResult, why: MatchWhy) -> str:
    parts: list[str] = []
    if why.fts_rank is not None:
        parts.append(f"fts#{why.fts_rank}")
    if why.vector_rank is not None:
        parts.append(f"vec#{why.vector_rank}")
    if why.similarity is not None:
        parts.append(f"sim {why.similarity:.2f}")
    if why.words_matched is not None:
        parts.append(f"{why.words_matched} word(s)")
    if why.score is not None:
        parts.append(f"score {why.score:.4f}")
    return " ".join(parts) or result.used
