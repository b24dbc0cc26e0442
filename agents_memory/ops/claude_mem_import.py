"""Import from claude-mem (the Claude Code memory plugin's SQLite file), idempotently.

``mcp-agents-memory import --from claude-mem ~/.claude-mem/claude-mem.db``. The file is read
read-only (:mod:`agents_memory.store.seeds.claude_mem`), every text goes through admission
(private spans, redaction) and in through the ordinary memory insert under a stable key, as
the seed imports do (:mod:`agents_memory.ops.seed_import`): a second import changes nothing.
How a row maps is in :mod:`agents_memory.ops.claude_mem_map`; what has no equivalent here
(the work queue, session status, observation bookkeeping) is counted in the report.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from agents_memory.config import Settings
from agents_memory.ops import claude_mem_map as cm
from agents_memory.ops.seed_import import (
    Progress,
    Target,
    admit,
    finish,
    not_captured,
    open_target,
    store_new,
)
from agents_memory.ops.seed_report import ImportReport
from agents_memory.store import session_summaries
from agents_memory.store.memories import NewMemory
from agents_memory.store.seeds import seed_write
from agents_memory.store.seeds.claude_mem import (
    ClaudeMemSource,
    CmObservation,
    CmPrompt,
    CmSession,
    CmSummary,
)
from agents_memory.store.seeds.seed_write import ImportedState

_Row = tuple[NewMemory, ImportedState]


class _Sessions:
    """claude-mem's sessions by each of their ids, and project tags made once each."""

    def __init__(self, target: Target, sessions: list[CmSession]) -> None:
        self._target = target
        self.by_id = {s.id: s for s in sessions}
        self.by_memory = {s.memory_session_id: s for s in sessions if s.memory_session_id}
        self.by_content: dict[str, CmSession] = {}
        # claude-mem's own rule for a prompt without its session's row id: the Claude Code
        # session of that id first, then the oldest
        for s in sorted(
            sessions, key=lambda s: (cm.platform(s.platform_source) != "claude-code", s.id)
        ):
            self.by_content.setdefault(s.content_session_id, s)
        self._tags: dict[str, int] = {}

    def tag(self, name: str | None) -> int | None:
        project = cm.project(name)
        if project is None:
            return None
        if project not in self._tags:
            tag_id, created = seed_write.import_tag(
                self._target.conn, project, description=None, kind="project", paused=False
            )
            self._tags[project] = tag_id
            tally = self._target.report.tally("project tags")
            if created:
                tally.new += 1
            else:
                tally.present += 1
        return self._tags[project]


def import_claude_mem(
    settings: Settings,
    path: Path,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    home: Path | None = None,
) -> ImportReport:
    """Import claude-mem's prompts, observations and session summaries from ``path``."""
    started = time.monotonic()
    report = ImportReport("claude-mem", str(path), dry_run)
    with ClaudeMemSource.open(path) as source:
        target, opened = open_target(settings, report, home or Path.home())
        with opened:
            identity = source.identity()
            sessions = _Sessions(target, source.sessions())
            total = sum(source.count(t) for t in ("user_prompts", "observations"))
            done = _prompts(target, source, sessions, identity, (progress, total))
            _observations(
                target, source.observations(), sessions, identity, (progress, total, done)
            )
            _summaries(target, source.summaries(), sessions)
            _leftovers(target, source, sessions)
            return finish(target, started)


def _state(key: str, at: datetime | None, tag: int | None) -> ImportedState:
    """A new row's state: its project's tag (then the tagger leaves it be), its own time."""
    return ImportedState(
        external_uuid=key,
        p_tag_id=tag,
        d_tag=[],
        is_active=True,
        archived_at=None,
        tag_processed=tag is not None,
        created_at=at,
    )


def _prompts(
    target: Target,
    source: ClaudeMemSource,
    sessions: _Sessions,
    identity: str,
    counting: tuple[Progress | None, int],
) -> int:
    """Every user prompt a user turn of its session; a file older than claude-mem's
    ``user_prompts`` table gives each session's first prompt (``sdk_sessions.user_prompt``)."""
    progress, total = counting
    done = 0
    batches: Iterable[list[CmPrompt]] = source.prompts()
    if not source.has_table("user_prompts"):
        batches = [
            [
                CmPrompt(-s.id, s.id, s.content_session_id, 1, s.user_prompt, s.started_at_epoch)
                for s in sessions.by_id.values()
                if s.user_prompt
            ]
        ]
    for batch in batches:
        rows: list[_Row] = []
        for prompt in batch:
            session = sessions.by_id.get(prompt.session_db_id or 0) or sessions.by_content.get(
                prompt.content_session_id
            )
            kind = "prompt" if prompt.id > 0 else "session-prompt"
            key = cm.key(identity, kind, abs(prompt.id))
            admitted = admit(target, prompt.prompt_text, None, key)
            if admitted is None:
                continue
            at = cm.when(prompt.created_at_epoch)
            memory = NewMemory(
                agent_platform=cm.platform(session.platform_source if session else None),
                role="user",
                message=admitted.text,
                external_uuid=key,
                message_at=at,
                session_id=prompt.content_session_id,
                source="import",
            )
            rows.append(
                (memory, _state(key, at, sessions.tag(session.project if session else None)))
            )
        store_new(target, target.user_id, not_captured(target, target.user_id, rows), "prompts")
        done += len(batch)
        if progress is not None:
            progress(done, total)
    return done


def _observations(
    target: Target,
    batches: Iterable[list[CmObservation]],
    sessions: _Sessions,
    identity: str,
    counting: tuple[Progress | None, int, int],
) -> None:
    """Every observation a memory of the platform ``claude-mem`` in its session's id."""
    progress, total, done = counting
    for batch in batches:
        rows: list[_Row] = []
        for obs in batch:
            session = sessions.by_memory.get(obs.memory_session_id)
            key = cm.key(identity, "observation", obs.id)
            admitted = admit(target, cm.observation_text(obs), None, key)
            if admitted is None:
                continue
            at = cm.when(obs.created_at_epoch)
            memory = NewMemory(
                agent_platform=cm.CLAUDE_MEM_PLATFORM,
                role="assistant",
                message=admitted.text,
                external_uuid=key,
                message_at=at,
                agent_model=obs.generated_by_model,
                subagent=obs.agent_type is not None,
                subagent_role=obs.agent_type,
                session_id=session.content_session_id if session else obs.memory_session_id,
                source="import",
            )
            tag = sessions.tag(obs.merged_into_project or obs.project)
            rows.append((memory, _state(key, at, tag)))
        store_new(target, target.user_id, rows, "observations")
        done += len(batch)
        if progress is not None:
            progress(done, total)


def _summaries(target: Target, batches: Iterable[list[CmSummary]], sessions: _Sessions) -> None:
    """A session's summaries (a session's rows arrive together) its session summary here."""
    pending: list[CmSummary] = []
    orphans = 0
    for batch in batches:
        for row in batch:
            if pending and pending[0].memory_session_id != row.memory_session_id:
                orphans += 0 if _summary(target, pending, sessions) else len(pending)
                pending = []
            pending.append(row)
    if pending:
        orphans += 0 if _summary(target, pending, sessions) else len(pending)
    target.report.no_equivalent(
        "summaries of sessions with no turns here",
        orphans,
        "a session summary stands beside its session's turns",
    )


def _summary(target: Target, rows: list[CmSummary], sessions: _Sessions) -> bool:
    """One session's summary beside the turns it summarises: its prompts' session, else its
    observations'; one with no turns here has nothing to stand beside and is counted."""
    session = sessions.by_memory.get(rows[0].memory_session_id)
    report = target.report
    state = None
    if session is not None:
        for platform in (cm.platform(session.platform_source), cm.CLAUDE_MEM_PLATFORM):
            state = session_summaries.session_state(
                target.conn, target.user_id, platform, session.content_session_id
            )
            if state is not None:
                break
    if session is None or state is None:
        return False
    key = f"claude-mem-summary:{session.id}"
    admitted = admit(target, cm.summary_text(rows), None, key)
    title = admit(target, cm.summary_title(rows, session.custom_title), None, key)
    files = cm.summary_terms(rows)
    terms = admit(target, files, None, key) if files else None
    if admitted is None or title is None:
        return True
    written = session_summaries.NewSessionSummary(
        title=title.text, summary=admitted.text, terms=terms.text if terms else "", model="llm"
    )
    outcome = seed_write.import_session_summary(target.conn, target.user_id, state, written)
    if outcome == "conflict":
        report.conflict(
            "session summaries",
            f"session {session.content_session_id}: this pool has its own summary; it stays",
        )
    elif outcome == "new":
        report.tally("session summaries").new += 1
    else:
        report.tally("session summaries").present += 1
    return True


def _leftovers(target: Target, source: ClaudeMemSource, sessions: _Sessions) -> None:
    report = target.report
    report.notes.append(f"{len(sessions.by_id)} claude-mem sessions kept as session_id")
    titled = sum(1 for s in sessions.by_id.values() if s.custom_title)
    report.no_equivalent(
        "session titles", titled, "kept only as the title of the session's summary, if any"
    )
    report.no_equivalent(
        "session status",
        len(sessions.by_id),
        "active/completed/failed and completion times; a session here is its turns",
    )
    report.no_equivalent(
        "pending_messages",
        source.count("pending_messages"),
        "claude-mem's queue of tool events not yet turned into observations",
    )
