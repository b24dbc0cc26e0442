"""Librarian: keeps ``users.core_profile`` / ``sub_profile`` current.

Gate: at least ``LIBRARIAN_MSG_THRESHOLD`` new active user turns since the last successful run,
and ``LIBRARIAN_COOLDOWN_HOURS`` since the last attempt. Input: the current profiles, the
``LIBRARIAN_RECENT_SLICE`` newest user turns and the ``LIBRARIAN_HISTORY_SLICE`` oldest ones as
identity anchors (the blend fights recency bias); assistant text is never read. Output: each
field is prose or ``null`` = keep as is (null-preserve: never deletes); a value that is itself
JSON is refused; only changed values are written, each with a ``profile_history`` row that
names the turns read (so forgetting one of them empties the field, and this job builds it again
from the turns left: a field a forget emptied is shown to the model as empty, never as its old
text).

Without an LLM answer the profiles are left alone: a heuristic profile would be noise.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from typing import Any

from agents_memory.coldpath import prompts
from agents_memory.coldpath.base import Job, JobContext
from agents_memory.coldpath.replies import LibrarianReply
from agents_memory.coldpath.text import dominant_script
from agents_memory.coldpath.units import describe, is_outage, unit_of_work
from agents_memory.config import Settings
from agents_memory.store.coldpath import librarian as state_store
from agents_memory.store.coldpath.coldqueue import JobReport
from agents_memory.store.coldpath.librarian import UserTurn
from agents_memory.store.knowledge import ProfileField, get_profiles, set_profile

log = logging.getLogger(__name__)

TURN_CHARS = 500
_FIELDS: tuple[ProfileField, ...] = ("core_profile", "sub_profile")


class LibrarianJob(Job):
    name = "librarian"

    def enabled(self, settings: Settings) -> bool:
        return settings.librarian_enabled

    def run(self, ctx: JobContext) -> JobReport:
        report = JobReport(self.name)
        with unit_of_work(ctx.conn):
            state = state_store.librarian_state(ctx.conn, ctx.user_id)
        reason = self._gate(ctx, state)
        if reason:
            report.skipped = 1
            report.notes.append(reason)
            return report
        if ctx.llm is None or not ctx.llm.available:
            report.skipped = 1
            report.heuristic = 1
            report.notes.append("no LLM: profiles left unchanged")
            return report
        try:
            self._update(ctx, state, report)
        except Exception as exc:
            if is_outage(exc):
                raise
            log.warning("librarian failed: %s", describe(exc))
            report.failed = 1
            report.notes.append(f"failed: {describe(exc)}")
        return report

    def _gate(self, ctx: JobContext, state: state_store.LibrarianState) -> str | None:
        threshold = ctx.settings.librarian_msg_threshold
        if state.new_turns < threshold:
            return f"{state.new_turns} new user turns (< {threshold})"
        cooldown = timedelta(hours=ctx.settings.librarian_cooldown_hours)
        if state.last_run_at is not None and ctx.now - state.last_run_at < cooldown:
            return f"cooling down until {(state.last_run_at + cooldown).isoformat()}"
        return None

    def _update(
        self, ctx: JobContext, state: state_store.LibrarianState, report: JobReport
    ) -> None:
        assert ctx.llm is not None
        conn, settings = ctx.conn, ctx.settings
        with unit_of_work(conn):  # the hammer guard commits before the model is asked
            state_store.mark_attempt(conn, ctx.user_id, ctx.now)
        with unit_of_work(conn):
            recent, anchors = state_store.user_turn_slices(
                conn,
                ctx.user_id,
                recent=settings.librarian_recent_slice,
                oldest=settings.librarian_history_slice,
                max_chars=TURN_CHARS,
            )
            current = get_profiles(conn, ctx.user_id)
        old = {"core_profile": current.core_profile, "sub_profile": current.sub_profile}
        read = [t.id for t in [*recent, *anchors]]
        answer = ctx.llm.complete(
            "librarian",
            LibrarianReply,
            system=prompts.LIBRARIAN_SYSTEM,
            user=_prompt(old, recent, anchors),
            max_tokens=settings.librarian_max_tokens,
        )
        if answer is None:
            report.heuristic = 1
            report.skipped = 1
            report.notes.append("no valid LLM answer: profiles kept, retried after the cooldown")
            return
        report.llm_calls = 1
        with unit_of_work(conn):
            for field in _FIELDS:
                value, note = accept_profile(getattr(answer, field), old[field])
                if note:
                    report.notes.append(f"{field}: {note}")
                if value is not None:
                    set_profile(
                        conn, ctx.user_id, field, value, changed_by="librarian", sources=read
                    )
            state_store.mark_success(conn, ctx.user_id, state.user_turns)
        report.processed = 1


def accept_profile(value: Any, old: str | None) -> tuple[str | None, str | None]:
    """The value to write (``None`` = keep the old one) and a note on why not."""
    if value is None:
        return None, None
    if not isinstance(value, str):
        return None, "not text, kept"
    text = value.strip()
    if not text:
        return None, "empty, kept"
    if _is_json_blob(text):
        return None, "JSON instead of prose, refused"
    if text == (old or "").strip():
        return None, None
    return text, "updated"


def _is_json_blob(text: str) -> bool:
    if text.startswith(("{", "[")):
        return True
    try:
        parsed = json.loads(text)
    except ValueError:
        return False
    return isinstance(parsed, dict | list)


def _prompt(old: dict[str, str | None], recent: list[UserTurn], anchors: list[UserTurn]) -> str:
    def lines(turns: list[UserTurn]) -> list[str]:
        return [f"[{_day(t.message_at)}] {' '.join(t.message.split())}" for t in turns]

    parts = [
        "Current core_profile:",
        old["core_profile"] or "(empty)",
        "",
        "Current sub_profile:",
        old["sub_profile"] or "(empty)",
        "",
        "Recent messages from the user (oldest first):",
        *lines(recent),
    ]
    if anchors:
        parts += [
            "",
            "Identity anchors - the user's oldest messages, not current activity:",
            *lines(anchors),
        ]
    language = dominant_script(t.message for t in [*recent, *anchors])
    if language:
        parts += ["", f"The user writes mostly in {language}: write the profiles in {language}."]
    return "\n".join(parts)


def _day(moment: datetime) -> str:
    return moment.date().isoformat()
