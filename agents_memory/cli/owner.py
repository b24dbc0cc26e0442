"""``mcp-agents-memory forget`` and ``restore``: the owner's hand on the pool (the services are
:mod:`agents_memory.ops.forget` and :mod:`agents_memory.ops.restore`)."""

from __future__ import annotations

from datetime import datetime

import click

from agents_memory.cli.common import debug_option, settings_from
from agents_memory.cli.vocabulary import (
    platform_filter_option,
    project_option,
    since_option,
    until_option,
)
from agents_memory.daterange import period_bound
from agents_memory.errors import UnknownProjectError
from agents_memory.ops.forget import (
    DEFAULT_MIN_SCORE,
    ForgetPlan,
    ForgetReport,
    apply_forget,
    plan_forget,
)
from agents_memory.ops.forget import (
    describe as describe_forget,
)
from agents_memory.store.entry import open_user_connection
from agents_memory.store.owner.forget import Selection


@click.command()
@click.option("--id", "ids", type=int, multiple=True, help="This memory id (repeatable).")
@click.option("--session", metavar="ID", help="Every turn of this session id.")
@project_option("Every turn of this project (an alias finds its project) or git root path.")
@platform_filter_option("Every turn of this client")
@click.option("--device", metavar="NAME", help="Every turn captured on this device.")
@since_option("Turns from the start of this day or period")
@until_option("Turns up to the end of this day or period")
@click.option("--match", help="The hybrid search's hits for this text (shown with their scores).")
@click.option(
    "--min-score",
    type=click.FloatRange(0.0, 1.0),
    default=DEFAULT_MIN_SCORE,
    show_default=True,
    help="With --match: the least relevance (0-1, the best hit is near 1) a hit needs.",
)
@click.option("--dry-run", is_flag=True, help="Only show what would be forgotten.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before forgetting.")
@debug_option
@click.pass_context
def forget(
    ctx: click.Context,
    ids: tuple[int, ...],
    session: str | None,
    project: str | None,
    platform: str | None,
    device: str | None,
    since: str | None,
    until: str | None,
    match: str | None,
    min_score: float,
    dry_run: bool,
    yes: bool,
) -> None:
    """Forget memories for good: the rows, their history and vectors, and a tombstone so
    capture never stores them again. Conditions combine (all must hold). Shows the count and
    a sample first, then asks (unless --yes).
    """
    settings = settings_from(ctx)
    now = datetime.now().astimezone()
    selection = Selection(
        ids=ids,
        session=session,
        project=project,
        platform=platform,
        device=device,
        since=_day_bound(since, now, "--since", start=True),
        until=_day_bound(until, now, "--until", start=False),
    )
    with open_user_connection(settings, prepare=True) as opened:
        try:
            plan = plan_forget(
                opened.conn,
                opened.user_id,
                settings,
                selection,
                match=match,
                min_score=min_score,
                now=now,
            )
        except UnknownProjectError as exc:
            raise click.BadParameter(str(exc), param_hint="--project") from exc
        opened.conn.commit()
        _print_plan(plan)
        if plan.count == 0 or dry_run:
            return
        if not yes and not click.confirm(
            f"Forget these {plan.count} memories for good?", default=False
        ):
            click.echo("nothing was forgotten")
            return
        report = apply_forget(opened.conn, opened.user_id, settings, plan)
    _print_report(report)


def _day_bound(text: str | None, now: datetime, option: str, *, start: bool) -> datetime | None:
    if not text:
        return None
    try:
        return period_bound(text, now, start=start)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from exc


def _print_plan(plan: ForgetPlan) -> None:
    if plan.note:
        click.echo(f"note: {plan.note}", err=True)
    if plan.min_score is not None:
        click.echo(f"search hits (forgotten when the score is at least {plan.min_score}):")
        for hit in plan.hits:
            mark = "forget" if hit.chosen and hit.id in plan.ids else "keep  "
            click.echo(
                f"  {mark} score {hit.score:.3f}  #{hit.id}  "
                f"{hit.message_at.astimezone():%Y-%m-%d %H:%M}  {hit.agent_platform} "
                f"{hit.role}: {hit.preview}"
            )
        if not plan.hits:
            click.echo("  (no hits)")
    click.echo(f"{plan.count} memories would be forgotten" if plan.count else "nothing matches")
    for row in plan.sample:
        archived = " (archived)" if not row.is_active else ""
        preview = " ".join(row.preview.split())
        click.echo(
            f"  #{row.id}  {row.message_at.astimezone():%Y-%m-%d %H:%M}  {row.agent_platform} "
            f"{row.role}{archived}: {preview}"
        )
    if plan.count > len(plan.sample):
        click.echo(f"  … and {plan.count - len(plan.sample)} more")


def _print_report(report: ForgetReport) -> None:
    for line in describe_forget(report):
        click.echo(line)


@click.command()
@click.option("--id", "memory_id", type=int, required=True, help="The archived memory's id.")
@debug_option
@click.pass_context
def restore(ctx: click.Context, memory_id: int) -> None:
    """Bring an archived memory back (archive is what `manage_knowledge remove` and the Cold
    Path's age-based archive do). A forgotten memory cannot be restored: forget is for good."""
    from agents_memory.ops.restore import restore_memory

    settings = settings_from(ctx)
    with open_user_connection(settings, prepare=True) as opened:
        restore_memory(opened.conn, opened.user_id, memory_id)
    click.echo(f"memory {memory_id} restored")
