"""Memory that speaks up: the few memories a user's prompt needs, and silence when there are none.

A per-prompt hook (Claude Code's and Codex's ``UserPromptSubmit``, Gemini CLI's ``BeforeAgent``)
hands the user's prompt to :func:`recall_for_prompt`, which runs the same search as
``search_memory`` — first in the prompt's project (the git repository of the event's ``cwd``,
as the brief finds it), then everywhere — and adds at most :data:`MAX_MEMORIES` memories in at
most :data:`MAX_CHARS` characters, one line each (:mod:`.prompt_lines`).

Silence is the default. Nothing is added for an acknowledgement or a command
(:mod:`.prompt_acks`, which also drops the words that only ask memory, "again", "last time",
from the prompt's search), inside an excluded project (``CAPTURE_EXCLUDE``) or while capture of the
client is paused, or when no hit clears ``SearchTuning.speak_above``: the search's own
calibrated confidence (:mod:`agents_memory.store.search.confidence`, the one that makes a
search "weak"), with a stricter bar for memory nobody asked for. Hits of the current session
and memories the session already got (its brief, an earlier prompt: table ``prompt_recalls``)
are left out before the bar is applied. The search itself keeps out archived and forgotten
turns; turns are stored redacted.

Each prompt's outcome is recorded (:mod:`agents_memory.store.prompt_recalls`: the memory ids,
the best confidence, why; a hash of the prompt, never its text) unless ``record=False`` (the
console's preview).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import psycopg

from agents_memory.admission.filters import ExcludeMatcher
from agents_memory.config import Settings
from agents_memory.gitinfo import git_info
from agents_memory.recall.prompt_acks import is_acknowledgement, search_words
from agents_memory.recall.prompt_lines import MAX_CHARS, MAX_MEMORIES, render
from agents_memory.recall.search import QueryVector, search_tuning
from agents_memory.store.capture.pause import paused_until
from agents_memory.store.prompt_recalls import given_ids, record_given
from agents_memory.store.search import SearchFilters, SearchHit, SearchTuning, search_memories
from agents_memory.store.search.confidence import speaks
from agents_memory.store.search.terms import parse_query

__all__ = ["MAX_CHARS", "MAX_MEMORIES", "PromptRecall", "recall_for_prompt"]

PROMPT_LIMIT = 4_000
"""A prompt is searched on its first this many characters."""
CANDIDATES = 10

Reason = Literal["added", "empty", "ack", "weak", "none", "off", "excluded", "paused"]
Scope = Literal["project", "everywhere"]


@dataclass(frozen=True, slots=True)
class PromptRecall:
    """What a prompt gets: ``text`` ("" = nothing), the memories in it, the best hit's
    confidence and why (``added`` or the reason for silence); ``scope`` says where the
    memories were found and ``git_root`` is the prompt's project (when it has one)."""

    text: str
    memory_ids: tuple[int, ...]
    best: float
    reason: Reason
    scope: Scope | None = None
    git_root: str | None = None


def _text(event: dict[str, Any], key: str) -> str | None:
    value = event.get(key)
    return value if isinstance(value, str) and value.strip() else None


def recall_for_prompt(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    platform: str,
    event: dict[str, Any],
    *,
    vector: Callable[[str], QueryVector],
    record: bool = True,
    tuning: SearchTuning | None = None,
) -> PromptRecall:
    """The memories the prompt in the client's hook ``event`` needs (its ``prompt``,
    ``session_id`` and ``cwd``); ``vector`` embeds the prompt (or says why it cannot), called
    only when a search runs. ``record``: write the outcome to ``prompt_recalls`` and commit;
    ``tuning``: the ranking knobs when not the settings' (the bench's)."""
    prompt = _text(event, "prompt")
    if prompt is None:
        return PromptRecall("", (), 0.0, "empty")
    cwd = _text(event, "cwd")
    root = git_info(cwd).root if cwd else None
    exclude = ExcludeMatcher.compile(settings.capture_exclude, home=str(Path.home()))
    if exclude and exclude.excludes(cwd, root):
        return PromptRecall("", (), 0.0, "excluded", git_root=root)
    if paused_until(conn, settings.device_name, platform)[0]:
        return PromptRecall("", (), 0.0, "paused", git_root=root)
    session_id = _text(event, "session_id")
    if is_acknowledgement(prompt):
        got = PromptRecall("", (), 0.0, "ack", git_root=root)
    else:
        skip = given_ids(conn, user_id, platform, session_id) if session_id else set()
        got = _recall(
            conn,
            user_id,
            prompt[:PROMPT_LIMIT],
            _Context(root, session_id, skip, exclude),
            tuning or search_tuning(settings),
            vector,
        )
    if record:
        record_given(
            conn,
            user_id,
            platform,
            session_id,
            kind="prompt",
            outcome=got.reason,
            memory_ids=got.memory_ids,
            best=got.best,
            prompt=prompt,
            git_root=root,
        )
        conn.commit()
    return got


@dataclass(frozen=True, slots=True)
class _Context:
    root: str | None
    session_id: str | None
    given: set[int]
    exclude: ExcludeMatcher

    def allows(self, hit: SearchHit) -> bool:
        """Not a turn of this session, nor one it already got, nor of an excluded project."""
        if self.session_id is not None and hit.session_id == self.session_id:
            return False
        if hit.id in self.given:
            return False
        return not (self.exclude and self.exclude.excludes(hit.cwd))


def _recall(
    conn: psycopg.Connection[Any],
    user_id: int,
    prompt: str,
    context: _Context,
    tuning: SearchTuning,
    vector: Callable[[str], QueryVector],
) -> PromptRecall:
    """The project's hits that clear the bar, else everywhere's: the prompt's meaning (its
    vector) and its words without those that only ask memory (:func:`search_words`)."""
    query_vector = vector(prompt).vector
    query = search_words(prompt)
    scopes: list[tuple[Scope, str | None]] = [("everywhere", None)]
    if context.root:
        scopes.insert(0, ("project", context.root))
    best = 0.0
    for scope, root in scopes:
        result = search_memories(
            conn,
            user_id,
            query=query,
            query_vector=query_vector,
            filters=SearchFilters(limit=CANDIDATES, git_root=root),
            tuning=tuning,
        )
        hits = [h for h in result.hits if context.allows(h)]
        best = max([best, *(h.confidence or 0.0 for h in hits)])
        chosen = [h for h in hits if speaks(h.confidence, tuning)][:MAX_MEMORIES]
        if chosen:
            words = parse_query(query, tuning.date_slack_days).words
            text, shown = render(chosen, words)
            ids = tuple(h.id for h in shown)
            return PromptRecall(text, ids, best, "added", scope, context.root)
    return PromptRecall("", (), round(best, 3), "weak" if best else "none", None, context.root)
