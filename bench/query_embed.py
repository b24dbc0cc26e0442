"""Query embedding latency with one and two model threads, interleaved (issue 24).

    python -m bench.query_embed --data PATH/locomo10.json [--queries 200]

``search_memory`` embeds its query before searching. The LoCoMo questions (the first
``--queries``) are embedded one at a time, as a search does, by two local embedders: one
thread (:data:`agents_memory.embeddings.QUERY_THREADS`, what the server and the CLI use) and
two (the default before); the two alternate question by question (which goes first alternates
too), so that the machine's load hits both alike.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agents_memory.embeddings import LOCAL_DIM, LOCAL_MODEL
from agents_memory.embeddings.local import LocalEmbedder
from agents_memory.store.database import EmbeddingSpec
from bench import common, locomo_data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    head = common.header(common.command_line())
    convs = locomo_data.load(args.data)
    texts = [q.question for c in convs for q in c.questions][: args.queries]
    spec = EmbeddingSpec(LOCAL_MODEL, LOCAL_DIM)
    models = {1: LocalEmbedder(spec, threads=1), 2: LocalEmbedder(spec, threads=2)}
    for model in models.values():
        model.embed_query("warm up")
    seconds: dict[int, list[float]] = {1: [], 2: []}
    start_load = common.load_avg()
    for i, text in enumerate(texts):
        for threads in (1, 2) if i % 2 else (2, 1):
            started = time.perf_counter()
            models[threads].embed_query(text)
            seconds[threads].append(time.perf_counter() - started)
    for model in models.values():
        model.close()
    rows = []
    for threads, secs in seconds.items():
        s = common.summary_ms(secs)
        rows.append((threads, len(secs), s["p50"], s["p95"], s["p99"], s["max"]))
    table = common.table(["threads", "queries", "p50 ms", "p95 ms", "p99 ms", "max ms"], rows)
    body = (
        f"{head}\nOne LoCoMo question at a time, the two embedders alternating; load average"
        f" {start_load} → {common.load_avg()}.\n\n{table}\n"
    )
    print(body)
    common.write_section("Query embedding threads (bench.query_embed)", body)


if __name__ == "__main__":
    main()
