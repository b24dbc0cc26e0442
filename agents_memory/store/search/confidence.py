"""How sure a search is of each hit, and whether its best hit is too weak to present as memory.

A hit's confidence is a logistic function of two things the search already knows: how much of
the query's content the hit covers (its words, its project, the day the query names) and its
cosine to the query vector. The weights were fitted on the tuning half of the coding set
(``bench/coding_recall.py --dump``), so a confidence reads roughly as the chance that the hit is
the turn asked for; a search whose best hit is below ``SearchTuning.weak_below`` says so.

:func:`assess` is the one place that decides "weak": the search's note and any later gate on
what memory may answer read its :class:`Assessment`.

Pure (no SQL)."""

from __future__ import annotations

import math
from collections.abc import Set
from dataclasses import dataclass, replace

from agents_memory.store.search.terms import ParsedQuery
from agents_memory.store.search.types import SearchHit, SearchTuning
from agents_memory.store.search.words import WORD, stem


@dataclass(frozen=True, slots=True)
class Assessment:
    """The hits with their confidence, the best of them and whether it is weak."""

    hits: tuple[SearchHit, ...]
    best: float
    weak: bool


def coverage(words: Set[str], hit: SearchHit) -> float:
    """The share of ``words`` (content words, :attr:`ParsedQuery.words`) the hit holds (in its
    text, its working directory or the actions found for it), plus the share a named day
    stands for when the hit got that bonus."""
    if not words:
        return 0.0
    acted = " ".join(a.text() for a in hit.actions)
    own = {stem(w) for w in WORD.findall(f"{hit.message} {hit.cwd or ''} {acted}".lower())}
    share = len(words & own) / len(words)
    if hit.why.date_boost:
        share = min(1.0, share + 0.5)
    return share


def confidence(cover: float, similarity: float | None, tuning: SearchTuning) -> float:
    """The calibrated chance that a hit with this ``cover`` and cosine is the turn asked for."""
    bias, w_cover, w_sim, sim_centre = tuning.confidence_weights
    sim = similarity if similarity is not None else sim_centre
    z = bias + w_cover * cover + w_sim * (sim - sim_centre)
    return 1.0 / (1.0 + math.exp(-z))


def assess(query: ParsedQuery, hits: tuple[SearchHit, ...], tuning: SearchTuning) -> Assessment:
    """The hits with their confidence, and whether the best of them is weak."""
    rated = tuple(
        replace(
            h, confidence=round(confidence(coverage(query.words, h), h.why.similarity, tuning), 3)
        )
        for h in hits
    )
    best = max((h.confidence or 0.0 for h in rated), default=0.0)
    return Assessment(rated, best, best < tuning.weak_below)
