"""How sure a search is of each hit, and whether its best hit is too weak to present as memory.

A hit's confidence is a logistic function of two things the search already knows: how much of
the query's content the hit covers (its words, its project, the day the query names) and its
cosine to the query vector. The weights were fitted on the tuning half of the coding set
(``bench/coding_recall.py --dump``), so a confidence reads roughly as the chance that the hit is
the turn asked for; a search whose best hit is below ``SearchTuning.weak_below`` says so.

Pure (no SQL)."""

from __future__ import annotations

import math
import re
from dataclasses import replace

from agents_memory.store.search.types import SearchHit, SearchTuning

_WORD = re.compile(r"[^\W_]+")
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


def _stem(word: str) -> str:
    return word[:5] if len(word) > 5 else word


def query_words(query: str) -> set[str]:
    """The query's content words (stemmed crudely; numbers and dates left out)."""
    return {
        _stem(w)
        for w in _WORD.findall(query.lower())
        if len(w) > 1 and w not in _STOP and not w.isdigit()
    }


def coverage(words: set[str], hit: SearchHit) -> float:
    """The share of ``words`` the hit holds (in its text or its working directory), plus the
    share a named project or day stands for when the hit got that bonus."""
    if not words:
        return 0.0
    own = {_stem(w) for w in _WORD.findall(f"{hit.message} {hit.cwd or ''}".lower())}
    share = len(words & own) / len(words)
    if hit.why.date_boost:
        share = min(1.0, share + 0.5)
    return share


def confidence(cover: float, similarity: float | None, tuning: SearchTuning) -> float:
    bias, w_cover, w_sim, sim_centre = tuning.confidence_weights
    sim = similarity if similarity is not None else sim_centre
    z = bias + w_cover * cover + w_sim * (sim - sim_centre)
    return 1.0 / (1.0 + math.exp(-z))


def assess(
    query: str, hits: tuple[SearchHit, ...], tuning: SearchTuning
) -> tuple[tuple[SearchHit, ...], bool]:
    """The hits with their confidence, and whether the best of them is weak."""
    words = query_words(query)
    rated = tuple(
        replace(h, confidence=round(confidence(coverage(words, h), h.why.similarity, tuning), 3))
        for h in hits
    )
    best = max((h.confidence or 0.0 for h in rated), default=0.0)
    return rated, best < tuning.weak_below
