"""How sure a search is of each hit, and whether its best hit is too weak to present as memory.

A hit's confidence is a logistic function of two things the search already knows: how much of
the query's content the hit covers (its words, a word written like code counting
``SearchTuning.identifier_weight`` times, its project, the day the query names, and the project
a per-prompt recall's search is confined to, :data:`SCOPE_WORDS`) and its cosine to the query
vector. The weights were fitted on the tuning half of the coding set
(``bench/coding_recall.py --dump``), so a confidence reads roughly as the chance that the hit is
the turn asked for; a search whose best hit is below ``SearchTuning.weak_below`` says so.

:func:`assess` is the one place that rates hits and decides "weak" (the search's note);
:func:`speaks` reads the same confidence against ``SearchTuning.speak_above``, the stricter bar
for memory offered unasked (a per-prompt recall).

Pure (no SQL)."""

from __future__ import annotations

import math
import re
from collections.abc import Set
from dataclasses import dataclass, replace

from agents_memory.store.search.terms import ParsedQuery
from agents_memory.store.search.types import SearchHit, SearchTuning
from agents_memory.store.search.words import STEM_CHARS, stem

SCOPE_WORDS = 1.0
"""A search confined to the project of the asker's working directory (the prompt was typed
there) names that project without writing it: in a hit's coverage it counts as this many words
of the query, held by every hit in scope. Per-prompt recall (``bench/prompt_recall.py``, the
bar chosen on the tuning half each time): the related prompts given their memory 0.716 / 0.697
(tuning / held-out) without, 0.761 / 0.711 with one word; unrelated prompts silent 0.98 held
out both ways."""


@dataclass(frozen=True, slots=True)
class Assessment:
    """The hits with their confidence, the best of them and whether it is weak."""

    hits: tuple[SearchHit, ...]
    best: float
    weak: bool


def coverage(
    words: Set[str],
    hit: SearchHit,
    finder: re.Pattern[str] | None = None,
    heavy: Set[str] = frozenset(),
    weight: float = 1.0,
    implied: float = 0.0,
) -> float:
    """The share of ``words`` (content words, :attr:`ParsedQuery.words`) the hit holds (in its
    text, its working directory or the actions found for it), each of ``heavy``
    (:attr:`ParsedQuery.identifiers`) counting ``weight`` times, plus the share a named day
    stands for when the hit got that bonus. ``implied``: the weight of words the query stands
    for without writing them, which every hit holds (the project of a search scoped to one by
    its working directory: :data:`SCOPE_WORDS`). ``finder``: :func:`word_finder` of
    ``words``, made once per search."""
    if not words:
        return 0.0
    finder = finder or word_finder(words)
    acted = " ".join(a.text() for a in hit.actions)
    text = f"{hit.message} {hit.cwd or ''} {acted}".lower()
    own = {stem(m[0]) for m in finder.finditer(text)}
    sizes = {w: weight if w in heavy else 1.0 for w in words}
    held = sum(n for w, n in sizes.items() if w in own)
    share = (held + implied) / (sum(sizes.values()) + implied)
    if hit.why.date_boost:
        share = min(1.0, share + 0.5)
    return share


def word_finder(words: Set[str]) -> re.Pattern[str]:
    """A pattern matching, in a lower-cased text, exactly the words whose stem
    (:func:`~agents_memory.store.search.words.stem`) is one of ``words``: a whole word for a
    stem shorter than the stem length, any word starting with it otherwise. One scan of a hit's
    text instead of splitting it all into words."""
    whole = [re.escape(w) + r"(?![^\W_])" for w in words if len(w) < STEM_CHARS]
    start = [re.escape(w) + r"[^\W_]*" for w in words if len(w) >= STEM_CHARS]
    return re.compile(r"(?<![^\W_])(?:" + "|".join(start + whole) + ")")


def confidence(cover: float, similarity: float | None, tuning: SearchTuning) -> float:
    """The calibrated chance that a hit with this ``cover`` and cosine is the turn asked for."""
    bias, w_cover, w_sim, sim_centre = tuning.confidence_weights
    sim = similarity if similarity is not None else sim_centre
    z = bias + w_cover * cover + w_sim * (sim - sim_centre)
    return 1.0 / (1.0 + math.exp(-z))


def assess(
    query: ParsedQuery, hits: tuple[SearchHit, ...], tuning: SearchTuning, *, scoped: bool = False
) -> Assessment:
    """The hits with their confidence, and whether the best of them is weak. ``scoped``: the
    search is confined to the project of the asker's working directory (a per-prompt recall's
    first search, ``SearchFilters.git_root``), which every hit is of: that project counts as
    :data:`SCOPE_WORDS` words of the query each hit holds."""
    finder = word_finder(query.words) if query.words else None
    implied = SCOPE_WORDS if scoped else 0.0
    rated = tuple(
        replace(
            h,
            confidence=round(
                confidence(
                    coverage(
                        query.words, h, finder, query.identifiers, tuning.identifier_weight, implied
                    ),
                    h.why.similarity,
                    tuning,
                ),
                3,
            ),
        )
        for h in hits
    )
    best = max((h.confidence or 0.0 for h in rated), default=0.0)
    return Assessment(rated, best, best < tuning.weak_below)


def speaks(hit_confidence: float | None, tuning: SearchTuning) -> bool:
    """Whether a hit of this confidence (from :func:`assess`) may be offered unasked."""
    return hit_confidence is not None and hit_confidence >= tuning.speak_above
