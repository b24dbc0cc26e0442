"""LoCoMo replay with perturbation (benchmarks.md §4.6): deterministic synthetic corpora of any
size, texts perturbed per replica and vectors replayed as ``normalise(v + ε)``.

Replica 0 is the original 5,882 turns; replica ``r ≥ 1`` (``seed = r``) remaps the 20 speaker
names, shifts time by ``r x 11`` days plus jitter, rewrites digit runs, drops and swaps tokens,
shuffles sentences and splices a sentence from another turn.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from bench.locomo_data import Conversation

SIGMA = (0.2346 / 384) ** 0.5
_SENT = re.compile(r"(?<=[.!?])\s+")
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class Row:
    source_id: str
    scope: str
    role: str
    text: str
    ts: datetime
    vector_index: int
    """Index of the original turn whose vector this row replays."""


def name_pool(n: int = 1000, seed: int = 12345) -> list[str]:
    rng = random.Random(seed)
    cons, vows = "bcdfghjklmnprstvz", "aeiou"
    names: set[str] = set()
    while len(names) < n:
        syll = rng.randint(2, 3)
        names.add("".join(rng.choice(cons) + rng.choice(vows) for _ in range(syll)).capitalize())
    return sorted(names)


def _remap(names: dict[str, str]) -> re.Pattern[str]:
    return re.compile(
        r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len)[::-1]) + r")\b"
    )


def _perturb(
    text: str,
    rng: random.Random,
    names: dict[str, str],
    pattern: re.Pattern[str],
    others: list[str],
) -> str:
    text = pattern.sub(lambda m: names[m.group()], text)
    text = _DIGITS.sub(lambda m: "".join(rng.choice("0123456789") for _ in m.group()), text)
    keep = set(names.values())
    tokens = [t for t in text.split(" ") if t in keep or rng.random() >= 0.10]
    for i in range(len(tokens) - 1):
        if rng.random() < 0.05 and tokens[i] not in keep and tokens[i + 1] not in keep:
            tokens[i], tokens[i + 1] = tokens[i + 1], tokens[i]
    text = " ".join(tokens)
    sentences = _SENT.split(text)
    if len(sentences) >= 2 and rng.random() < 0.5:
        rng.shuffle(sentences)
        text = " ".join(sentences)
    if rng.random() < 0.2 and others:
        donor = _SENT.split(pattern.sub(lambda m: names[m.group()], rng.choice(others)))
        text = f"{text} {rng.choice(donor)}"
    return text


def rows(convs: list[Conversation], size: int) -> Iterator[Row]:
    """The first ``size`` rows of replicas 0, 1, 2, …"""
    base = [(c, t) for c in convs for t in c.turns]
    speakers = sorted({t.speaker for _c, t in base} | {c.speaker_a for c in convs})
    pool = name_pool()
    made = 0
    replica = 0
    while made < size:
        rng = random.Random(replica)
        if replica == 0:
            mapping: dict[str, str] = {}
        else:
            mapping = dict(zip(speakers, rng.sample(pool, len(speakers)), strict=True))
        jitter = timedelta(seconds=rng.uniform(0, 6 * 3600))
        shift = timedelta(days=11 * replica) + (jitter if replica else timedelta())
        originals = [t.text for _c, t in base]
        pattern = _remap(mapping) if mapping else re.compile("$^")
        for i, (conv, turn) in enumerate(base):
            if made >= size:
                return
            text = (
                turn.text if replica == 0 else _perturb(turn.text, rng, mapping, pattern, originals)
            )
            scope = (
                f"locomo/{conv.sample_id}"
                if replica == 0
                else f"synthetic/r{replica}/{conv.sample_id}"
            )
            yield Row(
                source_id=turn.dia_id if replica == 0 else f"r{replica}|{turn.dia_id}",
                scope=scope,
                role=turn.role,
                text=text,
                ts=turn.ts + shift,
                vector_index=i,
            )
            made += 1
        replica += 1


def replay_vectors(
    base: np.ndarray[Any, Any], indices: np.ndarray[Any, Any], replicas: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """``normalise(base[i] + ε)`` with ε seeded by the replica (replica 0: unchanged)."""
    out = base[indices].astype(np.float32).copy()
    for r in np.unique(replicas):
        if r == 0:
            continue
        mask = replicas == r
        rng = np.random.default_rng(int(r))
        out[mask] += rng.normal(0, SIGMA, size=(int(mask.sum()), base.shape[1])).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out
