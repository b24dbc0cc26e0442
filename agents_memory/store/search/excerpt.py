"""A hit in few characters: the part of its text around the words it was found by, and the one
line a compact answer gives per hit (``search_memory``'s default, the per-prompt recall).

:func:`excerpt` picks, in a text flattened to one line, the window of ``width`` characters that
holds the most distinct query words (stemmed as the hit's confidence stems them,
:func:`~agents_memory.store.search.words.stem`), starting a little before the first of them; a
text holding none of them gives its start. :func:`hit_line` is ``#id date client project kind:
excerpt`` within a line budget.

Pure (no SQL)."""

from __future__ import annotations

from collections.abc import Iterable

from agents_memory.store.search.types import SearchHit, SessionHit
from agents_memory.store.search.words import WORD, content_words, stem

MARK = "…"
LINE_CHARS = 200
"""A compact hit line is at most this many characters."""
LEAD = 0.2
"""The share of an excerpt's width shown before its first matching word."""
MAX_MATCHES = 2_000
"""Word matches looked at in one text (a turn can hold tens of thousands of words)."""


def query_stems(queries: Iterable[str | None]) -> frozenset[str]:
    """The stemmed content words of every phrasing in ``queries``."""
    stems: set[str] = set()
    for query in queries:
        if query:
            stems |= content_words(query)
    return frozenset(stems)


def excerpt(text: str, words: frozenset[str], width: int) -> str:
    """The ``width`` characters of ``text`` (whitespace folded) around the most ``words``
    (:func:`query_stems`), ``…`` marking a cut at either end; the start of ``text`` when it
    holds none of them."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    room = max(width - 2 * len(MARK), 1)
    start = _best_start(flat, words, room)
    if start <= 0:
        return flat[: width - len(MARK)].rstrip() + MARK
    start = _word_start(flat, start)
    body = flat[start : start + room]
    if start + room >= len(flat):
        body = flat[max(0, len(flat) - (width - len(MARK))) :]
        return MARK + body.lstrip()
    return MARK + body.strip() + MARK


def _best_start(flat: str, words: frozenset[str], room: int) -> int:
    """Where the window of ``room`` characters holding the most distinct ``words`` starts
    (``LEAD`` of it before its first match); 0 when none matches."""
    if not words:
        return 0
    found: list[tuple[int, str]] = []
    for match in WORD.finditer(flat.lower()):
        word = stem(match.group())
        if word in words:
            found.append((match.start(), word))
            if len(found) >= MAX_MATCHES:
                break
    if not found:
        return 0
    best, best_at = (0, 0), 0
    end = 0
    for first, (at, _word) in enumerate(found):
        end = max(end, first)
        while end + 1 < len(found) and found[end + 1][0] < at + room:
            end += 1
        window = found[first : end + 1]
        score = (len({w for _, w in window}), len(window))
        if score > best:
            best, best_at = score, at
    return max(0, best_at - int(room * LEAD))


def _word_start(flat: str, at: int) -> int:
    """``at`` moved forward to the start of a word (not past the next space + 20)."""
    if at <= 0 or flat[at - 1] == " ":
        return at
    space = flat.find(" ", at, at + 20)
    return space + 1 if space >= 0 else at


def session_line(session: SessionHit, words: frozenset[str], chars: int = LINE_CHARS) -> str:
    """A session the query names in at most ``chars`` characters: ``session <id> date client
    project: title — summary excerpt`` (``read_memory session_id=<id>`` reads its turns)."""
    head = (
        f"session {session.session_id} {session.last_at:%Y-%m-%d} {session.agent_platform}"
        f" {session.project or '-'}: "
    )
    room = max(chars - len(head), 40)
    return head + excerpt(f"{session.title} — {session.summary}", words, room)


def hit_line(hit: SearchHit, words: frozenset[str], chars: int = LINE_CHARS) -> str:
    """One hit in at most ``chars`` characters: ``#id date client project kind: excerpt``
    (``-`` for no project; the kind is ``turn`` with its role, or the hit's own kind)."""
    kind = f"{hit.kind}/{hit.role}" if hit.kind == "turn" else hit.kind
    head = f"#{hit.id} {hit.message_at:%Y-%m-%d} {hit.agent_platform} {hit.p_tag or '-'} {kind}: "
    room = max(chars - len(head), 40)
    return head + excerpt(hit.message, words, room)
