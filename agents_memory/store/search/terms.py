"""The user's words, prepared for search: safe ``tsquery`` terms, LIKE word patterns and the
calendar dates the query names.

Pure (no SQL, no database). Full-text terms are runs of letters and digits, quoted, one term
per word (the ranking weighs each by its rarity, BM25); ``tsquery`` joins them with ``|`` (any
word may match). Hangul words become prefix terms after a trailing particle (josa) is stripped,
because the full-text configuration keeps Korean words whole: "마이그레이션을" in a query finds
"마이그레이션이" in a message. Dates written out in the query ("on 9 July, 2022", "October 13,
2023", "in May 2023", "2023-10-13") become day or month intervals that the ranking favours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from agents_memory.store.search.words import (
    WORD,
    content_of,
    identifier_words,
    is_stop_word,
    stem,
)

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
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """The user's words, prepared for both the tsquery and the ILIKE fallback."""

    tsquery: str | None
    """``'w1' | 'w2' | '한국어':*`` — quoted terms of word characters only, or ``None``."""
    terms: tuple[str, ...]
    """The same terms one by one (``'w1'``, ``'한국어':*``), for per-term statistics."""
    tsquery_all: str | None
    """The same terms joined with ``&`` (every word), when there are at least two."""
    like_patterns: tuple[str, ...]
    """``%word%`` patterns, LIKE-escaped, for words of at least two characters that are no stop
    word (:func:`~agents_memory.store.search.words.is_stop_word`)."""


def query_terms(query: str) -> QueryTerms:
    """Split ``query`` into safe full-text terms and ILIKE word patterns."""
    lowered = query.lower()
    return _terms_of(WORD.findall(lowered), lowered)


def _terms_of(words: list[str], lowered: str) -> QueryTerms:
    """The full-text terms of ``words`` (the query's words, :data:`WORD`) and the ILIKE
    patterns of ``lowered`` (the query, lower-cased)."""
    terms: list[str] = []
    for word in words:
        term = _term_of(word)
        if term is not None and term not in terms:
            terms.append(term)
    patterns: list[str] = []
    for raw in lowered.split():
        word = raw.strip(_EDGE_PUNCT)
        if _HANGUL.search(word):
            word = _strip_particle(word)
        if len(word) < 2 or is_stop_word(word):  # "%about%": a third of any English text
            continue
        escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = f"%{escaped}%"
        if pattern not in patterns:
            patterns.append(pattern)
    kept = terms[:MAX_TERMS]
    tsquery = " | ".join(kept) or None
    tsquery_all = " & ".join(kept) if len(kept) > 1 else None
    return QueryTerms(tsquery, tuple(kept), tsquery_all, tuple(patterns[:MAX_TERMS]))


def _term_of(word: str) -> str | None:
    """The full-text term of one word of the query (``None``: too short to be one)."""
    hangul = bool(_HANGUL.search(word))
    stem = _strip_particle(word) if hangul else word
    if len(stem) < 2:
        return None
    return f"'{stem}':*" if hangul else f"'{stem}'"


def _strip_particle(word: str) -> str:
    for particle in _PARTICLES:
        if word.endswith(particle) and len(word) - len(particle) >= 2:
            return word[: -len(particle)]
    return word


# --- dates named in the query ------------------------------------------------------------------

_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_DATE_FORMS = (  # (pattern, group of year, month, day; day 0 = the whole month)
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b"), (3, 2, 1)),
    (re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b"), (3, 1, 2)),
    (re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b"), (1, 2, 3)),
    (re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b"), (2, 1, 0)),
    (re.compile(r"\b((?:19|20)\d\d)-(\d\d)\b"), (1, 2, 0)),
)
MAX_DATES = 4


def query_dates(query: str, slack_days: float) -> tuple[tuple[datetime, datetime], ...]:
    """Day or month intervals (UTC, widened by ``slack_days`` on both sides) for the calendar
    dates written out in ``query``; a bare year is too vague to favour anything."""
    return widened(named_dates(query)[0], slack_days)


def widened(
    dates: tuple[tuple[datetime, datetime], ...], slack_days: float
) -> tuple[tuple[datetime, datetime], ...]:
    """``dates`` widened by ``slack_days`` on both sides (each interval once)."""
    slack = timedelta(days=slack_days)
    out: list[tuple[datetime, datetime]] = []
    for start, end in dates:
        if (start - slack, end + slack) not in out:
            out.append((start - slack, end + slack))
    return tuple(out)


def named_dates(query: str) -> tuple[tuple[tuple[datetime, datetime], ...], frozenset[str]]:
    """Day or month intervals (UTC) for the calendar dates written out in ``query`` (at most
    :data:`MAX_DATES`), and the words that write them."""
    text = query.lower()
    taken: list[tuple[int, int]] = []
    out: list[tuple[datetime, datetime]] = []
    for pattern, (y, m, d) in _DATE_FORMS:
        for match in pattern.finditer(text):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue
            taken.append(match.span())
            month = match[m]
            month_no = int(month) if month.isdigit() else _MONTHS.index(month) + 1
            try:
                if d:
                    start = datetime(int(match[y]), month_no, int(match[d]), tzinfo=UTC)
                    end = start + timedelta(days=1)
                else:
                    start = datetime(int(match[y]), month_no, 1, tzinfo=UTC)
                    end = (start + timedelta(days=32)).replace(day=1)
            except ValueError:
                continue
            if (start, end) not in out:
                out.append((start, end))
    words = frozenset(w for a, b in taken for w in WORD.findall(text[a:b]))
    return tuple(out[:MAX_DATES]), words


# --- project names the query may mention ---------------------------------------------------

_PROJECT_WORD = re.compile(r"[a-z0-9][a-z0-9._-]*[a-z0-9]")
_PATH_PARTS = frozenset(
    [
        "home",
        "users",
        "user",
        "src",
        "dev",
        "work",
        "code",
        "projects",
        "project",
        "repos",
        "repo",
        "git",
        "tmp",
        "var",
        "opt",
        "srv",
        "mnt",
        "root",
        "workspace",
        "workspaces",
        "the",
        "and",
        "for",
        "with",
        "what",
        "which",
    ]
)
MAX_PROJECT_WORDS = 16


def project_words(query: str) -> tuple[str, ...]:
    """The query's words that could name a project (a project tag or a directory of a session's
    working directory): lower-cased, at least three characters, not a usual path part."""
    out: list[str] = []
    for word in _PROJECT_WORD.findall(query.lower()):
        if len(word) >= 3 and word not in _PATH_PARTS and word not in out:
            out.append(word)
    return tuple(out[:MAX_PROJECT_WORDS])


# --- the query, parsed once ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """The user's words read once for every part of a search: the full-text terms and LIKE
    patterns, the days it names, the project names it may hold and its content words (for the
    confidence of each hit)."""

    text: str
    terms: QueryTerms
    dates: tuple[tuple[datetime, datetime], ...]
    """The days or months the query names, widened by ``SearchTuning.date_slack_days``."""
    anchors: tuple[tuple[datetime, datetime], ...]
    """The same days or months, not widened."""
    projects: tuple[str, ...]
    words: frozenset[str]
    """Content words, stemmed (:func:`~agents_memory.store.search.words.content_words`)."""
    date_terms: tuple[int, ...] = ()
    """The places (1 = first) in ``terms.terms`` of the words that write a named date: the
    date bonus matches those, not the full-text arm's confidence."""
    identifiers: frozenset[str] = frozenset()
    """The content words written like code (:func:`.words.identifier_words`): a hit holding
    them covers more of the query."""
    word_terms: tuple[tuple[str, int], ...] = ()
    """Each content word (stemmed, as in :attr:`words`) with the place (0 = first) in
    ``terms.terms`` of a full-text term written as it: how rare the word is comes from that
    term's statistics (:class:`~agents_memory.store.search.confidence.TermRarity`). A stem two
    words share is listed for each."""


def parse_query(text: str, date_slack_days: float) -> ParsedQuery:
    """``text`` read once for the whole search: lower-cased and split into words once, for the
    full-text terms and the content words alike."""
    lowered = text.lower()
    words = WORD.findall(lowered)
    anchors, date_words = named_dates(lowered)
    terms = _terms_of(words, lowered)
    content = content_of(words)
    return ParsedQuery(
        text=text,
        terms=terms,
        date_terms=tuple(
            i for i, term in enumerate(terms.terms, 1) if term.strip("'") in date_words
        ),
        dates=widened(anchors, date_slack_days),
        anchors=anchors,
        projects=project_words(lowered),
        words=content,
        identifiers=identifier_words(text),
        word_terms=_word_terms(words, content, terms.terms),
    )


def _word_terms(
    words: list[str], content: frozenset[str], terms: tuple[str, ...]
) -> tuple[tuple[str, int], ...]:
    """(content word, place of its term in ``terms``) for each of ``words`` that is both."""
    place = {term: i for i, term in enumerate(terms)}
    out: list[tuple[str, int]] = []
    for word in words:
        term = _term_of(word)
        pair = (stem(word), place.get(term, -1) if term is not None else -1)
        if pair[0] in content and pair[1] >= 0 and pair not in out:
            out.append(pair)
    return tuple(out)
