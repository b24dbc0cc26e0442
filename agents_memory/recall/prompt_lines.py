"""The lines a prompt's recalled memories are added as: a short header, then one line each —
date, client, project, an excerpt around the words the prompt and the memory share (not the
turn's start), the action the search found for the turn (its command or paths and how it
ended, with the first error line: what a prompt about a failure needs), and the id
``read_memory`` reads the whole turn with. At most
:data:`MAX_MEMORIES` lines and :data:`MAX_CHARS` characters in all.

Pure (no SQL)."""

from __future__ import annotations

from collections.abc import Sequence, Set

from agents_memory.store.search.action_text import action_line
from agents_memory.store.search.types import SearchHit
from agents_memory.store.search.words import WORD, stem

MAX_MEMORIES = 3
MAX_CHARS = 1_200
LINE_MAX = 370
"""One memory's line is at most this long (three of them and the header fit ``MAX_CHARS``)."""
MIN_EXCERPT = 60
ACTION_MAX = 170
"""The most of a line the found action takes."""
HEADER = "Possibly relevant, from past sessions (`read_memory` an id for the whole turn):"
MARK = "…"


def render(hits: Sequence[SearchHit], words: Set[str]) -> tuple[str, list[SearchHit]]:
    """The text for ``hits`` (at most :data:`MAX_MEMORIES` of them, in order) and the hits it
    holds: lines that would not fit :data:`MAX_CHARS` are left out."""
    lines = [HEADER]
    used = len(HEADER)
    shown: list[SearchHit] = []
    for hit in hits[:MAX_MEMORIES]:
        line = memory_line(hit, words)
        if used + 1 + len(line) > MAX_CHARS:
            break
        lines.append(line)
        used += 1 + len(line)
        shown.append(hit)
    return ("\n".join(lines) if shown else ""), shown


def memory_line(hit: SearchHit, words: Set[str], room: int = LINE_MAX) -> str:
    """``- 2026-03-05 claude-code payments: …excerpt… [shell `make db` → error (exit 1): …]
    (id 123)`` within ``room`` characters (the action only when the search found one)."""
    project = hit.p_tag or _basename(hit.cwd) or "no project"
    head = f"- {hit.message_at:%Y-%m-%d} {hit.agent_platform} {project}: "
    acted = ""
    if hit.actions:
        best = max(hit.actions, key=lambda a: a.score)
        acted = f" [{excerpt(action_line(best), set(), ACTION_MAX - 3)}]"
    tail = f"{acted} (id {hit.id})"
    return head + excerpt(hit.message, words, max(MIN_EXCERPT, room - len(head) - len(tail))) + tail


def excerpt(message: str, words: Set[str], room: int) -> str:
    """``message`` on one line within ``room`` characters: whole when it fits, else the window
    holding the most of ``words`` (stemmed content words), from a little before the first of
    them, cut at word boundaries, ``…`` where text was left out."""
    flat = " ".join(message.split())
    if len(flat) <= room:
        return flat
    spans = [(m.start(), m.end()) for m in WORD.finditer(flat) if stem(m.group().lower()) in words]
    start = 0
    if spans:
        width = room - 2 * len(MARK)
        counts = [sum(1 for s, e in spans if s >= a and e <= a + width) for a, _ in spans]
        first = spans[counts.index(max(counts))][0]
        start = max(0, min(first - width // 6, len(flat) - width))
        if start:
            space = flat.find(" ", start)
            start = space + 1 if 0 <= space < first else start
    body_room = room - (len(MARK) if start else 0)
    body = flat[start:]
    if len(body) > body_room:
        cut = body.rfind(" ", 0, body_room - len(MARK))
        body = body[: cut if cut > body_room // 2 else body_room - len(MARK)] + MARK
    return (MARK if start else "") + body


def _basename(path: str | None) -> str | None:
    return path.rstrip("/").rsplit("/", 1)[-1] or None if path else None
