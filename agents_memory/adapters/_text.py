"""Text helpers shared by adapters whose clients wrap user text in tags."""

from __future__ import annotations


def tag_blocks(text: str, opening: str, closing: str) -> tuple[list[str], bool]:
    """The stripped, non-empty bodies of every ``opening…closing`` block in ``text``, and whether
    anything but whitespace lies outside them (str.find: a lazy regex crawls long prompts)."""
    bodies: list[str] = []
    outside = False
    pos = 0
    while (start := text.find(opening, pos)) >= 0:
        end = text.find(closing, start + len(opening))
        if end < 0:
            break
        outside = outside or (start > pos and not text[pos:start].isspace())
        body = text[start + len(opening) : end].strip()
        if body:
            bodies.append(body)
        pos = end + len(closing)
    return bodies, outside or (pos < len(text) and not text[pos:].isspace())
