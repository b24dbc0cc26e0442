"""The user's words, prepared for search: safe ``tsquery`` terms and LIKE word patterns.

Pure (no SQL, no database). Full-text terms are runs of letters and digits, quoted, joined with
``|`` (any word may match; ``ts_rank_cd`` prefers rows with more of them). Hangul words become
prefix terms after a trailing particle (josa) is stripped, because the full-text configuration
keeps Korean words whole: "마이그레이션을" in a query finds "마이그레이션이" in a message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_TERMS = 32

# Korean particles (josa) stripped from the end of a query word before prefix matching, longest
# first, so "마이그레이션을" also finds "마이그레이션이" and "마이그레이션".
# fmt: off
_PARTICLES = (
    "에서는", "으로는", "에게서", "한테서", "까지", "부터", "에서", "에게", "한테", "으로", "처럼",
    "보다", "이랑", "하고", "와", "과", "을", "를", "이", "가", "은", "는", "의", "에", "로", "도",
    "만", "랑",
)
# fmt: on
_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")
_FTS_WORD = re.compile(r"[^\W_]+")
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """The user's words, prepared for both the tsquery and the ILIKE fallback."""

    tsquery: str | None
    """``'w1' | 'w2' | '한국어':*`` — quoted terms of word characters only, or ``None``."""
    tsquery_all: str | None
    """The same terms joined with ``&`` (every word), when there are at least two."""
    like_patterns: tuple[str, ...]
    """``%word%`` patterns, LIKE-escaped, for words of at least two characters."""


def query_terms(query: str) -> QueryTerms:
    """Split ``query`` into safe full-text terms and ILIKE word patterns."""
    terms: list[str] = []
    for word in _FTS_WORD.findall(query.lower()):
        hangul = bool(_HANGUL.search(word))
        stem = _strip_particle(word) if hangul else word
        if len(stem) < 2:
            continue
        term = f"'{stem}':*" if hangul else f"'{stem}'"
        if term not in terms:
            terms.append(term)
    patterns: list[str] = []
    for raw in query.split():
        word = raw.strip(_EDGE_PUNCT).lower()
        if _HANGUL.search(word):
            word = _strip_particle(word)
        if len(word) < 2:
            continue
        escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = f"%{escaped}%"
        if pattern not in patterns:
            patterns.append(pattern)
    kept = terms[:MAX_TERMS]
    tsquery = " | ".join(kept) or None
    tsquery_all = " & ".join(kept) if len(kept) > 1 else None
    return QueryTerms(tsquery, tsquery_all, tuple(patterns[:MAX_TERMS]))


def _strip_particle(word: str) -> str:
    for particle in _PARTICLES:
        if word.endswith(particle) and len(word) - len(particle) >= 2:
            return word[: -len(particle)]
    return word
