"""The lexical baseline on the coding pool: Okapi BM25 (k1 1.2, b 0.75, benchmarks.md §4.5) over
every turn, English stop words removed, words split at non-alphanumerics (so ``parse_invoice``
is two words, as PostgreSQL's parser splits it). No stemming (``snowballstemmer`` is not a
dependency); the LoCoMo reference B1 stems."""

from __future__ import annotations

import math
import re
from collections import Counter

from bench.codeset.paraphrase import STOP

_WORD = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOP]


class BM25:
    def __init__(self, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = {key: Counter(tokens(text)) for key, text in docs.items()}
        self.len = {key: sum(c.values()) for key, c in self.tf.items()}
        self.avgdl = sum(self.len.values()) / max(1, len(self.len))
        df: Counter[str] = Counter()
        for c in self.tf.values():
            df.update(c.keys())
        n = len(self.tf)
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
        self.postings: dict[str, list[str]] = {}
        for key, c in self.tf.items():
            for w in c:
                self.postings.setdefault(w, []).append(key)

    def top(self, query: str, k: int = 10) -> list[str]:
        scores: Counter[str] = Counter()
        for w in set(tokens(query)):
            idf = self.idf.get(w)
            if idf is None:
                continue
            for key in self.postings[w]:
                tf = self.tf[key][w]
                norm = self.k1 * (1 - self.b + self.b * self.len[key] / self.avgdl)
                scores[key] += idf * tf * (self.k1 + 1) / (tf + norm)
        return [key for key, _ in scores.most_common(k)]
