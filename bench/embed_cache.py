"""Embeddings of the LoCoMo turns and questions by the product's embedder, cached on disk.

A turn is embedded as the product's Cold Path embeds a stored row: after the end of the turn
before it in its session (:mod:`agents_memory.store.passages`).

The cache lives outside the repository (``--cache``, default ``$TMPDIR/am-bench-cache``) and is
keyed by a hash of the texts and the model, so a changed text set is embedded again.

    python -m bench.embed_cache --data PATH/locomo10.json
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents_memory.config import load_settings
from agents_memory.embeddings import create_embedder
from agents_memory.store.passages import passage_text
from bench import locomo_data
from bench.common import DEFAULT_CACHE, MODEL


def _key(texts: list[str], kind: str, backend: str, max_tokens: int | None) -> str:
    model = MODEL if backend == "local" else backend
    if max_tokens is not None:
        model += f"@{max_tokens}"
    digest = hashlib.sha256(("\x1f".join(texts) + kind + model).encode()).hexdigest()[:16]
    return f"{kind}-{digest}.npy"


def embed(
    texts: list[str],
    kind: str,
    cache: Path,
    *,
    log: bool = True,
    backend: str = "local",
    max_tokens: int | None = None,
) -> np.ndarray[Any, Any]:
    """``texts`` embedded as ``kind`` (``passage`` or ``query``) by the ``backend``'s model
    (``EMBEDDING_BACKEND``, or ``minilm``: :mod:`bench.minilm`; its own token cap unless
    ``max_tokens``), from the cache when present."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / _key(texts, kind, backend, max_tokens)
    if path.exists():
        cached: np.ndarray[Any, Any] = np.load(path)
        return cached
    if backend == "minilm":
        from bench.minilm import MiniLMEmbedder

        embedder: Any = MiniLMEmbedder()
    else:
        settings = load_settings(env_file=cache / "absent.env", embedding_backend=backend)
        embedder = create_embedder(settings)
        assert embedder is not None
    if max_tokens is not None:
        embedder.max_tokens = max_tokens  # the local backends
    started = time.perf_counter()
    out = []
    with embedder:
        for i in range(0, len(texts), 128):
            chunk = texts[i : i + 128]
            fn = embedder.embed_passages if kind == "passage" else embedder.embed_queries
            out.append(np.asarray(fn(chunk), dtype=np.float32))
            if log:
                done = i + len(chunk)
                rate = done / (time.perf_counter() - started)
                print(f"  embedded {done}/{len(texts)} {kind}s ({rate:.1f}/s)", flush=True)
    array = np.concatenate(out)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, array)
    tmp.rename(path)
    (cache / f"{path.stem}.rate").write_text(
        f"{len(texts) / (time.perf_counter() - started):.2f}\n", encoding="utf-8"
    )
    return array


def passages(conv: locomo_data.Conversation) -> list[str]:
    """What the product embeds for each turn (in turn order): the turn after the end of the
    one before it in its session (:func:`agents_memory.store.passages.passage_text`)."""
    out: list[str] = []
    for i, t in enumerate(conv.turns):
        prev = conv.turns[i - 1] if i > 0 and conv.turns[i - 1].session == t.session else None
        out.append(passage_text(t.text, prev.text if prev else None))
    return out


def locomo_vectors(
    data: Path, cache: Path
) -> tuple[list[locomo_data.Conversation], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Conversations, turn vectors (in turn order) and question vectors (in question order)."""
    convs = locomo_data.load(data)
    turns = [p for c in convs for p in passages(c)]
    questions = [q.question for c in convs for q in c.questions]
    return convs, embed(turns, "passage", cache), embed(questions, "query", cache)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()
    _convs, t, q = locomo_vectors(args.data, args.cache)
    print(f"turn vectors {t.shape}, question vectors {q.shape} in {args.cache}")


if __name__ == "__main__":
    main()
