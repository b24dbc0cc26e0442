"""Several phrasings of one question, one ranking: reciprocal-rank fusion of their results.

Each phrasing is searched on its own (the hybrid ranking, its confidence and "weak" as for one
query); a hit scores ``sum(1 / (k + rank))`` over the phrasings that found it, keeps its best
confidence, and the page is the ``limit`` best. Phrasings whose best hit is weak join only
when every phrasing is weak (their few nearest rows would push real matches down).

Pure (no SQL)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agents_memory.store.search.types import SearchHit, SearchResult

RRF_K = 60
"""The reciprocal-rank constant (the usual 60: a first place counts little more than a
tenth)."""
MAX_PHRASINGS = 5
"""A search takes at most this many phrasings (``query`` and up to 4 ``queries``)."""


def fuse_results(results: Sequence[SearchResult], limit: int, k: int = RRF_K) -> SearchResult:
    """One result for ``results`` (one per phrasing, the first the caller's main phrasing)."""
    if len(results) == 1:
        return results[0]
    strong = [r for r in results if not r.weak and r.hits]
    used = strong or list(results)
    scores: dict[int, float] = {}
    best: dict[int, SearchHit] = {}
    for result in used:
        for rank, hit in enumerate(result.hits, 1):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / (k + rank)
            kept = best.get(hit.id)
            if kept is None or (hit.confidence or 0.0) > (kept.confidence or 0.0):
                best[hit.id] = hit
    order = sorted(scores, key=lambda i: (-scores[i], -(best[i].confidence or 0.0), -i))
    shown = limit if strong else max(len(r.hits) for r in results)
    hits = tuple(best[i] for i in order[:shown])
    first = used[0]
    notes = [r.note for r in used if r.note]
    return replace(
        first,
        hits=hits,
        weak=not strong,
        note=notes[0] if notes else None,
        top_similarity=max(
            (r.top_similarity for r in used if r.top_similarity is not None), default=None
        ),
        vector_used=any(r.vector_used for r in used),
    )
