"""The coding set's passages and queries embedded by the product's local embedder, cached on
disk (``bench/embed_cache.py``): each turn after the end of the turn before it in its session,
as the Cold Path embeds a stored row.

    python -m bench.codeset.vectors   # fill the cache ahead of ``bench.coding_recall``
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from agents_memory.store.passages import passage_text
from bench import embed_cache
from bench.codeset.generate import CodeSet, generate
from bench.common import DEFAULT_CACHE


def passages(cs: CodeSet) -> dict[str, str]:
    """Turn key → the text the Cold Path embeds for it."""
    out: dict[str, str] = {}
    for s in cs.sessions:
        prev: str | None = None
        for t in s.turns:
            out[t.key] = passage_text(t.text, prev)
            prev = t.text
    return out


def queries(cs: CodeSet) -> list[str]:
    return [q.text for q in cs.questions] + cs.nonsense + cs.offtopic


def vectors(
    cs: CodeSet, cache: Path, *, log: bool = True
) -> tuple[dict[str, np.ndarray[Any, Any]], dict[str, np.ndarray[Any, Any]]]:
    """(passage text → vector, query text → vector)."""
    texts = sorted(set(passages(cs).values()))
    qs = sorted(set(queries(cs)))
    pv = embed_cache.embed(texts, "passage", cache, log=log)
    qv = embed_cache.embed(qs, "query", cache, log=log)
    return dict(zip(texts, pv, strict=True)), dict(zip(qs, qv, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--seed", type=int, default=24)
    args = parser.parse_args()
    p, q = vectors(generate(args.seed), args.cache)
    print(f"{len(p)} passage vectors, {len(q)} query vectors in {args.cache}")


if __name__ == "__main__":
    main()
