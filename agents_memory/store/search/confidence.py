"""How sure a search is of each hit, and whether its best hit is too weak to present as memory.

A hit's confidence is a logistic function of two things the search already knows: how much of
the query's content the hit covers (its words, a word written like code counting
``SearchTuning.identifier_weight`` times, its project, the day the query names, and the project
a per-prompt recall's search is confined to, :data:`SCOPE_WORDS`; a stop word of the full-text
configuration counting nothing, and ``SearchTuning.coverage_prior`` more words no hit holds, so a
share of few words is less sure) and its cosine to the query vector. How many rows hold each
word comes back with the search's rows (:class:`TermRarity`); weighing the words by it
(``SearchTuning.rarity_weighting``) was measured and is off. The weights were fitted on the
tuning half of the coding set (``bench/coding_recall.py --dump``, ``bench/fit_confidence.py``),
so a confidence reads roughly as the chance that the hit is the turn asked for; a search whose
best hit is below ``SearchTuning.weak_below`` says so.

:func:`assess` is the one place that rates hits and decides "weak" (the search's note);
:func:`speaks` reads the same confidence against ``SearchTuning.speak_above``, the stricter bar
for memory offered unasked (a per-prompt recall).

Pure (no SQL)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
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
class TermRarity:
    """How many rows hold each of the query's full-text terms, as the full-text arm estimated
    them for BM25 (:mod:`agents_memory.store.search.fulltext`: the sampled rows in scope scaled
    to the table, or the Cold Path's count of a common word, the greater), read back with the
    search's rows."""

    rows: tuple[float | None, ...]
    """One per term of :attr:`QueryTerms.terms`, in order; ``None``: the text-search
    configuration drops the word (a stop word: held by about every row)."""
    pool: float
    """The rows those counts are out of (the table's, estimated)."""


@dataclass(frozen=True, slots=True)
class Assessment:
    """The hits with their confidence, the best of them and whether it is weak."""

    hits: tuple[SearchHit, ...]
    best: float
    weak: bool


def coverage(
    weights: Mapping[str, float],
    hit: SearchHit,
    finder: re.Pattern[str] | None = None,
    implied: float = 0.0,
    prior: float = 0.0,
) -> float:
    """The share of the query's content words (:attr:`ParsedQuery.words`) the hit holds (in
    its text, its working directory or the actions found for it), each counting its weight
    (:func:`word_weights`), plus the share a named day stands for when the hit got that bonus.
    ``implied``: the weight of words the query stands for without writing them, which every
    hit holds (the project of a search scoped to one by its working directory:
    :data:`SCOPE_WORDS`). ``prior``: as many more words no hit holds
    (``SearchTuning.coverage_prior``), so a share rests on the number of words it was counted
    on: one word of two is less sure than five of ten. ``finder``: :func:`word_finder` of the
    words, made once per search."""
    if not weights:
        return 0.0
    finder = finder or word_finder(weights.keys())
    acted = " ".join(a.text() for a in hit.actions)
    text = f"{hit.message} {hit.cwd or ''} {acted}".lower()
    own = {stem(m[0]) for m in finder.finditer(text)}
    held = sum(n for w, n in weights.items() if w in own)
    whole = sum(weights.values()) + implied + prior
    share = (held + implied) / whole if whole > 0 else 0.0
    if hit.why.date_boost:
        share = min(1.0, share + 0.5)
    return share


def word_weights(
    query: ParsedQuery, tuning: SearchTuning, rarity: TermRarity | None = None
) -> dict[str, float]:
    """Each content word's weight in a hit's :func:`coverage`: ``identifier_weight`` for a
    word written like code, else 1; 0 for a word the text-search configuration drops (a stop
    word it knows and :mod:`.words` does not, "while", "because": the search itself ignores
    it). With ``rarity_weighting``, times how rare the word is: its BM25 idf over ``rarity``
    (the rarest form of a stem two words share) divided by the mean idf of the query's other
    words, so a word of average rarity counts 1 and the weights keep the scale
    :data:`SCOPE_WORDS` is written in. Without statistics (no full-text arm, no rows) or for a
    word without a term of its own, a word counts as one of average rarity."""
    base = {w: tuning.identifier_weight if w in query.identifiers else 1.0 for w in query.words}
    if rarity is None:
        return base
    counts: dict[str, list[float | None]] = {}
    for word, place in query.word_terms:
        if place < len(rarity.rows):
            counts.setdefault(word, []).append(rarity.rows[place])
    idf = {
        w: min(_idf(c, rarity.pool) for c in found if c is not None)
        for w, found in counts.items()
        if any(c is not None for c in found)
    }
    mean = sum(idf.values()) / len(idf) if idf else 0.0
    rare = tuning.rarity_weighting and mean > 0.0
    return {
        w: 0.0 if w in counts and w not in idf else n * (idf.get(w, mean) / mean if rare else 1.0)
        for w, n in base.items()
    }


def _idf(rows: float | None, pool: float) -> float:
    """BM25's idf of a word ``rows`` of ``pool`` rows hold (``None``: all of them), as the
    full-text arm computes it."""
    held = pool if rows is None else min(max(rows, 0.0), pool)
    return math.log(1.0 + (pool - held + 0.5) / (held + 0.5))


def word_finder(words: Iterable[str]) -> re.Pattern[str]:
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
    query: ParsedQuery,
    hits: tuple[SearchHit, ...],
    tuning: SearchTuning,
    *,
    scoped: bool = False,
    rarity: TermRarity | None = None,
) -> Assessment:
    """The hits with their confidence (and their :func:`coverage` in ``why.coverage``), and
    whether the best of them is weak. ``scoped``: the search is confined to the project of the
    asker's working directory (a per-prompt recall's first search, ``SearchFilters.git_root``),
    which every hit is of: that project counts as :data:`SCOPE_WORDS` words of the query each
    hit holds. ``rarity``: the full-text arm's counts of the query's words
    (:func:`word_weights`)."""
    weights = word_weights(query, tuning, rarity)
    finder = word_finder(weights) if weights else None
    implied = SCOPE_WORDS if scoped else 0.0
    rated = []
    for h in hits:
        cover = coverage(weights, h, finder, implied, tuning.coverage_prior)
        rated.append(
            replace(
                h,
                confidence=round(confidence(cover, h.why.similarity, tuning), 3),
                why=replace(h.why, coverage=round(cover, 3)),
            )
        )
    best = max((h.confidence or 0.0 for h in rated), default=0.0)
    return Assessment(tuple(rated), best, best < tuning.weak_below)


def speaks(hit_confidence: float | None, tuning: SearchTuning) -> bool:
    """Whether a hit of this confidence (from :func:`assess`) may be offered unasked."""
    return hit_confidence is not None and hit_confidence >= tuning.speak_above
