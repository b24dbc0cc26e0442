"""Query embedding latency: one model thread, two, and the product's choice per call, on a free
machine and on busy cores, interleaved (issues 24 and 36).

    python -m bench.query_embed --data PATH/locomo10.json [--queries 200] [--busy 2]

``search_memory`` embeds its query before searching. The LoCoMo questions (the first
``--queries``) are embedded one at a time, as a search does, by two local embedders: one
thread (the rule before issue 36) and the product's (``adaptive``: two while nothing else is
ready to run, else one, :func:`agents_memory.embeddings.cores.threads_now`); they take turns
ten questions at a time, so that the machine's load hits both alike. A third model with two
threads of its own in the same process is left out on purpose: two OpenMP teams in one process
outnumber two cores, libgomp then lets its waiting threads sleep at once, and neither two-thread
model gains anything (22.6 ms one thread, 25 ms each two-thread model, measured; the capture
daemon, which holds the Cold Path's model beside the query model, is in that case). Then the
same again with ``--busy`` processes spinning on the CPU (the busy case that made one thread
the rule: two OpenMP threads waiting for each other on taken cores). Both share the
process's OpenMP, loaded with the product's short spin (``GOMP_SPINCOUNT``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from agents_memory.embeddings import LOCAL_DIM, LOCAL_MODEL
from agents_memory.embeddings.local import LocalEmbedder
from agents_memory.store.database import EmbeddingSpec
from bench import common, locomo_data

VARIANTS = ("1 thread", "the product's (per call: 2 when the cores are free, else 1)")


BLOCK = 10
"""Questions a model embeds in a row before the next takes its turn: a server keeps one query
model, warm in the CPU's caches from one search to the next; models taking turns question
by question would each start cold."""


def timed(models: dict[str, LocalEmbedder], texts: list[str]) -> dict[str, list[float]]:
    """Seconds per query for each model, the models taking turns block by block
    (:data:`BLOCK` questions), in a rotating order."""
    seconds: dict[str, list[float]] = {name: [] for name in models}
    names = list(models)
    for b, start in enumerate(range(0, len(texts), BLOCK)):
        for name in names[b % 2 :] + names[: b % 2]:
            for text in texts[start : start + BLOCK]:
                started = time.perf_counter()
                models[name].embed_query(text)
                seconds[name].append(time.perf_counter() - started)
    return seconds


def spinners(n: int) -> list[subprocess.Popen[bytes]]:
    """``n`` processes that keep a core busy each until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(max(0, n))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--busy", type=int, default=2, help="spinning processes for the busy run")
    args = parser.parse_args()
    head = common.header(common.command_line())
    convs = locomo_data.load(args.data)
    texts = [q.question for c in convs for q in c.questions][: args.queries]
    spec = EmbeddingSpec(LOCAL_MODEL, LOCAL_DIM)
    models = {
        VARIANTS[0]: LocalEmbedder(spec, threads=1),
        VARIANTS[1]: LocalEmbedder(spec, threads=2, adaptive=True),
    }
    for model in models.values():
        model.embed_query("warm up")
    rows = []
    loads = []
    for case, busy in (("as found", 0), (f"+{args.busy} spinning processes", args.busy)):
        procs = spinners(busy)
        try:
            time.sleep(1.0 if busy else 0.0)
            start_load = common.load_avg()
            seconds = timed(models, texts)
            loads.append(f"{case}: {start_load} → {common.load_avg()}")
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()
        for name, secs in seconds.items():
            s = common.summary_ms(secs)
            rows.append((case, name, len(secs), s["p50"], s["p95"], s["p99"], s["max"]))
    for model in models.values():
        model.close()
    headers = ["machine", "threads", "queries", "p50 ms", "p95 ms", "p99 ms", "max ms"]
    table = common.table(headers, rows)
    body = (
        f"{head}\nOne LoCoMo question at a time, the two embedders taking turns ten questions at"
        " a time; load average"
        f" {'; '.join(loads)}.\n\n{table}\n"
    )
    print(body)
    common.write_section("Query embedding threads (bench.query_embed)", body)


if __name__ == "__main__":
    main()
