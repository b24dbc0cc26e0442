"""How a claude-mem row becomes ours: pure functions from its values to ours.

claude-mem (the Claude Code memory plugin) keeps, per coding session, the user's prompts, the
*observations* its own model wrote about the work (typed: discovery, bugfix, decision…, with a
title, a narrative, facts, concepts and the files read and modified) and *summaries* (request,
investigated, learned, completed, next steps, notes). Here:

* a prompt is a user turn of its session (``content_session_id``, which is Claude Code's own
  session id, so a session capture already stored is found as its twin), tagged with the
  session's project;
* an observation is a memory of the platform ``claude-mem`` in the same session id, its type,
  title, narrative, facts, concepts and files written out as one text (role ``assistant``: the
  agent's work, told by claude-mem's model, kept as ``agent_model``);
* a session's summaries are its session summary (``model`` ``llm``), written beside the turns
  they summarise.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Final

from agents_memory.clipping import clip
from agents_memory.ops.seed_map import platform_name
from agents_memory.store.seeds.claude_mem import CmObservation, CmSummary

CLAUDE_MEM_PLATFORM: Final = "claude-mem"
"""The platform of an observation: claude-mem's model wrote it, not the coding agent."""

FIELD_CHARS: Final = 20_000
"""One field of an observation or a summary is kept to this many characters…"""
TEXT_CHARS: Final = 60_000
"""…and the whole text to this many."""
TITLE_CHARS: Final = 200
MAX_PROJECT_CHARS: Final = 100


def key(identity: str, kind: str, row_id: int) -> str:
    """The stable key of a claude-mem row here (``claude-mem:<file>:<kind>:<id>``)."""
    return f"claude-mem:{identity}:{kind}:{row_id}"


def when(epoch_ms: int | float | None) -> datetime | None:
    """claude-mem's ``*_epoch`` columns are milliseconds."""
    if epoch_ms is None:
        return None
    return datetime.fromtimestamp(float(epoch_ms) / 1000.0, tz=UTC)


def platform(source: str | None) -> str:
    """claude-mem's ``platform_source`` in ours: ``claude`` (its default) is Claude Code;
    ``codex``, ``cursor``… go through the adapters' names."""
    name = (source or "").strip().lower() or "claude"
    return "claude-code" if name == "claude" else platform_name(name)


def project(name: str | None) -> str | None:
    """A claude-mem project (its directory's name) as a project tag name."""
    value = (name or "").strip().lower()[:MAX_PROJECT_CHARS]
    return value or None


def _items(value: str | None) -> list[str]:
    """A JSON array column (``facts``, ``concepts``, ``files_*``) as its strings; other text
    as one item."""
    if value is None or not value.strip():
        return []
    try:
        parsed = json.loads(value)
    except ValueError:
        return [value.strip()]
    if isinstance(parsed, list):
        return [str(v).strip() for v in parsed if str(v).strip()]
    return [str(parsed).strip()] if str(parsed).strip() else []


def _field(text: str | None) -> str:
    return clip(text.strip(), FIELD_CHARS)[0] if text else ""


def observation_text(row: CmObservation) -> str:
    """An observation as one text: ``[type] title``, its subtitle, narrative (or a file older
    than claude-mem's migration 8: its ``text``), facts, concepts and files."""
    head = f"[{row.type}] {_field(row.title)}".strip()
    lines = [head, _field(row.subtitle), _field(row.narrative) or _field(row.text)]
    facts = _items(row.facts)
    if facts:
        lines.append("facts:\n" + "\n".join(f"- {_field(f)}" for f in facts))
    for label, value in (
        ("concepts", row.concepts),
        ("files read", row.files_read),
        ("files modified", row.files_modified),
    ):
        items = _items(value)
        if items:
            lines.append(f"{label}: " + ", ".join(_field(i) for i in items))
    return clip("\n".join(line for line in lines if line), TEXT_CHARS)[0]


_SECTIONS: Final = (
    ("request", "asked"),
    ("investigated", "investigated"),
    ("learned", "learned"),
    ("completed", "completed"),
    ("next_steps", "next steps"),
    ("notes", "notes"),
)


def summary_title(rows: list[CmSummary], custom_title: str | None) -> str:
    """The line a list shows: the session's own title, else its first request."""
    first = next((r.request for r in rows if r.request and r.request.strip()), None)
    text = (custom_title or first or "claude-mem session").strip().splitlines()[0]
    return clip(text, TITLE_CHARS)[0]


def summary_text(rows: list[CmSummary]) -> str:
    """A session's summaries (one per prompt it summarised) as one text, oldest first."""
    parts: list[str] = []
    for row in rows:
        lines = [f"{label}: {_field(getattr(row, name))}" for name, label in _SECTIONS]
        lines = [line for line in lines if not line.endswith(": ")]
        for label, value in (("files read", row.files_read), ("files edited", row.files_edited)):
            items = _items(value)
            if items:
                lines.append(f"{label}: " + ", ".join(_field(i) for i in items))
        if lines:
            parts.append("\n".join(lines))
    return clip("\n\n".join(parts), TEXT_CHARS)[0]


def summary_terms(rows: list[CmSummary]) -> str:
    """Words a search may find the summary by: the files it names."""
    files = {f for r in rows for v in (r.files_read, r.files_edited) for f in _items(v)}
    return clip(" ".join(sorted(files)), FIELD_CHARS)[0]
