"""Session summariser: one summary per session, written again when the session changes.

Each pass looks at the sessions that got turns since the last pass (a cursor on
``memory.id``, :mod:`agents_memory.store.session_summaries`), plus those a forget or a rewrite
left ``stale``, and writes a summary for each whose turns changed since its summary. Without
an LLM (or when the role's budget is spent, or the answer is invalid) the summary is the
extractive one (:mod:`.session_digest`); with one, it asks under the **clusterer** role's
budget and routing (it writes summaries), once the session has been quiet for
:data:`QUIET_MINUTES`: a session still going gets the extractive one as a ``draft`` meanwhile,
so a growing session costs no LLM call per turn.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, Final

import psycopg

from agents_memory.coldpath import prompts
from agents_memory.coldpath.base import LLM, Job, JobContext
from agents_memory.coldpath.replies import SessionSummaryReply
from agents_memory.coldpath.session_digest import (
    SUMMARY_MAX_CHARS,
    DigestAction,
    DigestTurn,
    SessionDigest,
    digest,
    search_terms,
)
from agents_memory.coldpath.session_text import clip_line
from agents_memory.coldpath.units import describe, is_outage, unit_of_work
from agents_memory.store import session_summaries as store
from agents_memory.store.coldpath.coldqueue import JobReport
from agents_memory.store.session_summaries import NewSessionSummary, SessionState

log = logging.getLogger(__name__)

ROLE: Final = "clusterer"
WINDOW: Final = 20_000
"""Memory ids looked at per step of the cursor."""
QUIET_MINUTES: Final = 20.0
PROMPT_TURN_CHARS: Final = 500
PROMPT_BUDGET_CHARS: Final = 10_000


class SessionSummarizerJob(Job):
    name = "sessions"

    def run(self, ctx: JobContext) -> JobReport:
        report = JobReport(self.name)
        conn = ctx.conn
        with unit_of_work(conn):
            after = store.seen_id(conn, ctx.user_id)
            newest = store.newest_memory_id(conn)
        llm = ctx.llm if ctx.llm is not None and ctx.llm.available else None
        quiet_before = ctx.now - timedelta(minutes=QUIET_MINUTES)
        failed: set[tuple[str, str]] = set()
        while True:
            upto = max(after, min(newest, after + WINDOW))
            with unit_of_work(conn):
                found = store.changed_sessions(
                    conn,
                    ctx.user_id,
                    after_id=after,
                    upto_id=upto,
                    draft_before=quiet_before if llm is not None else None,
                    limit=ctx.batch_size + len(failed) + 1,
                )
            todo = [s for s in found if (s.agent_platform, s.session_id) not in failed]
            for state in todo[: ctx.batch_size]:
                if not self._one(ctx, state, llm, quiet_before, report):
                    failed.add((state.agent_platform, state.session_id))
            if len(todo) <= ctx.batch_size:
                with unit_of_work(conn):
                    store.set_seen_id(conn, ctx.user_id, upto)
                after = upto
                if upto >= newest:
                    break
            if not ctx.drain or ctx.stop_requested():
                break
            if ctx.progress is not None:
                ctx.progress(self.name, report.processed, 0)
        return report

    def _one(
        self,
        ctx: JobContext,
        state: SessionState,
        llm: LLM | None,
        quiet_before: datetime,
        report: JobReport,
    ) -> bool:
        conn = ctx.conn
        try:
            with unit_of_work(conn):
                turns, actions = session_material(conn, ctx.user_id, state)
                extractive = digest(turns, actions)
                written: NewSessionSummary | None = None
                quiet = state.last_at < quiet_before
                if llm is not None and quiet:
                    written = llm_summary(llm, state, turns, actions, extractive)
                    if written is not None:
                        report.llm_calls += 1
                if written is None:  # no LLM, no valid answer, or the session still going
                    report.heuristic += 1
                    model = "draft" if llm is not None and not quiet else "extractive"
                    written = extractive_summary(turns, actions, extractive, model)
                store.save_session_summary(conn, ctx.user_id, state, written)
        except Exception as exc:
            if is_outage(exc):
                raise
            log.warning(
                "sessions: %s %s failed: %s", state.agent_platform, state.session_id, describe(exc)
            )
            report.failed += 1
            report.notes.append(f"{state.agent_platform} {state.session_id}: {describe(exc)}")
            return False
        report.processed += 1
        return True


def session_material(
    conn: psycopg.Connection[Any], user_id: int, state: SessionState
) -> tuple[list[DigestTurn], list[DigestAction]]:
    """The session's turns and actions as the digest takes them."""
    turns = [
        DigestTurn(t.role, t.message, t.message_at)
        for t in store.session_turns(conn, user_id, state.agent_platform, state.session_id)
    ]
    actions = [
        DigestAction(a.kind, tuple(a.targets or ()), a.command, a.outcome, a.exit_code)
        for a in store.session_actions(conn, user_id, state.agent_platform, state.session_id)
    ]
    return turns, actions


def extractive_summary(
    turns: list[DigestTurn],
    actions: list[DigestAction],
    extractive: SessionDigest | None = None,
    model: str = "extractive",
) -> NewSessionSummary:
    """The summary without a model (``model`` ``draft`` while an LLM's is pending)."""
    made = extractive or digest(turns, actions)
    text = made.render(SUMMARY_MAX_CHARS)
    return NewSessionSummary(made.title, text, search_terms(turns, actions, text), model)


def rebuild_session_summary(
    conn: psycopg.Connection[Any], user_id: int, platform: str, session_id: str
) -> bool:
    """The extractive summary written again from the session's turns as they are now (after a
    forget); dropped when none is left. True when one was written."""
    state = store.session_state(conn, user_id, platform, session_id)
    if state is None:
        store.drop_session_summary(conn, user_id, platform, session_id)
        return False
    turns, actions = session_material(conn, user_id, state)
    store.save_session_summary(conn, user_id, state, extractive_summary(turns, actions))
    return True


def llm_summary(
    llm: LLM,
    state: SessionState,
    turns: list[DigestTurn],
    actions: list[DigestAction],
    extractive: SessionDigest,
) -> NewSessionSummary | None:
    """The LLM's summary (``None``: no valid answer, or the budget is spent)."""
    answer = llm.complete(
        ROLE,
        SessionSummaryReply,
        system=prompts.SESSION_SUMMARY_SYSTEM,
        user=_prompt(state, turns, extractive),
        max_tokens=500,
    )
    if answer is None or not answer.summary.strip():
        return None
    text = clip_line(answer.summary.strip(), SUMMARY_MAX_CHARS)
    if len(answer.summary.strip()) <= SUMMARY_MAX_CHARS:
        text = answer.summary.strip()
    title = clip_line(" ".join(answer.title.split()), 100)
    return NewSessionSummary(title, text, search_terms(turns, actions, text), "llm")


def _prompt(state: SessionState, turns: list[DigestTurn], extractive: SessionDigest) -> str:
    lines = [
        f"[{t.role}] " + " ".join(t.text.split())[:PROMPT_TURN_CHARS]
        for t in turns
        if t.text.strip()
    ]
    while sum(len(line) + 1 for line in lines) > PROMPT_BUDGET_CHARS and len(lines) > 2:
        lines = [*lines[:2], *lines[3:]] if len(lines) > 4 else lines[:-1]
    known = [line for line in extractive.lines() if line.startswith(("Files changed", "Commands:"))]
    header = [
        f"Client: {state.agent_platform}",
        f"Project: {state.git_root or 'none'}",
        f"Turns: {state.turns} ({state.started_at:%Y-%m-%d %H:%M} .. {state.last_at:%H:%M})",
    ]
    if known:
        header.append("Known actions: " + " | ".join(known))
    return "\n".join(header) + "\n\n" + "\n".join(lines)
