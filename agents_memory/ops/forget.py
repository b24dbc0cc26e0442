"""Forgetting, as the owner asks for it: the one service behind ``mcp-agents-memory forget``
(and the coming web console).

Two steps, so a person always sees what goes before it goes: :func:`plan_forget` finds the
rows (by id, session, project, platform, device, period, or the hybrid search's hits for a
text whose relevance reaches ``min_score``) and returns their count and a sample, writing
nothing; :func:`apply_forget` deletes exactly the planned rows for good, in one transaction,
through :func:`agents_memory.store.owner.forget.forget_memories` (tombstones, derived text, rows).
A summary that lost only some of its sources gets its text rebuilt at once from what is left
(extractively, no model), and is marked stale so the Clusterer writes it again. A profile
field built from a forgotten turn is emptied (its history entries holding that text go with
it) and the librarian builds it again from the turns left, not from the old text.

The relevance of a ``--match`` hit is the search's fused score (the full-text and vector arms
combined, 0 to 1, before the recency, pin and session boosts: an old turn is as relevant as a
new one); in the ILIKE fallback, the share of the query's words the turn holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Final

import psycopg

from agents_memory.adapters import platform_filter
from agents_memory.coldpath.session_summarizer import rebuild_session_summary
from agents_memory.coldpath.text import Turn, extractive_summary
from agents_memory.config import Settings
from agents_memory.errors import AdapterError, OwnerRequestError
from agents_memory.recall.search import backend_query_vector, prepare_search, search_user
from agents_memory.recall.search_request import SearchRequest
from agents_memory.store.owner import forget as forget_store
from agents_memory.store.owner.derived import settle_search_words
from agents_memory.store.owner.forget import ForgetCounts, SampleRow, Selection
from agents_memory.store.projects import resolve_project
from agents_memory.store.search import MAX_LIMIT, SearchHit
from agents_memory.store.summaries import summary_turns

DEFAULT_MIN_SCORE: Final = 0.5
"""The least relevance a ``--match`` hit needs to be forgotten (the best hit is near 1)."""
SAMPLE_SIZE: Final = 5
_SUMMARY_TURN_CHARS: Final = 1500


@dataclass(frozen=True, slots=True)
class MatchHit:
    """A search hit for ``--match``: its relevance and whether it reaches the threshold."""

    id: int
    score: float
    chosen: bool
    message_at: datetime
    agent_platform: str
    role: str
    preview: str


@dataclass(slots=True)
class ForgetPlan:
    """What a forget would delete (nothing is written to make it)."""

    ids: list[int]
    sample: list[SampleRow]
    hits: list[MatchHit] = field(default_factory=list)
    """With ``match``: every hit, chosen or not, best first."""
    min_score: float | None = None
    note: str | None = None
    """Why the search ran full-text only, when it did."""

    @property
    def count(self) -> int:
        return len(self.ids)


@dataclass(slots=True)
class ForgetReport:
    rows: int
    history: int
    tombstones: int
    summaries_dropped: int
    summaries_rebuilt: int
    profile_fields_dropped: list[str]
    """Profile fields built from forgotten turns, emptied; the librarian builds them again
    from the turns left on its next pass."""
    profile_history_removed: int
    vectors_cleared: int
    """Vectors of the turns that followed forgotten ones (made from their end), to be made
    again."""
    actions: int = 0
    """Actions (tool calls) of the forgotten turns and sessions, deleted and tombstoned."""
    session_summaries_rebuilt: int = 0
    session_summaries_dropped: int = 0
    """Summaries of the sessions the forgotten turns were in: written again from the turns
    left, or dropped with the session's last turn."""

    @property
    def profile_rebuild(self) -> bool:
        return bool(self.profile_fields_dropped)

    @classmethod
    def of(cls, counts: ForgetCounts) -> ForgetReport:
        derived = counts.derived
        return cls(
            rows=counts.rows,
            history=counts.history,
            tombstones=counts.tombstones,
            summaries_dropped=derived.summaries_dropped,
            summaries_rebuilt=len(derived.stale_summaries),
            profile_fields_dropped=list(derived.profile_fields_dropped),
            profile_history_removed=derived.profile_history_removed,
            vectors_cleared=derived.embeddings_cleared,
            actions=counts.actions,
        )


def plan_forget(
    conn: psycopg.Connection[Any],
    user_id: int,
    settings: Settings,
    selection: Selection,
    *,
    match: str | None = None,
    min_score: float = DEFAULT_MIN_SCORE,
    now: datetime,
) -> ForgetPlan:
    """The rows ``selection`` (and, with ``match``, the search hits reaching ``min_score``)
    name, with a sample. Raises :class:`OwnerRequestError` when nothing narrows it down."""
    match = match.strip() if match else None
    selection = resolved_selection(conn, selection)
    if selection.empty and not match:
        raise OwnerRequestError(
            "say what to forget: --id, --session, --project, --platform, --device, "
            "--since/--until or --match"
        )
    if match is None:
        ids = forget_store.selected_ids(conn, user_id, selection)
        return ForgetPlan(ids, forget_store.sample_rows(conn, ids, SAMPLE_SIZE))
    hits, note = _match_hits(conn, user_id, settings, selection, match, min_score, now)
    chosen = [hit.id for hit in hits if hit.chosen]
    if not selection.empty:
        allowed = set(forget_store.selected_ids(conn, user_id, selection))
        chosen = [i for i in chosen if i in allowed]
    sample = forget_store.sample_rows(conn, chosen, SAMPLE_SIZE)
    return ForgetPlan(sorted(chosen), sample, hits, min_score, note)


def resolved_selection(conn: psycopg.Connection[Any], selection: Selection) -> Selection:
    """``selection`` in the names the rows hold: a project through the one project rule
    (:func:`~agents_memory.store.projects.resolve_project`: an alias finds its project, a
    misspelt one is refused with the close names; a git root path is taken as it is), a client
    by its full or short name (``claude`` is ``claude-code``)."""
    project = selection.project
    if project and "/" not in project:
        project = resolve_project(conn, project)
    try:
        platform = platform_filter(selection.platform)
    except AdapterError as exc:
        raise OwnerRequestError(str(exc)) from exc
    return replace(selection, project=project, platform=platform)


def _match_hits(
    conn: psycopg.Connection[Any],
    user_id: int,
    settings: Settings,
    selection: Selection,
    match: str,
    min_score: float,
    now: datetime,
) -> tuple[list[MatchHit], str | None]:
    request = prepare_search(
        SearchRequest(
            query=match, platform=selection.platform, limit=MAX_LIMIT, include_archived=True
        ),
        device_name=settings.device_name,
        now=now,
    )
    vector = backend_query_vector(settings, request.text)
    result = search_user(conn, user_id, request, vector.vector, settings)
    words = max(1, len(match.split()))
    hits = []
    for hit in result.hits:
        score = _relevance(hit, words)
        hits.append(
            MatchHit(
                id=hit.id,
                score=score,
                chosen=score >= min_score,
                message_at=hit.message_at,
                agent_platform=hit.agent_platform,
                role=hit.role,
                preview=" ".join(hit.message.split())[: forget_store.SAMPLE_CHARS],
            )
        )
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits, vector.note or result.note


def _relevance(hit: SearchHit, words: int) -> float:
    if hit.why.fused_score is not None:
        return round(min(1.0, hit.why.fused_score), 4)
    if hit.why.words_matched is not None:
        return round(hit.why.words_matched / words, 4)
    return 0.0


def apply_forget(
    conn: psycopg.Connection[Any], user_id: int, settings: Settings, plan: ForgetPlan
) -> ForgetReport:
    """Delete the planned rows for good and deal with what was built from them, in one
    transaction (committed here); then the search's word statistics are counted again."""
    with conn.transaction():
        counts = forget_store.forget_memories(conn, user_id, plan.ids)
        for stale in counts.derived.stale_summaries:
            _rebuild_summary(conn, stale, settings.clusterer_summary_max_chars)
        rebuilt = [
            rebuild_session_summary(conn, owner, platform, session)
            for owner, platform, session in counts.derived.stale_sessions
        ]
    conn.commit()
    if counts.rows:
        settle_search_words(conn)
        conn.commit()
    return replace(
        ForgetReport.of(counts),
        session_summaries_rebuilt=sum(rebuilt),
        session_summaries_dropped=len(rebuilt) - sum(rebuilt),
    )


def describe(report: ForgetReport) -> list[str]:
    """What a forget did, in lines for a person (the CLI prints them, the console shows them)."""
    lines = [
        f"forgot {report.rows} memories ({report.history} history entries); "
        f"{report.tombstones} tombstones keep capture from storing them again"
    ]
    if report.actions:
        lines.append(f"actions: {report.actions} tool calls of theirs forgotten with them")
    if report.summaries_dropped or report.summaries_rebuilt:
        lines.append(
            f"summaries: {report.summaries_dropped} dropped, {report.summaries_rebuilt} "
            "rebuilt from what is left (the background worker writes them again)"
        )
    if report.session_summaries_rebuilt or report.session_summaries_dropped:
        lines.append(
            f"session summaries: {report.session_summaries_rebuilt} written again from the turns"
            f" left, {report.session_summaries_dropped} dropped with their sessions"
        )
    if report.profile_rebuild:
        fields = " and ".join(f.replace("_", " ") for f in report.profile_fields_dropped)
        lines.append(
            f"profile: {fields} built from forgotten turns emptied "
            f"({report.profile_history_removed} history entries removed); the background "
            "worker writes it again from the turns left on its next pass"
        )
    if report.vectors_cleared:
        lines.append(f"vectors: {report.vectors_cleared} of the turns after them made again")
    return lines


def _rebuild_summary(
    conn: psycopg.Connection[Any], stale: forget_store.StaleSummary, max_chars: int
) -> None:
    """The summary's text again, from the sources it has left (the forgotten rows are gone
    by now, in the same transaction); dropped when none of them exists any more."""
    turns = summary_turns(conn, stale.source_ids, max_chars=_SUMMARY_TURN_CHARS)
    if not turns:
        forget_store.drop_summary(conn, stale.id)
        return
    text = extractive_summary([Turn(t.id, t.role, t.message) for t in turns], max_chars)
    forget_store.replace_summary_text(conn, stale.id, text)
