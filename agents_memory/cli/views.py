"""How capture results look on a terminal (rich tables and progress bars)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from agents_memory.adapters import short_platform
from agents_memory.capture.backfill import BackfillReport
from agents_memory.cli.tables import compact_time, table_console
from agents_memory.ops.status import CaptureStatus
from agents_memory.ops.units import human_bytes


@contextmanager
def backfill_progress(*, enabled: bool) -> Iterator[Callable[[Path, int, int], None] | None]:
    """A progress bar on stderr when it is a terminal; nothing otherwise."""
    if not enabled:
        yield None
        return
    with Progress(
        TextColumn("[bold]backfill"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.description}"),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("", total=None)

        def update(path: Path, done: int, total: int) -> None:
            bar.update(task, completed=done, total=total, description=path.name[:40])

        yield update


def counts_table(columns: tuple[str, ...], *, title: str | None = None) -> Table:
    """A table of counts per platform that fits 80 columns: the platform and the counts never
    wrap (a count cut short would lie), the last column (free text) folds."""
    table = Table(title=title, show_edge=False, pad_edge=False)
    for index, column in enumerate(columns):
        last = index == len(columns) - 1
        table.add_column(
            column,
            justify="left" if index == 0 or last else "right",
            no_wrap=not last,
            overflow="fold",
            min_width=11 if index == 0 else None,
        )
    return table


def print_backfill(report: BackfillReport) -> None:
    table = counts_table(
        ("platform", "files", "new", "updated", "already stored", "dropped", "bad", "unknown"),
        title="backfill",
    )
    for name, totals in sorted(report.platforms.items()):
        unknown = ", ".join(f"{k} x{v}" for k, v in sorted(totals.unknown.items())[:4])
        table.add_row(
            short_platform(name),
            str(totals.files),
            str(totals.inserted),
            str(totals.updated),
            str(totals.already_stored),
            str(totals.dropped),
            str(totals.issues),
            unknown or "-",
        )
    console = table_console()
    console.print(table)
    _print_repaired(console, {name: t.repaired for name, t in report.platforms.items()})
    for item in report.unreadable:
        line = escape(f"{item.platform}: {item}")
        console.print(f"[red]not imported:[/red] {line}", highlight=False, soft_wrap=True)
    collisions = sum(t.collisions for t in report.platforms.values())
    if collisions:
        console.print(
            f"[yellow]{collisions:,} turn(s) reuse a message id that another session's turn"
            " holds:[/yellow] each was stored apart; no other turn was changed",
            highlight=False,
        )
    rate = report.turns_seen / report.seconds if report.seconds > 0 else 0.0
    console.print(
        f"{report.stored:,} rows stored, {report.already_stored:,} already stored, in "
        f"{report.seconds:.1f} s ({rate:,.0f} turns/s read)",
        highlight=False,
    )


def print_status(status: CaptureStatus) -> None:
    console = table_console()
    daemon = f"running (pid {status.daemon_pid})" if status.daemon_pid else "not running"
    console.print(f"device {status.device} · database {status.database} · daemon {daemon}")
    if status.paused:
        console.print(f"[yellow]{status.paused}[/yellow]: `memory-capture resume` ends it")
    if status.project_opted_out:
        console.print(
            f"[yellow]this project opted out of memory ({status.project_opted_out}): not"
            " captured, no brief, no recall[/yellow]; `mcp-agents-memory memory on` undoes it"
        )
    if status.paused_projects:
        names = ", ".join(status.paused_projects)
        console.print(
            f"[yellow]paused projects (not captured): {names}[/yellow]:"
            " `mcp-agents-memory tags set NAME --active` resumes one"
        )
    table = counts_table(
        ("platform", "files", "tracked", "rows", "last capture", "behind", "bad", "unknown")
    )
    for name, item in sorted(status.platforms.items()):
        last = compact_time(item.last_capture_at) if item.last_capture_at else "-"
        behind = (
            f"{item.files_behind} ({human_bytes(item.lag_bytes)})" if item.files_behind else "0"
        )
        unknown = ", ".join(f"{k} x{v}" for k, v in sorted(item.unknown_kinds.items())[:3])
        table.add_row(
            short_platform(name),
            str(item.files_on_disk),
            str(item.files_tracked),
            str(item.rows),
            last,
            behind,
            str(item.issues),
            unknown or "-",
        )
    console.print(table)
    _print_repaired(console, {name: item.repaired for name, item in status.platforms.items()})
    for name, item in sorted(status.platforms.items()):
        if item.stored_apart:
            console.print(
                f"{name}: {item.stored_apart} turn(s) reuse a message id another session's turn"
                " holds; each is stored apart, no turn was written over",
                highlight=False,
            )
    _print_coldpath(console, status.coldpath)
    _print_prompts(console, status.prompts)
    for name, entries in sorted(status.installed.items()):
        shown = "; ".join(entries) if entries else "not installed"
        console.print(f"[bold]{name}[/bold]: {shown}")
    for problem in status.problems:
        console.print(f"[red]problem:[/red] {escape(problem)}", highlight=False, soft_wrap=True)


def _print_repaired(console: Console, repaired: dict[str, int]) -> None:
    """One line per platform with records kept after invalid UTF-8 was replaced by U+FFFD."""
    for name, count in sorted(repaired.items()):
        if count:
            lines = "line" if count == 1 else "lines"
            console.print(f"{name}: {count} {lines} with invalid UTF-8 repaired (U+FFFD)")


def _print_prompts(console: Console, prompts: dict[str, Any] | None) -> None:
    """Per-prompt recall today: how many prompts got memories, and the newest of them."""
    if not prompts:
        return
    console.print(
        f"per-prompt recall today: {prompts['given']} of {prompts['prompts']} prompts got memories",
        highlight=False,
    )
    for item in prompts["recent"]:
        at = compact_time(datetime.fromisoformat(item["at"]))
        where = f" {item['project']}" if item["project"] else ""
        console.print(
            f"  {at} {item['platform']}{where} (best {item['best']}): "
            + "; ".join(f"id {m['id']} {m['preview']}" for m in item["memories"]),
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


def _print_coldpath(console: Console, cold: dict[str, Any] | None) -> None:
    """The Cold Path's totals (rows with a vector, tagged, waiting) and each job's total
    work; the last pass only says when it ran."""
    if not cold:
        return
    backlog = cold["backlog"]
    worker = cold.get("worker")
    who = worker.get("application_name") if isinstance(worker, dict) else None
    rows, unembedded, untagged = (
        backlog.get("rows", 0),
        backlog.get("unembedded"),
        backlog["untagged"],
    )
    vectors = (
        "no vectors"
        if unembedded is None
        else f"{rows - unembedded:,} with a vector ({unembedded:,} waiting)"
    )
    state = f"running ({who})" if worker else "no worker running"
    if not worker and cold.get("starting"):
        state = "starting (the worker is connected; its first pass follows a short warm-up)"
    console.print(
        f"background worker (tags, vectors, profile, summaries): {state}; "
        f"{rows:,} rows: {vectors}, {rows - untagged:,} tagged ({untagged:,} waiting), "
        f"{backlog.get('with_error')} with errors; last run {_when(cold.get('last_run_at'))}",
        highlight=False,
    )
    if cold.get("embed_eta"):
        console.print(f"  vectors: {cold['embed_eta']}", highlight=False)
    for job in cold.get("jobs") or []:
        console.print(
            f"  {job['job']}: {job['total_processed']:,} processed in all, "
            f"{job['total_failed']:,} failed; last run {_when(job['ran_at'])} "
            f"({job['processed']} processed, {job['llm_calls']} LLM calls, "
            f"{job['heuristic']} heuristic), last work {_when(job.get('worked_at'))}",
            highlight=False,
        )
    for reason in cold.get("degraded") or []:
        console.print(f"  degraded: {reason}")


def local_time(value: datetime) -> str:
    """The one way times are shown: ISO 8601 in the local zone, to the minute
    (``2026-12-01 21:14+01:00``)."""
    return value.astimezone().isoformat(sep=" ", timespec="minutes")


def _when(value: Any) -> str:
    return local_time(value) if isinstance(value, datetime) else "never"
