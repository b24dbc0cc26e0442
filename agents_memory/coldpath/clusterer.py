"""Clusterer: per-tag summaries of history older than the short-term window, then (only when
``ARCHIVE_AFTER_DAYS`` > 0) soft archive of raw rows older than that.

Rows older than ``SHORT_TERM_DAYS`` are grouped by canonical project tag (by git root when no
tag owns them; rows outside any repository form a "no project" group) and by period
(``CLUSTERER_PERIOD_DAYS``, weeks from Monday). Each group-period
gets one summary - the LLM's, or an extractive one (the most central sentences, decisions
first) - stored in ``tag_summaries`` with its source ids. A period already summarised is left
alone until rows it does not cover arrive. Archive runs only once no summary is outstanding, so
the brief keeps the gist of what leaves the hot set; pinned rows are never archived.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from agents_memory.coldpath import prompts
from agents_memory.coldpath.base import Job, JobContext
from agents_memory.coldpath.replies import ClustererReply
from agents_memory.coldpath.text import Turn, extractive_summary
from agents_memory.coldpath.units import describe, is_outage, unit_of_work
from agents_memory.store import summaries as store
from agents_memory.store.coldpath.coldqueue import JobReport
from agents_memory.store.summaries import PeriodGroup, SummaryTurn
from agents_memory.store.tags import list_project_tags

log = logging.getLogger(__name__)

TURN_CHARS = 1500
PROMPT_TURN_CHARS = 600
PROMPT_BUDGET_CHARS = 12_000
ARCHIVE_BATCH = 5000


class ClustererJob(Job):
    name = "clusterer"

    def run(self, ctx: JobContext) -> JobReport:
        report = JobReport(self.name)
        outstanding = self._summarise(ctx, report)
        if ctx.settings.archive_after_days > 0:
            if outstanding:
                report.notes.append("archive waits for outstanding summaries")
            else:
                self._archive(ctx, report)
        return report

    def _summarise(self, ctx: JobContext, report: JobReport) -> bool:
        """Summarise one batch (everything with ``drain``); True if work is left."""
        conn, settings = ctx.conn, ctx.settings
        with unit_of_work(conn):
            idle = store.idle_since(conn, ctx.user_id)
        rest = timedelta(minutes=settings.clusterer_idle_minutes)
        if not ctx.drain and idle is not None and ctx.now - idle < rest:
            report.skipped += 1
            return False
        before = ctx.now - timedelta(days=settings.short_term_days)
        failed: set[tuple[int | None, str | None, object]] = set()
        names = {t.id: t.name for t in list_project_tags(conn)}
        while True:
            with unit_of_work(conn):
                groups = store.periods_to_summarise(
                    conn,
                    ctx.user_id,
                    before=before,
                    period_days=settings.clusterer_period_days,
                    limit=ctx.batch_size + len(failed) + 1,
                )
            todo = [g for g in groups if _key(g) not in failed]
            for group in todo[: ctx.batch_size]:
                if not self._one(ctx, group, names, report):
                    failed.add(_key(group))
            left = len(todo) > ctx.batch_size
            if not ctx.drain or not todo or ctx.stop_requested():
                break
            if ctx.progress is not None:
                ctx.progress(self.name, report.processed, 0)
        outstanding = left or bool(failed)
        with unit_of_work(conn):
            store.set_idle(conn, ctx.user_id, None if outstanding else ctx.now)
        return outstanding

    def _one(
        self, ctx: JobContext, group: PeriodGroup, names: dict[int, str], report: JobReport
    ) -> bool:
        conn, settings = ctx.conn, ctx.settings
        before = ctx.now - timedelta(days=settings.short_term_days)
        end = store.period_end(group, settings.clusterer_period_days, before)
        label = names.get(group.tag_id, "?") if group.tag_id is not None else group.git_root
        try:
            with unit_of_work(conn):
                ids = sorted(set(group.ids) | set(group.stored_ids or ()))
                turns = store.summary_turns(conn, ids, max_chars=TURN_CHARS)
                summary, model = self._write(ctx, str(label), group, turns, report)
                store.save_summary(
                    conn,
                    ctx.user_id,
                    group,
                    period_end=end,
                    summary=summary,
                    source_ids=[t.id for t in turns],
                    model=model,
                )
        except Exception as exc:
            if is_outage(exc):
                raise
            log.warning("clusterer: %s %s failed: %s", label, group.period_start, describe(exc))
            report.failed += 1
            report.notes.append(f"{label} {group.period_start.date()}: {describe(exc)}")
            return False
        report.processed += 1
        return True

    def _write(
        self,
        ctx: JobContext,
        label: str,
        group: PeriodGroup,
        turns: list[SummaryTurn],
        report: JobReport,
    ) -> tuple[str, str]:
        limit = ctx.settings.clusterer_summary_max_chars
        if ctx.llm is not None and ctx.llm.available:
            answer = ctx.llm.complete(
                "clusterer",
                ClustererReply,
                system=prompts.CLUSTERER_SYSTEM,
                user=_prompt(label, group, turns),
                max_tokens=600,
            )
            text = answer.summary if answer else None
            if text and text.strip():
                report.llm_calls += 1
                return _bounded(text.strip(), limit), "llm"
        report.heuristic += 1
        plain = [Turn(t.id, t.role, t.message) for t in turns]
        return extractive_summary(plain, limit), "extractive"

    def _archive(self, ctx: JobContext, report: JobReport) -> None:
        before = ctx.now - timedelta(days=ctx.settings.archive_after_days)
        total = 0
        while True:
            with unit_of_work(ctx.conn):
                count = store.archive_older_than(
                    ctx.conn, ctx.user_id, before=before, at=ctx.now, limit=ARCHIVE_BATCH
                )
            total += count
            if count < ARCHIVE_BATCH or not ctx.drain or ctx.stop_requested():
                break
        if total:
            report.processed += total
            report.notes.append(f"archived {total} row(s) older than {before.date()}")


def _key(group: PeriodGroup) -> tuple[int | None, str | None, object]:
    return (group.tag_id, group.git_root, group.period_start)


def _prompt(label: str, group: PeriodGroup, turns: list[SummaryTurn]) -> str:
    lines = [
        f"[{t.message_at:%Y-%m-%d %H:%M} {t.role}] "
        + " ".join(t.message.split())[:PROMPT_TURN_CHARS]
        for t in turns
    ]
    # Too long: keep an even spread of the period rather than only its start.
    while sum(len(line) + 1 for line in lines) > PROMPT_BUDGET_CHARS and len(lines) > 2:
        lines = lines[::2] if len(lines) > 40 else lines[:-1]
    header = f"Project: {label}\nPeriod: from {group.period_start:%Y-%m-%d}, {len(turns)} turns"
    return header + "\n\n" + "\n".join(lines)


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit("\n", 1)[0]
    return cut if len(cut) > limit // 2 else text[: limit - 3].rstrip() + "..."
