"""Fit the confidence weights (``SearchTuning.confidence_weights``) on the coding set's tuning
half: a logistic regression of "this hit is the gold turn" on the hit's coverage of the query
and its cosine, over the ``real-tuning`` hits of a ``bench.coding_recall --dump`` file.

    python -m bench.coding_recall --no-write --dump /tmp/cr.jsonl
    python -m bench.fit_confidence /tmp/cr.default.jsonl

Only the tuning half's real questions are read (the held-out half, the nonsense and off-topic
queries are never fitted on). The cosine centre stays fixed (``--centre``, the product's 0.82):
a hit without a cosine reads as the centre, as :func:`agents_memory.store.search.confidence.
confidence` reads it. Prints the weights and, for the weak bar, the tuning half's best hits by
group (nonsense, off-topic and real questions; the bar lies between them).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from agents_memory.store.search import SearchTuning


def logistic(
    x: np.ndarray[Any, Any], y: np.ndarray[Any, Any], ridge: float
) -> np.ndarray[Any, Any]:
    """Weights (bias first) of a logistic regression of ``y`` on ``x``, by Newton's method with a
    small ridge on the non-bias weights (the classes separate almost perfectly)."""
    design = np.hstack([np.ones((x.shape[0], 1)), x])
    w = np.zeros(design.shape[1])
    penalty = np.diag([0.0] + [ridge] * x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-design @ w))
        grad = design.T @ (y - p) - penalty @ w
        hess = design.T @ (design * (p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hess, grad)
        w += step
        if np.max(np.abs(step)) < 1e-9:
            break
    return w


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump", type=Path)
    parser.add_argument("--centre", type=float, default=SearchTuning().confidence_weights[3])
    parser.add_argument("--ridge", type=float, default=1e-3)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.dump.read_text(encoding="utf-8").splitlines()]
    fit = [r for r in rows if r["group"] == "real-tuning" and r["cover"] is not None]
    x = np.array([[r["cover"], (r["sim"] if r["sim"] is not None else args.centre) - args.centre]
                  for r in fit])  # fmt: skip
    y = np.array([1.0 if r["gold"] else 0.0 for r in fit])
    bias, w_cover, w_sim = logistic(x, y, args.ridge)
    print(f"{len(fit)} hits ({int(y.sum())} gold) of the tuning half's real questions")
    print(f"confidence_weights = ({bias:.2f}, {w_cover:.2f}, {w_sim:.2f}, {args.centre})")
    z = bias + x @ np.array([w_cover, w_sim])
    p = 1.0 / (1.0 + np.exp(-z))
    for lo, hi in ((0, 0.1), (0.1, 0.3), (0.3, 0.5), (0.5, 1.01)):
        sel = (p >= lo) & (p < hi)
        if sel.any():
            print(f"  predicted {lo}-{hi}: {sel.sum()} hits, mean {p[sel].mean():.3f},"
                  f" observed {y[sel].mean():.3f}")  # fmt: skip
    best: dict[str, list[float]] = defaultdict(list)
    first: dict[tuple[str, int], float] = {}
    for r in rows:
        if r["group"] in ("nonsense", "offtopic", "real-tuning") and r["cover"] is not None:
            sim = (r["sim"] if r["sim"] is not None else args.centre) - args.centre
            conf = 1.0 / (1.0 + np.exp(-(bias + w_cover * r["cover"] + w_sim * sim)))
            key = (r["group"], r["query"])
            first[key] = max(first.get(key, 0.0), float(conf))
    for (group, _q), conf in first.items():
        best[group].append(conf)
    for group, confs in sorted(best.items()):
        print(f"  {group}: {len(confs)} queries, best hit min {min(confs):.4f},"
              f" max {max(confs):.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
