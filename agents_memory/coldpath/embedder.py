"""The embedder job: a vector for every row that has none.

Claims rows with ``embedding IS NULL`` (active first, then the newest, so a turn captured a
moment ago is embedded within a batch or two even behind a long backlog; rows in a retry
cooldown and rows another transaction holds are skipped), embeds their text as passages in
one batch (a turn after the end of the turn before it in its session:
:mod:`agents_memory.store.passages`) and writes the vectors with the model's name, one
transaction per batch.

Batch size. A batch is the claimed rows up to a token budget (``Embedder.token_estimate``)
and at most ``COLD_PATH_EMBED_BATCH_SIZE`` rows. The budget is what the embedder got through
in :data:`BATCH_SECONDS` in the batches before (between :data:`MIN_BATCH_TOKENS` and
:data:`BATCH_TOKENS`): a batch of long answers stays short, and on a busy machine batches
shrink (the model is compute-bound, so small batches cost little throughput). Rows captured
since the previous claim make a batch of their own, so a fresh turn waits for the batch under
way and its own. Candidates are sized before they are locked, and only the rows embedded are
locked (capture may update the newest rows meanwhile). Identical texts
in a batch are embedded once and the vector written to each of their rows. A batch the backend
refuses is retried row by row so that one bad row does not hold the others back; a row that
still fails gets ``cold_error`` and a cooldown. The job pauses (with a note) when there is no
embedder, no vector column (full-text-only database), a stamp for another model (``reembed``
needed) or a reembed under way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING

from agents_memory.coldpath.base import Job, JobContext
from agents_memory.coldpath.units import describe
from agents_memory.config import Settings
from agents_memory.errors import EmbedderUnavailable, EmbeddingMismatchError
from agents_memory.store import vectors
from agents_memory.store.coldpath import coldqueue
from agents_memory.store.coldpath.coldqueue import JobReport

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder

log = logging.getLogger(__name__)

MAX_INPUT_CHARS = 8000
"""Embedding input is cut here (the JS original); the backends cut further to their own limits."""
BATCH_TOKENS = 2048
"""The most estimated tokens in a batch (the first row is always taken, however long)."""
MIN_BATCH_TOKENS = 128
FRESH_BATCH_TOKENS = 1024
"""The fresh lane's batch: a few live turns (the first always, however long)."""
BATCH_SECONDS = 0.5
"""What one batch should take: the token budget follows the measured rate."""


class EmbedderJob(Job):
    name = "embedder"
    outage_backoff_sec = 60.0

    def __init__(
        self,
        *,
        newest_first: bool = True,
        batch_tokens: int | None = BATCH_TOKENS,
        dedupe: bool = True,
        fresh_within: timedelta | None = None,
    ) -> None:
        """The defaults are the product's; the switches exist so that benchmarks can measure
        each lever against the behaviour before issue 24 (oldest first, ``batch_tokens=None``:
        ``COLD_PATH_EMBED_BATCH_SIZE`` rows whatever their length, no dedupe) in one run.
        ``fresh_within``: the fresh lane's job (:mod:`.fresh`), which takes only live turns
        (captured and written within that time) and at most :data:`FRESH_BATCH_TOKENS`."""
        self.fresh_within = fresh_within
        self._resume_at = 0.0
        self.newest_first = newest_first
        self.batch_tokens = batch_tokens
        self.dedupe = dedupe
        self._newest_seen: int | None = None
        """The highest id the previous claim looked at (rows above it arrived since)."""
        self._rate: float | None = None
        """Estimated tokens per second of the recent batches (``None``: none yet)."""
        self.timings: dict[str, float] = {"claim": 0.0, "embed": 0.0, "write": 0.0}
        """Seconds spent per phase since the job was made (benchmarks read it)."""

    def enabled(self, settings: Settings) -> bool:
        return settings.embedding_backend != "none"

    def run(self, ctx: JobContext) -> JobReport:
        report = JobReport(self.name)
        embedder = ctx.embedder
        paused = self._paused_because(ctx)
        if paused is not None or embedder is None:
            report.notes.append(paused or "no embedder configured")
            return report
        size = max(ctx.batch_size, ctx.settings.cold_path_embed_batch_size)
        started = time.monotonic()
        total = _backlog(ctx) if ctx.drain else 0
        while not ctx.stop_requested():
            claimed = self._claim(ctx, embedder, size)
            if not claimed:
                ctx.conn.rollback()
                break
            try:
                done, failed = self._embed_batch(ctx, embedder, claimed)
            except (EmbeddingMismatchError, EmbedderUnavailable) as exc:
                ctx.conn.rollback()
                self._resume_at = time.monotonic() + self.outage_backoff_sec
                report.notes.append(f"paused for {self.outage_backoff_sec:.0f} s: {exc}")
                log.warning("embedder: %s", report.notes[-1])
                break
            tick = time.perf_counter()
            ctx.conn.commit()
            self.timings["write"] += time.perf_counter() - tick
            report.processed += done
            report.failed += failed
            if ctx.progress is not None:
                ctx.progress(self.name, report.processed + report.failed, total)
            if not ctx.drain:
                break
        elapsed = time.monotonic() - started
        if report.processed and (ctx.drain or report.processed >= size):
            rate = report.processed / max(elapsed, 1e-6)
            report.notes.append(
                f"embedded {report.processed} rows in {elapsed:.1f} s ({rate:.1f} rows/s)"
            )
            log.info("embedder: %s", report.notes[-1])
        return report

    def _claim(self, ctx: JobContext, embedder: Embedder, size: int) -> list[tuple[int, str]]:
        """The next batch, locked: with a token budget, the candidates are sized first and
        only the rows that fit are locked (capture may update the newest rows meanwhile)."""
        tick = time.perf_counter()
        ids = None
        if self.fresh_within is not None:
            since = ctx.now - self.fresh_within
            fresh = coldqueue.unembedded_candidates(ctx.conn, size, now=ctx.now, since=since)
            ids = within_budget(fresh, embedder, FRESH_BATCH_TOKENS)
            if not ids:
                return []
        elif self.batch_tokens is not None:
            candidates = coldqueue.unembedded_candidates(
                ctx.conn, size, now=ctx.now, newest_first=self.newest_first
            )
            candidates = self._arrivals_alone(candidates)
            ids = within_budget(candidates, embedder, self.token_budget())
        claimed = coldqueue.claim_unembedded(
            ctx.conn, size, now=ctx.now, newest_first=self.newest_first, ids=ids
        )
        self.timings["claim"] += time.perf_counter() - tick
        return claimed

    def _arrivals_alone(self, candidates: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Rows captured since the previous claim (ids above every id it saw), when there are
        any, make a batch of their own: a fresh turn waits for the batch under way and its
        own small batch, not for a full batch of backlog."""
        seen = self._newest_seen
        if candidates and self.newest_first:
            self._newest_seen = max(seen or 0, *(memory_id for memory_id, _ in candidates))
        if seen is None or not self.newest_first:
            return candidates
        arrivals = [c for c in candidates if c[0] > seen]
        return arrivals or candidates

    def token_budget(self) -> int:
        """The next batch's token budget: :data:`BATCH_SECONDS` at the measured rate."""
        cap = self.batch_tokens or BATCH_TOKENS
        if self._rate is None:
            return min(cap, MIN_BATCH_TOKENS * 2)
        return int(max(MIN_BATCH_TOKENS, min(cap, self._rate * BATCH_SECONDS)))

    def _learn_rate(self, embedder: Embedder, texts: list[str], seconds: float) -> None:
        tokens = sum(embedder.token_estimate(len(text)) for text in texts)
        rate = tokens / max(seconds, 1e-3)
        self._rate = rate if self._rate is None else 0.5 * self._rate + 0.5 * rate

    def _paused_because(self, ctx: JobContext) -> str | None:
        if ctx.embedder is None:
            return "no embedder configured (EMBEDDING_BACKEND=none?)"
        if time.monotonic() < self._resume_at:
            return "paused after an embedding backend failure"
        status = vectors.vector_status(ctx.conn)
        target = vectors.reembed_target(ctx.conn) if status.enabled else None
        ctx.conn.rollback()
        spec = ctx.embedder.spec
        if not status.enabled:
            return "full-text only: the database has no vector column (pgvector missing)"
        if target is not None:
            return f"paused: `reembed` to {target[0]} is under way"
        if status.column_dim != spec.dim or status.model not in (None, spec.model):
            return (
                f"paused: stored vectors are {status.model} ({status.column_dim} dims) but "
                f"{spec.model} ({spec.dim} dims) is configured; run `mcp-agents-memory reembed`"
            )
        return None

    def _embed_batch(
        self, ctx: JobContext, embedder: Embedder, claimed: Sequence[tuple[int, str]]
    ) -> tuple[int, int]:
        """Embed and write one claimed batch: ``(rows done, rows failed)``."""
        from agents_memory.embeddings import to_halfvec

        ids = [memory_id for memory_id, _ in claimed]
        texts = [text[:MAX_INPUT_CHARS] for _, text in claimed]
        unique, where = distinct(texts) if self.dedupe else (texts, list(range(len(texts))))
        tick = time.perf_counter()
        try:
            matrix = embedder.embed_passages(unique)[where]
        except EmbeddingMismatchError:
            raise
        except Exception as exc:
            _probe(embedder, exc)
            if len(claimed) == 1:
                coldqueue.record_row_error(ctx.conn, ids[0], self.name, describe(exc), now=ctx.now)
                return 0, 1
            log.warning(
                "embedding a batch of %d failed (%s); retrying row by row", len(ids), describe(exc)
            )
            done = failed = 0
            for item in claimed:
                d, f = self._embed_batch(ctx, embedder, [item])
                done, failed = done + d, failed + f
            return done, failed
        finally:
            self.timings["embed"] += time.perf_counter() - tick
        self._learn_rate(embedder, unique, time.perf_counter() - tick)
        tick = time.perf_counter()
        pairs = [(memory_id, to_halfvec(row)) for memory_id, row in zip(ids, matrix, strict=True)]
        coldqueue.write_embeddings(ctx.conn, pairs, embedder.spec.model)
        coldqueue.clear_row_errors(ctx.conn, ids, self.name)
        self.timings["write"] += time.perf_counter() - tick
        return len(pairs), 0


def within_budget(
    candidates: Sequence[tuple[int, int]], embedder: Embedder, budget: int
) -> list[int]:
    """The ids of the longest prefix of ``(id, passage length)`` candidates whose estimated
    tokens stay within ``budget``; the first always."""
    total = 0
    for count, (memory_id, length) in enumerate(candidates):
        total += embedder.token_estimate(min(MAX_INPUT_CHARS, length))
        if count and total > budget:
            return [memory_id for memory_id, _ in candidates[:count]]
    return [memory_id for memory_id, _ in candidates]


def distinct(texts: list[str]) -> tuple[list[str], list[int]]:
    """The distinct texts in first-seen order, and for each input text its index among them."""
    index: dict[str, int] = {}
    where = [index.setdefault(text, len(index)) for text in texts]
    return list(index), where


def _probe(embedder: Embedder, failure: BaseException) -> None:
    """Raise :class:`EmbedderUnavailable` when the backend cannot embed a plain word either."""
    try:
        embedder.embed_passages(["ping"])
    except EmbeddingMismatchError:
        raise
    except Exception as exc:
        raise EmbedderUnavailable(describe(exc)) from failure


def _backlog(ctx: JobContext) -> int:
    count = coldqueue.count_unembedded(ctx.conn)
    ctx.conn.rollback()
    return count
