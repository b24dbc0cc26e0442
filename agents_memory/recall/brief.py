"""The session-start brief: deterministic, budgeted, deduplicated markdown.

It starts with :data:`BRIEF_MARKER` so its echo in a transcript is never captured, then the
open task pins addressed to this agent, then recent work: the files the agents' actions
touched most and the last failing command (:mod:`.brief_work`; two short lines, first so a
compact brief keeps them), and the last sessions, a line each from their summaries
(:mod:`.sessions`; this project's first). Inside a project (the session's cwd is in a git
repository) this project comes next: its recent turns of the short-term window (this agent's
platform and model by default), then other agents' turns in it. Then core profile, pinned,
live fact slots, sub profile, active projects, recent turns elsewhere, older history as tag
summaries (no "(no project)" group inside a project), pending tag questions, search hints.
Outside a project, after recent work, the JS original's order: profile and pins, active
projects, recent turns, older history, questions, hints. A project that opted out of memory
(``.agents-memory/no-memory``) gets no brief. ``full`` is what ``memory_startup`` returns;
``compact`` fits a budget (MCP ``instructions``, hook injections) by shortening previews and
dropping the least important sections first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import psycopg

from agents_memory.admission.echo import BRIEF_MARKER
from agents_memory.admission.project_switch import memory_off
from agents_memory.config import Settings
from agents_memory.gitinfo import git_info
from agents_memory.recall.brief_pins import pin_lines
from agents_memory.recall.brief_work import work_lines
from agents_memory.recall.sessions import brief_session_lines
from agents_memory.store.capture.pause import active_pauses, pause_sentence
from agents_memory.store.knowledge import get_profiles
from agents_memory.store.recall import briefdata, slots
from agents_memory.store.recall.briefdata import BriefTurn
from agents_memory.store.summaries import NO_PROJECT

CHARS_PER_TOKEN = 1.7
FULL_PREVIEW = 300
COMPACT_PREVIEW = 100


@dataclass(frozen=True, slots=True)
class BriefRequest:
    """What one brief is for. Build it with :meth:`full` (a session's start: a hook or the
    ``memory_startup`` tool) or :meth:`compact` (text that rides along elsewhere: the MCP
    server's instructions, the managed context files)."""

    platform: str | None
    model: str | None
    device: str
    cwd: str | None = None
    mode: Literal["full", "compact"] = "full"
    max_chars: int = 8000
    short_term_days: int | None = None
    same_agent_only: bool = True

    @classmethod
    def full(
        cls,
        settings: Settings,
        *,
        platform: str | None,
        model: str | None,
        cwd: str | None,
        max_chars: int | None = None,
        short_term_days: int | None = None,
        same_agent_only: bool = True,
    ) -> BriefRequest:
        """A session-start brief on this device; ``max_chars`` ``None``: the short-term
        budget (``SHORT_TERM_TOKEN_LIMIT``) in characters plus room for the other sections."""
        room = max(8000, int(settings.short_term_token_limit * CHARS_PER_TOKEN) + 4000)
        return cls(
            platform,
            model,
            settings.device_name,
            cwd,
            "full",
            room if max_chars is None else max_chars,
            short_term_days,
            same_agent_only,
        )

    @classmethod
    def compact(
        cls, settings: Settings, *, platform: str | None, cwd: str | None, max_chars: int
    ) -> BriefRequest:
        """A compact brief on this device; a client's own turns first when ``platform`` is
        known."""
        return cls(
            platform,
            None,
            settings.device_name,
            cwd,
            "compact",
            max_chars,
            same_agent_only=platform is not None,
        )


@dataclass(slots=True)
class Section:
    title: str | None
    lines: list[str]
    required: bool = False


TEAMMATE_TURNS = 8  # at most this many of teammates' turns in the brief's project


def build_brief(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    request: BriefRequest,
    now: datetime | None = None,
) -> str:
    return brief_with_ids(conn, settings, user_id, request, now)[0]


def brief_with_ids(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    request: BriefRequest,
    now: datetime | None = None,
) -> tuple[str, tuple[int, ...]]:
    """The brief and the ids of the turns it shows (those left out by the budget are not)."""
    if memory_off(request.cwd):
        return "", ()
    now = now or datetime.now(UTC)
    shown = Shown()
    text = fit(gather_sections(conn, settings, user_id, request, now, shown), request.max_chars)
    return text, tuple(dict.fromkeys(i for line, i in shown.ids.items() if line in text))


@dataclass(slots=True)
class Shown:
    """The turns a brief shows: their text (a turn appears once in a brief) and each line's
    memory id."""

    keys: set[str] = field(default_factory=set)
    ids: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class _Gathering:
    """What every section of one brief is gathered with."""

    conn: psycopg.Connection[Any]
    settings: Settings
    user_id: int
    request: BriefRequest
    days: float
    since: datetime
    preview: int
    root: str | None
    remote: str | None = None
    seen: Shown = field(default_factory=Shown)
    """Turns already shown: a turn appears once in a brief."""

    @property
    def compact(self) -> bool:
        return self.request.mode == "compact"


def gather_sections(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    request: BriefRequest,
    now: datetime,
    shown: Shown | None = None,
) -> list[Section]:
    """The brief's sections in order: header, task pins, recent work, this project's turns
    (inside one), profile and pins, projects, recent turns (elsewhere, inside a project),
    older history, open questions, the tools."""
    days = request.short_term_days or settings.short_term_days
    git = git_info(request.cwd) if request.cwd else git_info(None)
    g = _Gathering(
        conn=conn,
        settings=settings,
        user_id=user_id,
        request=request,
        days=days,
        since=now - timedelta(days=days),
        preview=COMPACT_PREVIEW if request.mode == "compact" else FULL_PREVIEW,
        root=git.root,
        remote=git.remote,
        seen=shown if shown is not None else Shown(),
    )
    profiles = get_profiles(conn, user_id)
    return [
        _header(g, profiles.user_name),
        *_task_pins(g),
        *_recent_work(g),
        *_recent_sessions(g),
        *_this_project(g),
        *_teammates(g),
        *_profile_and_pins(g, profiles.core_profile, profiles.sub_profile),
        *_active_projects(g),
        *_recent(g),
        *_older_history(g),
        *_questions(g),
        _tools_section(),
    ]


def _project_name(g: _Gathering) -> str | None:
    root = g.root
    return (briefdata.project_tag_for_root(g.conn, root) if root else None) or (
        root.rsplit("/", 1)[-1] if root else None
    )


def _header(g: _Gathering, user_name: str) -> Section:
    project = _project_name(g)
    where = g.request.platform or ""
    if g.request.model:
        where += f" ({g.request.model})" if where else g.request.model
    current = f"{where} @ {g.request.device}" if where else g.request.device
    lines = [
        BRIEF_MARKER,
        f"# Memory Briefing (user: {user_name})",
        f"Current: {current}" + (f" · project {project}" if project else ""),
    ]
    paused = pause_sentence(active_pauses(g.conn, g.request.device), g.request.platform)
    if paused:
        lines.append(f"Note: {paused}; turns written meanwhile are not remembered.")
    return Section(None, lines, required=True)


def _profile_and_pins(g: _Gathering, core: str | None, sub: str | None) -> list[Section]:
    sections = []
    if core:
        sections.append(Section("## Core Profile", _paragraph(core, 1200)))
    pins = briefdata.pinned(g.conn, g.user_id, 10)
    if pins:
        lines = [_turn_line(t, g.preview, g.seen, pinned=True) for t in pins]
        sections.append(Section("## Pinned", lines))
    facts = slots.live_slots(g.conn, g.user_id, 20)
    if facts:
        lines = [f"- {f.slot}: {_clip(f.message, g.preview)}" for f in facts]
        sections.append(Section("## Facts", lines))
    if sub and not g.compact:
        sections.append(Section("## Sub Profile", _paragraph(sub, 1200)))
    return sections


def _task_pins(g: _Gathering) -> list[Section]:
    """Open task pins addressed to this agent (kept even in a compact brief)."""
    lines = pin_lines(g.conn, g.user_id, g.request.platform) if g.request.platform else []
    if not lines:
        return []
    return [Section(f"## Task pins for {g.request.platform}", lines, required=True)]


def _active_projects(g: _Gathering) -> list[Section]:
    active = briefdata.active_projects(g.conn, g.user_id, since=g.since, limit=5)
    if not active:
        return []
    lines = [
        f"- {_short_project(p.name)} — {p.turns} turns, last {p.last_at:%Y-%m-%d}" for p in active
    ]
    return [Section(f"## Active Projects (last {g.days} days)", lines)]


def _this_project(g: _Gathering) -> list[Section]:
    """Inside a project: this agent's recent turns in it, then other agents' turns in it."""
    if not g.root:
        return []
    sections = []
    budget = int(g.settings.short_term_token_limit * CHARS_PER_TOKEN)
    platform = g.request.platform if g.request.same_agent_only else None
    model = g.request.model if g.request.same_agent_only else None
    turns = briefdata.project_turns(
        g.conn, g.user_id, since=g.since, git_root=g.root, exclude_platform=None, limit=200
    )
    mine = [t for t in turns if _by_agent(t, platform, model)]
    lines = _within_budget(mine, g.preview, budget, g.seen)
    name = _project_name(g)
    if lines:
        label = f" on {platform}" if platform else ""
        sections.append(Section(f"## Recent in {name}{label} (last {g.days} days)", lines))
    others = [t for t in turns if platform is not None and t.agent_platform != platform][:8]
    other_lines = _within_budget(others, g.preview, budget // 3, g.seen)
    if other_lines:
        sections.append(Section("## Same project, other agents", other_lines))
    return sections


def _teammates(g: _Gathering) -> list[Section]:
    """Inside a project a teammate shares: what they did in it lately, attributed."""
    project = briefdata.project_tag_for_git(g.conn, g.root, g.remote)
    if project is None:
        return []
    found = briefdata.teammate_turns(
        g.conn, g.user_id, since=g.since, project=project, limit=TEAMMATE_TURNS
    )
    budget = int(g.settings.short_term_token_limit * CHARS_PER_TOKEN) // 3
    lines: list[str] = []
    used = 0
    for by, turn in found:
        line = _turn_line(turn, g.preview, g.seen)
        if not line:
            continue
        g.seen.ids[f"{by}: {line}"] = g.seen.ids.pop(line)
        line = f"{by}: {line}"
        if used + len(line) > budget:
            break
        lines.append(line)
        used += len(line)
    if not lines:
        return []
    lines.reverse()
    return [Section(f"## Teammates in {project} (shared with you)", lines)]


def _recent_work(g: _Gathering) -> list[Section]:
    """What the agents did lately (their actions): files most touched, the last failure."""
    lines = work_lines(g.conn, g.user_id, git_root=g.root, since=g.since, compact=g.compact)
    if not lines:
        return []
    name = _project_name(g)
    return [Section(f"## Recent work in {name}" if name else "## Recent work", lines)]


def _recent_sessions(g: _Gathering) -> list[Section]:
    """The last sessions, one line each (their summaries' titles and outcomes): this
    project's first."""
    project = _project_name(g) if g.root else None
    lines = brief_session_lines(
        g.conn, g.user_id, git_root=g.root, project=project, compact=g.compact
    )
    if not lines:
        return []
    title = f"## Recent sessions in {project}" if project else "## Recent sessions"
    return [Section(title, lines)]


def _by_agent(turn: BriefTurn, platform: str | None, model: str | None) -> bool:
    """The rule of ``recent_turns``: that platform; a user turn whatever model answered."""
    if platform is not None and turn.agent_platform != platform:
        return False
    return model is None or turn.role == "user" or turn.agent_model == model


def _recent(g: _Gathering) -> list[Section]:
    """This agent's recent turns (or every agent's); inside a project, those not already
    shown in its own sections."""
    budget = int(g.settings.short_term_token_limit * CHARS_PER_TOKEN)
    platform = g.request.platform if g.request.same_agent_only else None
    model = g.request.model if g.request.same_agent_only else None
    recent = briefdata.recent_turns(
        g.conn, g.user_id, since=g.since, platform=platform, model=model, limit=200
    )
    if g.root:
        recent = [t for t in recent if t.git_root != g.root]
    lines = _within_budget(recent, g.preview, budget, g.seen)
    if not lines:
        return []
    label = platform or "all agents"
    where = "elsewhere " if g.root else ""
    return [Section(f"## Recent {where}on {label} (last {g.days} days)", lines)]


def _older_history(g: _Gathering) -> list[Section]:
    summaries = briefdata.tag_summaries(g.conn, g.user_id, before=g.since, limit=6)
    if g.root:  # a project's brief has no use for the history of no project
        summaries = [s for s in summaries if s.tag != NO_PROJECT]
    summaries = summaries[:5]
    if not summaries:
        return []
    lines = [
        f"- {s.tag} ({s.period_start:%Y-%m-%d}..{s.period_end:%Y-%m-%d}): "
        + _clip(s.summary, g.preview * 2)
        for s in summaries
    ]
    return [Section("## Older history", lines)]


def _questions(g: _Gathering) -> list[Section]:
    questions = briefdata.pending_questions(g.conn, g.user_id, 2)
    if not questions:
        return []
    lines = [f"- {q.text}" for q in questions]
    return [Section("## Pending tag questions (ask the user)", lines)]


def _tools_section() -> Section:
    return Section(
        "## Memory tools",
        [
            "- Call `memory_startup` for the full brief; `search_memory` before assuming past "
            'decisions, names or preferences (use agent_platform:"*" for every agent).',
            "- Search hints: pass identifiers, paths and error text verbatim; name the project"
            " and the day (YYYY-MM-DD) when you know them; a `weak` result means nothing matched.",
            "- `manage_knowledge` action=add pins a fact the user asks you to remember "
            "(`slot` names it so a new value replaces the old).",
            "- `read_memory` reads around a hit; `task_pin` hands work to another agent; "
            "`manage_project_tags` records the user's answers to tag questions.",
        ],
        required=True,
    )


def fit(sections: list[Section], max_chars: int) -> str:
    """Join sections within ``max_chars``: required sections always, the others in order
    while they fit (each may be cut line by line)."""
    required = sum(len(_render(s)) + 1 for s in sections if s.required)
    room = max_chars - required
    parts: list[str] = []
    for section in sections:
        if section.required:
            parts.append(_render(section))
            continue
        head = len(section.title) + 2 if section.title else 0
        kept: list[str] = []
        used = head
        for line in section.lines:
            if used + len(line) + 1 > room:
                break
            kept.append(line)
            used += len(line) + 1
        if kept:
            parts.append(_render(Section(section.title, kept)))
            room -= used
    text = "\n".join(parts)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def _render(section: Section) -> str:
    body = "\n".join(section.lines)
    return f"{section.title}\n{body}\n" if section.title else f"{body}\n"


def _within_budget(turns: list[BriefTurn], preview: int, budget: int, seen: Shown) -> list[str]:
    """Newest turns that fit ``budget`` characters, shown oldest to newest, no repeats."""
    chosen: list[str] = []
    used = 0
    for turn in turns:
        line = _turn_line(turn, preview, seen)
        if not line:
            continue
        if used + len(line) > budget:
            break
        chosen.append(line)
        used += len(line)
    chosen.reverse()
    return chosen


def _turn_line(turn: BriefTurn, preview: int, seen: Shown, *, pinned: bool = False) -> str:
    key = " ".join(turn.message.split())
    if key in seen.keys:
        return ""
    seen.keys.add(key)
    when = turn.message_at.astimezone(UTC)
    if pinned:
        line = f"- [{when:%Y-%m-%d}] {_clip(key, preview)}"
    else:
        agent = turn.agent_platform + (f"/{turn.agent_model}" if turn.agent_model else "")
        line = f"[{when:%m-%d %H:%M} {agent} {turn.role}] {_clip(key, preview)}"
    seen.ids[line] = turn.id
    return line


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _paragraph(text: str, limit: int) -> list[str]:
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > limit:
            break
        out.append(line)
        used += len(line)
    return out


def _short_project(name: str) -> str:
    return name.rsplit("/", 1)[-1] if name.startswith("/") else name
