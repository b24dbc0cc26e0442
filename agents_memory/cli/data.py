"""``mcp-agents-memory export`` and ``import``: your data out of the pool and back in.

Both only parse arguments, call the owner services (:mod:`agents_memory.ops.export`,
:mod:`agents_memory.ops.importer`) and print; a progress bar shows on a terminal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from agents_memory.cli.common import debug_option, settings_from
from agents_memory.cli.vocabulary import (
    json_option,
    platform_filter_option,
    project_option,
    since_option,
    until_option,
)
from agents_memory.errors import UnknownProjectError
from agents_memory.ops.seed_map import SEED_A_MODEL


@contextmanager
def _progress(title: str) -> Iterator[Callable[[str, int, int | None], None] | None]:
    """A progress bar on stderr when it is a terminal; nothing otherwise."""
    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    with Progress(
        TextColumn(f"[bold]{title}"),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("", total=None)

        def update(stage: str, done: int, total: int | None) -> None:
            bar.update(task, completed=done, total=total, description=stage)

        yield update


@click.command("export")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@project_option("Only this project (its aliases included).")
@since_option()
@until_option()
@platform_filter_option()
@click.option("--include-archived", is_flag=True, help="Also export archived memories.")
@click.option("--vectors", is_flag=True, help="Also export the embeddings (a bigger bundle).")
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing bundle file, or write into a folder that is not empty.",
)
@click.option(
    "--format",
    "fmt_name",
    type=click.Choice(["bundle", "markdown"]),
    default="bundle",
    show_default=True,
    help="bundle: one zip to import elsewhere; markdown: a readable tree of files.",
)
@debug_option
@click.pass_context
def export_cmd(
    ctx: click.Context,
    path: Path | None,
    project: str | None,
    since: str | None,
    until: str | None,
    platform: str | None,
    include_archived: bool,
    vectors: bool,
    force: bool,
    fmt_name: str,
) -> None:
    """Write the memory pool (or a slice of it) to PATH.

    The bundle (default PATH agents-memory-<time>.zip) holds a manifest with versions, counts
    and checksums, and one JSONL file per table: memories, their edits, profiles, project tags,
    suggestions and summaries. Capture cursors stay behind (they belong to this machine).
    Files are written readable by you only; PATH's folder must exist, and an existing file
    is replaced only with --force.
    """
    from agents_memory.ops.export import ExportRequest, Format, default_path, export

    now = datetime.now().astimezone()
    kind: Format = "markdown" if fmt_name == "markdown" else "bundle"
    request = ExportRequest(
        path=path or default_path(kind, now),
        format=kind,
        project=project,
        since=since,
        until=until,
        platform=platform,
        include_archived=include_archived,
        vectors=vectors,
        force=force,
    )
    with _progress("export") as progress:
        try:
            report = export(settings_from(ctx), request, now=now, progress=progress)
        except UnknownProjectError as exc:
            raise click.BadParameter(str(exc), param_hint="--project") from exc
    counts = ", ".join(f"{n} {t}" for t, n in report.counts.items() if n)
    rate = report.counts.get("memory", 0) / report.seconds if report.seconds > 0 else 0.0
    click.echo(
        f"exported to {report.path} ({report.files} file(s), {report.size:,} bytes) in "
        f"{report.seconds:.1f} s ({rate:,.0f} turns/s): {counts or 'nothing'}"
    )
    if report.person is not None:
        click.echo(
            f"{report.person}'s own memory only: teammates' shared projects are theirs to export"
        )


@click.command("import")
@click.argument("source")
@click.option(
    "--from",
    "kind",
    type=click.Choice(["bundle", "seed-a", "seed-b", "claude-mem"]),
    default="bundle",
    show_default=True,
    help="bundle: an export bundle (SOURCE = its file); seed-a: the TypeScript "
    "mcp-agents-memory (SOURCE = its DATABASE_URL); seed-b: unified-memory-mcp (SOURCE = its "
    "SQLite file or its JSONL dump); claude-mem: the Claude Code memory plugin (SOURCE = its "
    "~/.claude-mem/claude-mem.db).",
)
@click.option("--dry-run", is_flag=True, help="Check and count everything; write nothing.")
@click.option(
    "--seed-model",
    default=SEED_A_MODEL,
    show_default=True,
    help="seed-a: the embedding model its vectors come from (its EMBEDDING_MODEL); they are "
    "kept only when this pool is stamped with the same model and dimension.",
)
@json_option("the report")
@debug_option
@click.pass_context
def import_cmd(
    ctx: click.Context, source: str, kind: str, dry_run: bool, seed_model: str, as_json: bool
) -> None:
    """Import an export bundle, or another memory's (--from seed-a|seed-b|claude-mem).

    Idempotent: a second import changes nothing. Memories are matched by their stable key: one
    already here with the same text is left alone; one here with other text is a conflict,
    reported and never overwritten; a key that holds another session's turn here is imported
    under a scoped key. Imported text passes the same admission as capture (private spans,
    exclusions, redaction). Every row is reported as new, already present or refused with its
    reason; new users, devices and filled profile fields are listed.
    """
    if kind != "bundle":
        from agents_memory.cli.seeds import seed_import

        seed_import(ctx, kind, source, dry_run=dry_run, seed_model=seed_model, as_json=as_json)
        return
    path = Path(source)
    if not path.is_file():
        raise click.BadParameter(f"no bundle file at {source}", param_hint="SOURCE")
    from agents_memory.ops.importer import import_bundle

    with _progress("import") as progress:
        report = import_bundle(
            settings_from(ctx), path, home=Path.home(), dry_run=dry_run, progress=progress
        )
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
        return
    click.echo(("dry run: would import " if dry_run else "imported ") + str(path))
    for line in report.lines():
        click.echo(line)
