"""The words of a text as search reads them: one word pattern for the query's full-text terms
and for the content words a hit's confidence counts, the stop words the confidence skips, and a
crude stem.

Pure (no SQL)."""

from __future__ import annotations

import re

WORD = re.compile(r"[^\W_]+")
"""A word: a run of letters and digits (an underscore splits ``snake_case``)."""
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "by",
        "with",
        "from",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "done",
        "we",
        "us",
        "our",
        "you",
        "your",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "how",
        "why",
        "when",
        "where",
        "there",
        "here",
        "so",
        "not",
        "no",
        "now",
        "one",
        "any",
        "some",
        "each",
        "all",
        "more",
        "most",
        "than",
        "then",
        "too",
        "very",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "has",
        "have",
        "had",
        "use",
        "used",
        "get",
        "got",
        "make",
        "made",
        "into",
        "over",
        "under",
        "since",
        "before",
        "after",
        "about",
        "up",
        "down",
        "out",
        "off",
        "again",
        "just",
        "only",
        "own",
        "same",
        "such",
        "as",
        "if",
        "i",
        "me",
        "my",
        "he",
        "she",
        "they",
        "them",
        "his",
        "her",
        "their",
        "last",
        "ago",
        "week",
        "day",
        "month",
        "year",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)


STEM_CHARS = 5
"""A word's stem is its first this many characters."""


def is_stop_word(word: str) -> bool:
    """Whether ``word`` (lower case) says nothing a search could find a turn by ("about",
    "which"): the confidence skips it, the word fallback does not look for it."""
    return word in _STOP


def stem(word: str) -> str:
    return word[:STEM_CHARS] if len(word) > STEM_CHARS else word


def content_words(text: str) -> frozenset[str]:
    """The content words of ``text``: stemmed crudely, stop words, numbers and dates left
    out."""
    return content_of(WORD.findall(text.lower()))


def content_of(words: list[str]) -> frozenset[str]:
    """The content words among ``words`` (``text``'s, lower-cased, :data:`WORD`)."""
    return frozenset(stem(w) for w in words if len(w) > 1 and w not in _STOP and not w.isdigit())


_IDENTIFIER = re.compile(r"[A-Za-z0-9]*(?:[a-z][A-Z]|[A-Za-z][0-9]|[0-9][A-Za-z]|_)[A-Za-z0-9_]*")
"""A token written like code: camelCase, snake_case, letters and digits mixed (``E4821``)."""


def identifier_words(text: str) -> frozenset[str]:
    """The content words of ``text`` that are (parts of) tokens written like code, stemmed as
    :func:`content_words` stems them."""
    parts = " ".join(_IDENTIFIER.findall(text))
    return content_words(parts)


def action_terms(text: str, limit: int = 16) -> tuple[str, ...]:
    """The words of ``text`` an action's full text is searched for: content words (no stop
    words, no bare numbers), each as the crude stem (:func:`stem`), in the query's order. An
    action's text is split at every non-alphanumeric character, unstemmed (migration 0015), so
    each word is looked up as a prefix: ``migrations`` finds ``migration.py``."""
    found: list[str] = []
    for word in WORD.findall(text.lower()):
        if len(word) < 2 or word in _STOP or word.isdigit():
            continue
        plural = len(word) > 3 and word.endswith("s") and not word.endswith("ss")
        root = stem(word[:-1] if plural else word)  # "tests" finds "test"
        if root not in found:
            found.append(root)
    return tuple(found[:limit])
