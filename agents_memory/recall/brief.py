"""The session-start brief: deterministic, budgeted, deduplicated markdown.

It starts with :data:`BRIEF_MARKER` so its echo in a transcript is never captured. Sections
(seed A's order): core profile, pinned, sub profile, active projects, recent turns of the
short-term window (this agent's platform and model by default), other agents' turns in the
same project, older history as tag summaries, pending tag questions, search hints.

``full`` is what ``memory_startup`` returns; ``compact`` fits a character budget (the MCP
``instructions`` field, hook injections) by shortening previews and dropping the least
important sections first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import psycopg

from agents_memory.admission.echo import BRIEF_MARKER
from agents_memory.config import Settings
from agents_memory.gitinfo import git_info
from agents_memory.store import briefdata
from agents_memory.store.briefdata import BriefTurn
from agents_memory.store.knowledge import get_profiles

CHARS_PER_TOKEN = 1.7
FULL_PREVIEW = 300
COMPACT_PREVIEW = 100


@dataclass(frozen=True, slots=True)
class BriefRequest:
    platform: str | None
    model: str | None
    device: str
    cwd: str | None = None
    mode: Literal["full", "compact"] = "full"
    max_chars: int = 8000
    short_term_days: int | None = None
    same_agent_only: bool = True


@dataclass(slots=True)
class Section:
    title: str | None
    lines: list[str]
    required: bool = False


def build_brief(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    request: BriefRequest,
    now: datetime | None = None,
) -> str:
    now = now or datetime.now(UTC)
    sections = gather_sections(conn, settings, user_id, request, now)
    return fit(sections, request.max_chars)


def gather_sections(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    request: BriefRequest,
    now: datetime,
) -> list[Section]:
    compact = request.mode == "compact"
    preview = COMPACT_PREVIEW if compact else FULL_PREVIEW
    days = request.short_term_days or settings.short_term_days
    since = now - timedelta(days=days)
    profiles = get_profiles(conn, user_id)
    root = git_info(request.cwd).root if request.cwd else None
    project = (briefdata.project_tag_for_root(conn, root) if root else None) or (
        root.rsplit("/", 1)[-1] if root else None
    )
    where = request.platform or ""
    if request.model:
        where += f" ({request.model})" if where else request.model
    current = f"{where} @ {request.device}" if where else request.device
    header = [
        BRIEF_MARKER,
        f"# Memory Briefing (user: {profiles.user_name})",
        f"Current: {current}" + (f" · project {project}" if project else ""),
    ]
    seen: set[str] = set()
    sections = [Section(None, header, required=True)]
    if profiles.core_profile:
        sections.append(Section("## Core Profile", _paragraph(profiles.core_profile, 1200)))
    pins = briefdata.pinned(conn, user_id, 10)
    if pins:
        sections.append(
            Section("## Pinned", [_turn_line(t, preview, seen, pinned=True) for t in pins])
        )
    if profiles.sub_profile and not compact:
        sections.append(Section("## Sub Profile", _paragraph(profiles.sub_profile, 1200)))
    active = briefdata.active_projects(conn, user_id, since=since, limit=5)
    if active:
        sections.append(
            Section(
                f"## Active Projects (last {days} days)",
                [
                    f"- {_short_project(p.name)} — {p.turns} turns, last {p.last_at:%Y-%m-%d}"
                    for p in active
                ],
            )
        )
    budget = int(settings.short_term_token_limit * CHARS_PER_TOKEN)
    platform = request.platform if request.same_agent_only else None
    model = request.model if request.same_agent_only else None
    recent = briefdata.recent_turns(
        conn, user_id, since=since, platform=platform, model=model, limit=200
    )
    lines = _within_budget(recent, preview, budget, seen)
    if lines:
        label = platform or "all agents"
        sections.append(Section(f"## Recent on {label} (last {days} days)", lines))
    if root:
        others = briefdata.project_turns(
            conn, user_id, since=since, git_root=root, exclude_platform=platform, limit=8
        )
        other_lines = _within_budget(others, preview, budget // 3, seen)
        if other_lines:
            sections.append(Section("## Same project, other agents", other_lines))
    summaries = briefdata.tag_summaries(conn, user_id, before=since, limit=5)
    if summaries:
        sections.append(
            Section(
                "## Older history",
                [
                    f"- {s.tag} ({s.period_start:%Y-%m-%d}..{s.period_end:%Y-%m-%d}): "
                    + _clip(s.summary, preview * 2)
                    for s in summaries
                ],
            )
        )
    questions = briefdata.pending_questions(conn, user_id, 2)
    if questions:
        sections.append(
            Section("## Pending tag questions (ask the user)", [f"- {q.text}" for q in questions])
        )
    sections.append(
        Section(
            "## Memory tools",
            [
                "- Call `memory_startup` for the full brief; `search_memory` before assuming past "
                'decisions, names or preferences (use agent_platform:"*" for every agent).',
                "- `manage_knowledge` action=add pins a fact the user asks you to remember.",
            ],
            required=True,
        )
    )
    return sections


def fit(sections: list[Section], max_chars: int) -> str:
    """Join sections within ``max_chars``: required sections always, the others in order
    while they fit (each may be cut line by line)."""
    required = sum(_size(s) for s in sections if s.required)
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


def _size(section: Section) -> int:
    return len(_render(section)) + 1


def _within_budget(turns: list[BriefTurn], preview: int, budget: int, seen: set[str]) -> list[str]:
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


def _turn_line(turn: BriefTurn, preview: int, seen: set[str], *, pinned: bool = False) -> str:
    key = " ".join(turn.message.split())
    if key in seen:
        return ""
    seen.add(key)
    when = turn.message_at.astimezone(UTC)
    if pinned:
        return f"- [{when:%Y-%m-%d}] {_clip(key, preview)}"
    agent = turn.agent_platform + (f"/{turn.agent_model}" if turn.agent_model else "")
    return f"[{when:%m-%d %H:%M} {agent} {turn.role}] {_clip(key, preview)}"


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
