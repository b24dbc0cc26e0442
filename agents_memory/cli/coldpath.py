"""``mcp-agents-memory coldpath`` and ``mcp-agents-memory reembed``.

Registered on the main group by ``cli.py``; ``python -m agents_memory.cli.coldpath`` runs the two
on their own (tests start the worker that way).
"""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from agents_memory.cli.common import configure_logging, debug_option, run_main, settings_from
from agents_memory.coldpath.registry import job_names
from agents_memory.config import Settings, load_settings

if TYPE_CHECKING:
    from rich.progress import Progress

    from agents_memory.store.coldpath.coldqueue import JobReport
    from agents_memory.store.database import Database

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@click.command()
@click.option("--once", is_flag=True, help="Work through the whole backlog, then exit.")
@click.option(
    "--job",
    "only",
    multiple=True,
    type=click.Choice(job_names()),
    help="Run only this job (repeatable).",
)
@debug_option
@click.pass_context
def coldpath(ctx: click.Context, once: bool, only: tuple[str, ...]) -> None:
    """Run the background worker (the Cold Path): project tags, vectors, your profile,
    summaries, alias suggestions.

    One worker per shared pool runs the jobs (a PostgreSQL advisory lock; others stand by and
    take over within COLD_PATH_INTERVAL_SEC when it dies). It wakes when the capture daemon
    stores rows and every COLD_PATH_INTERVAL_SEC. SIGTERM finishes the current batch and exits.
    With --once it drains the backlog and exits (for scripts and benchmarks).
    """
    settings = settings_from(ctx)
    if not settings.cold_path_enabled:
        click.echo(
            "the Cold Path is disabled on this machine (COLD_PATH_ENABLED=false); "
            "one machine of the pool should run it"
        )
        return
    from agents_memory.coldpath.registry import load_jobs
    from agents_memory.coldpath.worker import ColdPathWorker

    db = _open(settings)
    llm, embedder = _backends(settings, db)
    jobs = load_jobs(only or None)
    # The fresh lane's own model (normal priority, one thread) loads on the first live turn.
    fresh = None if once or embedder is None else _fresh_embedder(settings)
    try:
        with _progress(enabled=once) as progress:
            worker = ColdPathWorker(
                settings, db, jobs=jobs, llm=llm, embedder=embedder, progress=progress,
                fresh_embedder=fresh,
            )  # fmt: skip
            with worker, _stop_on_signals(worker.request_stop):
                if once:
                    _print_reports(worker.run_once())
                else:
                    worker.serve()
    finally:
        if llm is not None:
            llm.close()
        for model in (embedder, fresh):
            if model is not None:
                model.close()


def _fresh_embedder(settings: Settings) -> Any:
    from agents_memory.embeddings import create_embedder

    return create_embedder(settings, threads=1)


def _open(settings: Settings) -> Database:
    """Locate the database and apply migrations (exits 1 when it is unreachable); prepare
    the vector column, tolerating a stamp of another model (the embedder job then waits)."""
    from agents_memory.embeddings import embedding_spec
    from agents_memory.errors import EmbeddingMismatchError
    from agents_memory.store import database, vectors

    db = database.open_database(settings)
    spec = embedding_spec(settings)
    if spec is not None:
        with database.connect(db, autocommit=True) as conn:
            try:
                vectors.ensure_embedding_column(conn, spec.model, spec.dim)
            except EmbeddingMismatchError as exc:
                log.warning("%s; the embedder job waits until then", exc)
    return db


def _backends(settings: Settings, db: Database) -> tuple[Any, Any]:
    from agents_memory.coldpath.llm import DbUsageRecorder
    from agents_memory.coldpath.llm_routing import create_llm
    from agents_memory.embeddings import create_embedder
    from agents_memory.store import database

    embedder = create_embedder(settings, background=True)
    llm = create_llm(settings, DbUsageRecorder(lambda: database.connect(db, autocommit=True)))
    if llm is None:
        log.info(
            "no LLM configured (LOCAL_LLM_BASE_URL / LLM_BASE_URL): degraded, every job uses "
            "its heuristic"
        )
    if embedder is None:
        log.info("no embedding backend (EMBEDDING_BACKEND=none): search stays full-text only")
    return llm, embedder


@contextmanager
def _stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        log.info("%s received: finishing the current batch", signal.Signals(signum).name)
        stop()

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def _progress(*, enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress bar per job on a terminal (stderr), nothing otherwise."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    with _bar(Console(stderr=True)) as bar:
        tasks: dict[str, Any] = {}

        def update(job: str, done: int, total: int) -> None:
            if job not in tasks:
                tasks[job] = bar.add_task(job, total=total or None)
            bar.update(tasks[job], completed=done, total=total or None)

        yield update


def _bar(console: Any) -> Progress:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


def _print_reports(reports: list[JobReport]) -> None:
    if not reports:
        click.echo("no Cold Path job ran")
    for report in reports:
        line = (
            f"{report.name}: {report.processed} processed, {report.failed} failed, "
            f"{report.skipped} skipped"
        )
        if report.llm_calls or report.heuristic:
            line += f", {report.llm_calls} LLM calls, {report.heuristic} by heuristic"
        if report.notes:
            line += " — " + "; ".join(report.notes)
        click.echo(line)


@click.command()
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--force", is_flag=True, help="Rebuild even when the model has not changed.")
@debug_option
@click.pass_context
def reembed(ctx: click.Context, yes: bool, force: bool) -> None:
    """Rebuild every stored vector with the configured embedding model.

    Needed after changing EMBEDDING_BACKEND / EMBEDDING_MODEL / EMBEDDING_DIM. Vectors are
    built in a second column (resumable: run it again after an interruption) and swapped in
    one transaction; search keeps working on the old vectors meanwhile.
    """
    from agents_memory.coldpath.reembed import plan_reembed, run_reembed
    from agents_memory.embeddings import create_embedder, embedding_spec
    from agents_memory.errors import ConfigError
    from agents_memory.store import database

    settings = settings_from(ctx)
    spec = embedding_spec(settings)
    if spec is None:
        raise ConfigError("EMBEDDING_BACKEND=none: there is no model to embed with")
    db = database.open_database(settings)
    with database.connect(db, autocommit=True) as conn:
        plan = plan_reembed(conn, spec.model, spec.dim, force=force)
        if plan.nothing_to_do is not None and plan.old_dim is not None:
            click.echo(f"nothing to do: {plan.nothing_to_do}")
            return
        if plan.old_dim is not None and not yes:
            verb = "Resume rebuilding" if plan.resume else "Rebuild"
            click.confirm(
                f"{verb} {plan.rows} vectors: {plan.old_model} ({plan.old_dim} dims) → "
                f"{spec.model} ({spec.dim} dims)?",
                abort=True,
            )
        embedder = create_embedder(settings)
        assert embedder is not None
        with embedder, _reembed_bar(plan.rows) as progress:
            result = run_reembed(
                conn, embedder, batch_size=max(embedder.batch_size, 16), progress=progress
            )
    if plan.old_dim is None:
        click.echo(f"no vectors were stored yet; the column is ready for {spec.model}")
        return
    left = (
        f"; {result.left_without_vector} rows left for the Cold Path"
        if result.left_without_vector
        else ""
    )
    click.echo(
        f"re-embedded {result.embedded} rows with {result.model} ({result.dim} dims) in "
        f"{result.seconds:.1f} s ({result.rate:.1f} rows/s){left}"
    )


@contextmanager
def _reembed_bar(total: int) -> Iterator[Callable[[int, int], None] | None]:
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    with _bar(Console(stderr=True)) as bar:
        task = bar.add_task("reembed", total=total)
        yield lambda done, _total: bar.update(task, completed=done)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.pass_context
def _standalone(ctx: click.Context) -> None:
    """The Cold Path commands on their own."""
    settings = load_settings()
    configure_logging("DEBUG" if "--debug" in sys.argv else settings.log_level, settings.secrets())
    ctx.obj = settings


_standalone.add_command(coldpath)
_standalone.add_command(reembed)


def main() -> None:
    run_main(_standalone)


if __name__ == "__main__":
    main()
