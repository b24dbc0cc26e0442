"""AliasPromoter: questions for a person about project tags.

1. Alias candidates among canonical root tags (at most ``PROJECT_ALIAS_MAX_TAGS``), from
   the JS original's signals and weights: an explicit user rename statement naming both (100),
   vector centroids within cosine distance 0.28 (30), d_tag Jaccard >= 0.25 (18), name
   similarity >= 0.55 (16) - the last two lowered to 0.18/0.45 when a tag is new or rare
   (<= 3 rows or <= 14 days old), which also adds 8. The best ``PROJECT_ALIAS_CANDIDATE_LIMIT``
   pairs (explicit statements first) are judged: by the ``project_alias_judge`` LLM role, or
   without one by a conservative rule (only an explicit statement qualifies).
2. A qualifying verdict (rename/alias/same_project, same project, confidence >=
   ``PROJECT_ALIAS_PENDING_MIN``) becomes a pending suggestion; a verdict below the bar is kept
   as ``expired`` so the pair is not judged again for ``PROJECT_ALIAS_REJUDGE_DAYS``. A pair a
   person confirmed or rejected is never suggested again. Nothing merges until a person
   confirms, unless ``ALIAS_AUTO_APPLY`` is on and the JS original's strict auto-apply rule holds.
3. The d_tag promoter (``coldpath/dtag_promoter.py``): frequent d_tags -> new-tag suggestions.

Runs at most hourly (``--once`` always runs).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import timedelta
from itertools import combinations

import numpy as np

from agents_memory.coldpath import prompts
from agents_memory.coldpath.base import Job, JobContext
from agents_memory.coldpath.dtag_promoter import promote_dtags
from agents_memory.coldpath.replies import AliasJudgement
from agents_memory.coldpath.text import jaccard, name_similarity
from agents_memory.coldpath.units import describe, is_outage, unit_of_work
from agents_memory.store import tags as tag_store
from agents_memory.store.coldpath import tag_signals as signals
from agents_memory.store.coldpath import tag_suggestions as suggestion_store
from agents_memory.store.coldpath.coldqueue import JobReport
from agents_memory.store.coldpath.tag_signals import RootTagStats, SampleRow
from agents_memory.store.coldpath.tag_suggestions import AliasVerdict

log = logging.getLogger(__name__)

RUN_EVERY = timedelta(hours=1)
QUALIFYING = frozenset({"rename", "alias", "same_project"})
WEIGHTS = {"explicit": 100, "vector": 30, "dtag": 18, "name": 16, "low_frequency": 8}
VECTOR_MAX_DISTANCE = 0.28
AUTO_APPLY_MIN = 0.98
_STAMP = "coldpath.alias_promoter.ran_at.{user_id}"


@dataclass(slots=True)
class Candidate:
    """A pair of root tags and why they might be one project. ``source`` aliases into
    ``target`` by default: the smaller/newer into the bigger/older."""

    source: RootTagStats
    target: RootTagStats
    signals: dict[str, float] = field(default_factory=dict)
    statements: list[tuple[int, str]] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(WEIGHTS[name] for name in self.signals)

    @property
    def explicit(self) -> bool:
        return "explicit" in self.signals


class AliasPromoterJob(Job):
    name = "alias_promoter"

    def run(self, ctx: JobContext) -> JobReport:
        report = JobReport(self.name)
        key = _STAMP.format(user_id=ctx.user_id)
        with unit_of_work(ctx.conn):
            last = signals.stamp(ctx.conn, key)
        if not ctx.drain and last is not None and ctx.now - last < RUN_EVERY:
            report.skipped = 1
            return report
        if ctx.settings.project_alias_enabled:
            self._aliases(ctx, report)
        promote_dtags(ctx, report)
        with unit_of_work(ctx.conn):
            signals.set_stamp(ctx.conn, key, ctx.now)
        return report

    def _aliases(self, ctx: JobContext, report: JobReport) -> None:
        settings = ctx.settings
        with unit_of_work(ctx.conn):
            found = find_candidates(ctx)
            blocked = suggestion_store.blocked_alias_pairs(
                ctx.conn, ctx.user_id, rejudge_days=settings.project_alias_rejudge_days
            )
        fresh = [c for c in found if frozenset((c.source.id, c.target.id)) not in blocked]
        fresh.sort(key=lambda c: (not c.explicit, -c.score, c.source.id, c.target.id))
        for candidate in fresh[: settings.project_alias_candidate_limit]:
            try:
                with unit_of_work(ctx.conn):
                    self._judge_and_record(ctx, candidate, report)
            except Exception as exc:
                if is_outage(exc):
                    raise
                log.warning("alias promoter: %s failed", describe(exc))
                report.failed += 1
                report.notes.append(
                    f"{candidate.source.name}/{candidate.target.name}: {describe(exc)}"
                )

    def _judge_and_record(self, ctx: JobContext, candidate: Candidate, report: JobReport) -> None:
        verdict = judge(ctx, candidate, report)
        qualifies = (
            verdict.relation in QUALIFYING
            and verdict.confidence >= ctx.settings.project_alias_pending_min
        )
        if not qualifies:
            suggestion_store.record_alias_verdict(ctx.conn, ctx.user_id, verdict, "expired")
            report.skipped += 1
            return
        if ctx.settings.alias_auto_apply and verdict.auto_apply_eligible:
            tag_store.set_alias(ctx.conn, verdict.source_tag_id, verdict.target_tag_id)
            suggestion_store.record_alias_verdict(ctx.conn, ctx.user_id, verdict, "auto_applied")
            suggestion_store.supersede_alias_suggestions(
                ctx.conn, ctx.user_id, verdict.source_tag_id
            )
            report.notes.append(f"auto-applied {candidate.source.name} -> {candidate.target.name}")
        else:
            suggestion_store.record_alias_verdict(ctx.conn, ctx.user_id, verdict, "pending")
        report.processed += 1


def find_candidates(ctx: JobContext) -> list[Candidate]:
    """Pairs of root tags with at least one real signal (low frequency alone is not one)."""
    conn = ctx.conn
    roots = signals.root_tags(conn, ctx.settings.project_alias_max_tags)
    if len(roots) < 2:
        return []
    ids = [t.id for t in roots]
    dtags = signals.tag_dtags(conn, ids)
    centroids = signals.tag_centroids(conn, ids)
    statements = signals.rename_statements(conn, ctx.user_id, prompts.RENAME_PATTERNS)
    low = {t.id for t in roots if t.rows <= 3 or ctx.now - t.created_at <= timedelta(days=14)}
    found: list[Candidate] = []
    for left, right in combinations(roots, 2):
        source, target = _direction(left, right)
        candidate = Candidate(source, target)
        either_low = left.id in low or right.id in low
        said = [(i, text) for i, text in statements if _names_both(text, left.name, right.name)]
        if said:
            candidate.signals["explicit"] = float(len(said))
            candidate.statements = said[:5]
        if left.id in centroids and right.id in centroids:
            distance = 1.0 - float(np.dot(centroids[left.id], centroids[right.id]))
            if distance <= VECTOR_MAX_DISTANCE:
                candidate.signals["vector"] = round(distance, 4)
        overlap = jaccard(dtags.get(left.id, ()), dtags.get(right.id, ()))
        if overlap >= (0.18 if either_low else 0.25):
            candidate.signals["dtag"] = round(overlap, 4)
        similar = name_similarity(left.name, right.name)
        if similar >= (0.45 if either_low else 0.55):
            candidate.signals["name"] = round(similar, 4)
        if candidate.signals:
            if either_low:
                candidate.signals["low_frequency"] = 1.0
            found.append(candidate)
    return found


def judge(ctx: JobContext, candidate: Candidate, report: JobReport) -> AliasVerdict:
    """The LLM judge's verdict, or the conservative rule without one."""
    samples: dict[int, list[SampleRow]] = {}
    answer: AliasJudgement | None = None
    if ctx.llm is not None and ctx.llm.available:
        samples = signals.sample_rows(ctx.conn, [candidate.source.id, candidate.target.id])
        answer = ctx.llm.complete(
            "project_alias_judge",
            AliasJudgement,
            system=prompts.ALIAS_JUDGE_SYSTEM,
            user=_judge_prompt(candidate, samples),
            max_tokens=500,
        )
    if answer is None:
        report.heuristic += 1
        return _rule_verdict(candidate)
    report.llm_calls += 1
    shown = {row.id for rows in samples.values() for row in rows} | {
        i for i, _ in candidate.statements
    }
    source, target = candidate.source, candidate.target
    if not answer.source_should_alias_target and answer.same_project:
        source, target = target, source
    relation: str = answer.relation
    if relation in QUALIFYING and not answer.same_project:
        relation = "insufficient"
    if relation in QUALIFYING and set(candidate.signals) <= {"vector", "low_frequency"}:
        relation = "insufficient"  # vector similarity alone never makes one project
    conflicts = [i for i in answer.conflict_memory_ids if i in shown]
    confidence = answer.confidence
    return AliasVerdict(
        source_tag_id=source.id,
        target_tag_id=target.id,
        relation=relation,
        confidence=confidence,
        candidate_sources=sorted(candidate.signals),
        evidence_memory_ids=[i for i in answer.evidence_memory_ids if i in shown],
        conflict_memory_ids=conflicts,
        signals=dict(candidate.signals),
        rationale=answer.rationale or None,
        model_name="llm",
        auto_apply_eligible=(
            candidate.explicit
            and relation in QUALIFYING
            and confidence >= AUTO_APPLY_MIN
            and not conflicts
        ),
    )


def _rule_verdict(candidate: Candidate) -> AliasVerdict:
    """No LLM: an explicit statement makes a rename question; anything else stays a memo."""
    explicit = candidate.explicit
    return AliasVerdict(
        source_tag_id=candidate.source.id,
        target_tag_id=candidate.target.id,
        relation="rename" if explicit else "insufficient",
        confidence=0.9 if explicit else round(min(0.8, candidate.score / 100), 4),
        candidate_sources=sorted(candidate.signals),
        evidence_memory_ids=[i for i, _ in candidate.statements],
        conflict_memory_ids=[],
        signals=dict(candidate.signals),
        rationale=(
            "the user said so: " + candidate.statements[0][1][:200]
            if explicit
            else "similar tags, no statement that they are one project"
        ),
        model_name=None,
        auto_apply_eligible=False,
    )


def _direction(left: RootTagStats, right: RootTagStats) -> tuple[RootTagStats, RootTagStats]:
    """(source, target): the tag with fewer rows (then the newer one) aliases into the other."""
    if (left.rows, right.created_at, right.id) < (right.rows, left.created_at, left.id):
        return left, right
    return right, left


def _names_both(text: str, left: str, right: str) -> bool:
    lowered = text.lower()
    return _mentions(lowered, left) and _mentions(lowered, right)


def _mentions(lowered: str, name: str) -> bool:
    spellings = {name, name.replace("-", " "), name.replace("-", "_")}
    return any(
        re.search(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", lowered) for spelling in spellings
    )


def _judge_prompt(candidate: Candidate, samples: dict[int, list[SampleRow]]) -> str:
    parts: list[str] = []
    for label, tag in (("Source", candidate.source), ("Target", candidate.target)):
        last = tag.last_at.date().isoformat() if tag.last_at else "never"
        parts.append(
            f"{label} tag: {tag.name} (id {tag.id}; {tag.rows} rows; created "
            f"{tag.created_at.date().isoformat()}; last used {last})"
        )
        for row in samples.get(tag.id, []):
            parts.append(f"  memory {row.id} [{row.role}]: {' '.join(row.message.split())}")
    if candidate.statements:
        parts.append("Explicit statements by the user:")
        parts += [
            f"  memory {i}: {' '.join(text.split())[:400]}" for i, text in candidate.statements
        ]
    parts.append(f"Signals: {candidate.signals}")
    return "\n".join(parts)
