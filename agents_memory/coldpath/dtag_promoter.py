"""The d_tag promoter: project-tag discovery from frequent d_tags.

1. d_tags on tagged, active rows of the last ``DTAG_PROMOTE_WINDOW_DAYS``, used >= 2 times,
   top 50;
2. the ``clusterer`` LLM role groups near-synonyms (the canonical must be an input tag; an
   existing project tag is never folded into another; each d_tag counts once);
3. clusters whose summed count reaches ``DTAG_PROMOTE_MIN_COUNT`` and that are not yet a
   project tag become *suggestions* with the model's recommendation - nothing is created until
   a person confirms, and a rejected name is never suggested again. No LLM answer: no new
   suggestions this run (the JS original: a keyword alone is too often a generic word);
4. existing tags file untagged rows (without git identity) that carry exactly their name.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agents_memory.coldpath import prompts
from agents_memory.coldpath.base import JobContext
from agents_memory.coldpath.replies import DtagClusters
from agents_memory.coldpath.text import normalize_tag
from agents_memory.coldpath.units import unit_of_work
from agents_memory.store import tags as tag_store
from agents_memory.store.coldpath import tag_signals as signals
from agents_memory.store.coldpath import tag_suggestions as suggestion_store
from agents_memory.store.coldpath.coldqueue import JobReport


def promote_dtags(ctx: JobContext, report: JobReport) -> None:
    if not ctx.settings.dtag_promote_enabled:
        return
    with unit_of_work(ctx.conn):
        filed = _retro_tag(ctx)
    if filed:
        report.processed += filed
        report.notes.append(f"filed {filed} row(s) under existing tags by d_tag")
    since = ctx.now - timedelta(days=ctx.settings.dtag_promote_window_days)
    with unit_of_work(ctx.conn):
        counts = signals.frequent_dtags(ctx.conn, ctx.user_id, since=since)
        tag_names = {t.name for t in tag_store.list_project_tags(ctx.conn)}
    if not counts:
        return
    if ctx.llm is None or not ctx.llm.available:
        report.notes.append("d_tag promoter: no LLM, no new-tag suggestions")
        return
    listing = "\n".join(
        f"- {tag} ({n} uses){' (project)' if tag in tag_names else ''}" for tag, n in counts
    )
    answer = ctx.llm.complete(
        "clusterer",
        DtagClusters,
        system=prompts.DTAG_CLUSTER_SYSTEM,
        user="Tags:\n" + listing,
        max_tokens=4096,
    )
    if answer is None:
        report.heuristic += 1
        report.notes.append("d_tag promoter: no valid LLM answer, no new-tag suggestions")
        return
    report.llm_calls += 1
    with unit_of_work(ctx.conn):
        for cluster in clean_clusters(answer, dict(counts), tag_names):
            uses = sum(dict(counts)[m] for m in cluster["members"])
            if uses < ctx.settings.dtag_promote_min_count or cluster["canonical"] in tag_names:
                continue
            opened = suggestion_store.suggest_new_tag(
                ctx.conn,
                ctx.user_id,
                cluster["canonical"],
                members=cluster["members"],
                uses=uses,
                recommendation=cluster["recommendation"],
                rationale=cluster["rationale"],
                model_name="llm",
            )
            if opened is not None:
                report.processed += 1


def clean_clusters(
    answer: DtagClusters, counts: dict[str, int], tag_names: set[str]
) -> list[dict[str, Any]]:
    """Keep what the JS original allows: canonical among the inputs, members among the inputs and
    not
    already used, no project tag folded into another."""
    used: set[str] = set()
    kept: list[dict[str, Any]] = []
    for raw in answer.clusters:
        canonical = normalize_tag(raw.canonical)
        if canonical is None or canonical not in counts or canonical in used:
            continue
        members = [canonical]
        for item in raw.members:
            member = normalize_tag(item)
            if member is None or member in used or member in members or member not in counts:
                continue
            if member in tag_names:
                continue  # an existing project tag is never folded into another
            members.append(member)
        used.update(members)
        kept.append(
            {
                "canonical": canonical,
                "members": members,
                "recommendation": raw.recommendation,
                "rationale": raw.rationale or None,
            }
        )
    return kept


def _retro_tag(ctx: JobContext) -> int:
    total = 0
    for tag in tag_store.list_project_tags(ctx.conn):
        total += tag_store.retro_tag_dtag(ctx.conn, tag.id, tag.name, user_id=ctx.user_id)
    return total
