"""``mcp-agents-memory import --from seed-a|seed-b|claude-mem``: bring memory over from the
source systems (the JS original's PostgreSQL, unified-memory-mcp's SQLite or JSONL dump) and
from claude-mem's SQLite. Thin: call :mod:`agents_memory.ops.seed_import` (or its siblings)
and print the report."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from agents_memory.cli.common import settings_from


def seed_import(
    ctx: click.Context, kind: str, source: str, *, dry_run: bool, seed_model: str, as_json: bool
) -> None:
    """``import --from seed-a|seed-b|claude-mem SOURCE``: memories, tags, suggestions and
    profiles from a source system, idempotently. A second run changes nothing; rows this pool
    already holds with other text are reported as conflicts and left as they are; what has no
    equivalent here is listed, not dropped."""
    from agents_memory.ops.claude_mem_import import import_claude_mem
    from agents_memory.ops.seed_import import import_seed_a
    from agents_memory.ops.seed_import_b import import_seed_b

    settings = settings_from(ctx)
    with _bar(enabled=not as_json) as progress:
        if kind == "seed-a":
            report = import_seed_a(
                settings, source, dry_run=dry_run, progress=progress, source_model=seed_model
            )
        elif kind == "claude-mem":
            report = import_claude_mem(settings, Path(source), dry_run=dry_run, progress=progress)
        else:
            report = import_seed_b(settings, Path(source), dry_run=dry_run, progress=progress)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        for line in report.lines():
            click.echo(line)


@contextmanager
def _bar(*, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on a terminal (stderr), nothing otherwise."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("import"), BarColumn(), MofNCompleteColumn(), console=Console(stderr=True)
    ) as bar:
        task = bar.add_task("import", total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total or None)
