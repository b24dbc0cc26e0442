"""The Cold Path worker: singleton and failover, NOTIFY wake-ups, --once, SIGTERM, status."""

from __future__ import annotations

import logging
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.coldpath import registry
from agents_memory.coldpath.base import Job, JobContext
from agents_memory.coldpath.embedder import EmbedderJob
from agents_memory.coldpath.status import coldpath_status
from agents_memory.coldpath.worker import ColdPathWorker
from agents_memory.config import Settings
from agents_memory.errors import ColdPathBusy
from agents_memory.store import database
from agents_memory.store.coldpath import coldqueue
from agents_memory.store.coldpath.coldqueue import JobReport
from agents_memory.store.coldpath.usage import record_usage, utc_today
from tests.coldpath.embedding_helpers import (
    ScriptedEmbedder,
    SlowEmbeddingServer,
    add_rows,
    cli_env,
    count_embedded,
    spawn,
    stop_process,
    wait_until,
)
from tests.conftest import TEST_DIM
from tests.embeddings.fake_openai import FakeEmbeddingServer


@pytest.fixture
def live(db_url: str) -> Iterator[psycopg.Connection[Any]]:
    """An autocommit connection for watching the database while workers run."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        yield conn


def make_worker(settings: Settings, embedder: Any = None, jobs: list[Job] | None = None) -> Any:
    db = database.locate_database(settings)
    return ColdPathWorker(
        settings,
        db,
        jobs=jobs if jobs is not None else [EmbedderJob()],
        embedder=embedder if embedder is not None else ScriptedEmbedder(),
    )


def holder_pid(live: psycopg.Connection[Any]) -> int | None:
    """The OS pid (from the application name) of the process holding the lock."""
    holder = coldqueue.lock_holder(live)
    if holder is None or not holder.application_name:
        return None
    return int(holder.application_name.rsplit(" ", 1)[-1])


# --- singleton --------------------------------------------------------------------------------
def test_only_one_worker_gets_the_lock_and_the_next_takes_over_when_it_closes(
    make_settings: Any, db_url: str
) -> None:
    settings = make_settings(database_url=db_url)
    with make_worker(settings) as first, make_worker(settings) as second:
        assert first.try_acquire()
        assert not second.try_acquire()
        holder = second.holder()
        assert holder is not None
        assert "agents-memory-coldpath test-device" in (holder.application_name or "")
        with pytest.raises(ColdPathBusy, match="another Cold Path worker is running"):
            second.run_once()
        first.close()
        assert second.try_acquire()


def test_standby_process_takes_over_within_one_interval_after_the_holder_is_killed(
    db_url: str, tmp_path: Path, embed_server: FakeEmbeddingServer, live: Any
) -> None:
    interval = 0.5
    env = cli_env(db_url, tmp_path, embed_server.base_url, COLD_PATH_INTERVAL_SEC=str(interval))
    args = ["coldpath", "--job", "embedder"]
    first = spawn(args, env)
    second: subprocess.Popen[str] | None = None
    try:
        wait_until(lambda: holder_pid(live) == first.pid, timeout=90)
        second = spawn(args, env)
        standby = second
        wait_until(
            lambda: (
                live.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE %s",
                    (f"% {standby.pid}",),
                ).fetchone()[0]
                > 0
            ),
            timeout=90,
        )
        assert holder_pid(live) == first.pid
        first.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        wait_until(lambda: holder_pid(live) == standby.pid, timeout=10 * interval + 5)
        failover = time.monotonic() - killed_at
        print(f"failover took {failover:.2f} s with COLD_PATH_INTERVAL_SEC={interval}")
        assert failover < interval + 1.5
        add_rows(live, ["after the failover"])
        live.execute("SELECT pg_notify('agents_memory_new', '1')")
        wait_until(lambda: count_embedded(live) == 1)
        standby.send_signal(signal.SIGTERM)
        assert standby.wait(timeout=15) == 0
    finally:
        outputs = [stop_process(first)] + ([stop_process(second)] if second else [])
        for out, err in outputs:
            print(out, err[-3000:])


# --- waking and ticking -----------------------------------------------------------------------
def test_notify_wakes_the_worker_long_before_the_interval(
    make_settings: Any, db_url: str, live: Any
) -> None:
    settings = make_settings(database_url=db_url, cold_path_interval_sec=60, cold_path_warmup_sec=0)
    worker = make_worker(settings)
    thread = threading.Thread(target=worker.serve)
    thread.start()
    try:
        wait_until(lambda: worker.holding and worker.ticks >= 1)
        ticks = worker.ticks
        add_rows(live, [f"note {i}" for i in range(7)])
        sent = time.monotonic()
        live.execute("SELECT pg_notify('agents_memory_new', '7')")
        waited = wait_until(lambda: count_embedded(live) == 7, timeout=10)
        print(f"NOTIFY to 7 rows embedded: {time.monotonic() - sent:.3f} s")
        assert waited < 5
        wait_until(lambda: worker.ticks > ticks)
    finally:
        worker.request_stop()
        thread.join(timeout=10)
        worker.close()
    assert not thread.is_alive()


def test_a_backlog_drains_tick_after_tick_without_waiting_for_the_clock(
    make_settings: Any, db_url: str, live: Any
) -> None:
    settings = make_settings(
        database_url=db_url,
        cold_path_interval_sec=60,
        cold_path_warmup_sec=0,
        cold_path_embed_batch_size=10,
    )
    add_rows(live, [f"backlog {i}" for i in range(45)])
    worker = make_worker(settings)
    thread = threading.Thread(target=worker.serve)
    thread.start()
    try:
        wait_until(lambda: count_embedded(live) == 45, timeout=60)
        wait_until(lambda: worker.ticks >= 5)  # five batches of ten, no clock tick between
    finally:
        worker.request_stop()
        thread.join(timeout=10)
        worker.close()


class Exploding(Job):
    name = "exploding"

    def run(self, ctx: JobContext) -> JobReport:
        ctx.conn.execute("SELECT 1")
        raise RuntimeError("bug in a job")


class Disabled(Job):
    name = "disabled"

    def enabled(self, settings: Settings) -> bool:
        return False

    def run(self, ctx: JobContext) -> JobReport:
        raise AssertionError("must not run")


def test_a_crashing_job_is_logged_and_the_others_still_run(
    make_settings: Any, db_url: str, live: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(database_url=db_url)
    add_rows(live, ["one", "two"])
    jobs: list[Job] = [Exploding(), Disabled(), EmbedderJob()]
    with make_worker(settings, jobs=jobs) as worker, caplog.at_level(logging.INFO):
        reports = worker.run_once()
    by_name = {r.name: r for r in reports}
    assert set(by_name) == {"exploding", "embedder"}
    assert by_name["exploding"].notes == ["crashed: RuntimeError: bug in a job"]
    assert by_name["embedder"].processed == 2
    assert "Cold Path job exploding failed" in caplog.text
    assert "disabled by the configuration" in caplog.text
    runs = {r.job: r for r in coldqueue.last_runs(live)}
    assert runs["embedder"].total_processed == 2
    assert runs["exploding"].notes == ["crashed: RuntimeError: bug in a job"]


# --- the command --------------------------------------------------------------------------------
def test_once_drains_a_backlog_of_200_rows_and_prints_the_throughput(
    db_url: str, tmp_path: Path, embed_server: FakeEmbeddingServer, live: Any
) -> None:
    add_rows(live, [f"message number {i} about pgvector" for i in range(200)])
    proc = subprocess.run(
        [*spawn_args(), "coldpath", "--once", "--job", "embedder"],
        env=cli_env(db_url, tmp_path, embed_server.base_url),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "embedder: 200 processed, 0 failed" in proc.stdout
    assert "rows/s)" in proc.stdout
    print(proc.stdout.strip())
    assert count_embedded(live) == 200
    models = live.execute("SELECT DISTINCT embedding_model FROM memory").fetchall()
    assert models == [("multilingual-e5-small-q4",)]


def spawn_args() -> list[str]:
    import sys

    return [sys.executable, "-m", "agents_memory.cli.coldpath"]


def test_sigterm_mid_batch_finishes_the_batch_and_exits_0(
    db_url: str, tmp_path: Path, live: Any
) -> None:
    slow = SlowEmbeddingServer(dim=TEST_DIM)
    slow.delay = 0.3
    slow.start()
    add_rows(live, [f"slow row {i}" for i in range(100)])
    env = cli_env(db_url, tmp_path, slow.base_url, COLD_PATH_EMBED_BATCH_SIZE="10")
    proc = spawn(["coldpath", "--once", "--job", "embedder"], env)
    try:
        wait_until(lambda: count_embedded(live) >= 10, timeout=90)
        wait_until(lambda: len(slow.requests) >= 3)  # a batch is in flight
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        _out, err = stop_process(proc)
        slow.stop()
    done = count_embedded(live)
    assert 10 <= done < 100
    assert done % 10 == 0, "a batch was cut in half"
    half = live.execute(
        "SELECT count(*) FROM memory WHERE (embedding IS NULL) <> (embedding_model IS NULL)"
    ).fetchone()[0]
    assert half == 0
    assert "SIGTERM received" in err


def test_disabled_cold_path_says_why_and_exits_0(
    db_url: str, tmp_path: Path, embed_server: FakeEmbeddingServer
) -> None:
    env = cli_env(db_url, tmp_path, embed_server.base_url, COLD_PATH_ENABLED="false")
    proc = subprocess.run(
        [*spawn_args(), "coldpath"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert "COLD_PATH_ENABLED=false" in proc.stdout


def test_unreachable_database_at_start_exits_1_with_one_line(
    tmp_path: Path, embed_server: FakeEmbeddingServer
) -> None:
    env = cli_env(
        "postgresql://nobody@127.0.0.1:9/nothing?connect_timeout=2",
        tmp_path,
        embed_server.base_url,
    )
    proc = subprocess.run(
        [*spawn_args(), "coldpath"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().startswith("error: cannot connect")
    assert len(proc.stderr.strip().splitlines()) == 1


# --- status and registry ------------------------------------------------------------------------
def test_status_reports_backlog_runs_usage_and_the_running_worker(
    make_settings: Any, db_url: str, live: Any
) -> None:
    settings = make_settings(database_url=db_url, tagger_daily_token_budget=100)
    add_rows(live, ["a", "b", "c"])
    record_usage(live, "tagger", day=utc_today(), tokens_in=90, tokens_out=20)
    before = coldpath_status(live, settings)
    assert before.backlog.unembedded == 3
    assert before.backlog.untagged == 3
    assert before.last_run_at is None
    assert not before.worker_running
    assert "no LLM: jobs use heuristics" in before.degraded
    tagger = next(r for r in before.llm_today if r.role == "tagger")
    assert (tagger.tokens, tagger.budget, tagger.over_budget) == (110, 100, True)
    with make_worker(settings) as worker:
        worker.run_once()
        during = coldpath_status(live, settings)
        assert during.worker_running
        assert during.worker is not None
        assert "test-device" in (during.worker.application_name or "")
    after = coldpath_status(live)
    assert after.backlog.unembedded == 0
    assert after.last_run_at is not None
    assert [(j.job, j.total_processed) for j in after.jobs] == [("embedder", 3)]
    assert not after.worker_running
    assert after.as_dict()["worker_running"] is False


def test_a_worker_warming_up_is_starting_not_missing(
    make_settings: Any, db_url: str, live: Any
) -> None:
    settings = make_settings(database_url=db_url, cold_path_warmup_sec=120)
    worker = make_worker(settings)
    thread = threading.Thread(target=worker.serve)
    thread.start()
    try:
        wait_until(lambda: bool(coldpath_status(live).starting))
        status = coldpath_status(live)
        assert not status.worker_running and not worker.holding
        assert all("test-device" in name for name in status.starting)
        assert status.as_dict()["starting"] == status.starting
    finally:
        worker.request_stop()
        thread.join(timeout=10)
        worker.close()
    assert coldpath_status(live).starting == []


def test_registry_skips_a_missing_job_module_with_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    entries = (
        ("embedder", "agents_memory.coldpath.embedder:EmbedderJob"),
        ("ghost", "agents_memory.coldpath.no_such_job:GhostJob"),
    )
    with caplog.at_level(logging.WARNING):
        jobs = registry.load_jobs(entries=entries)
    assert [j.name for j in jobs] == ["embedder"]
    assert "ghost is not available" in caplog.text
    with pytest.raises(ValueError, match="unknown Cold Path job"):
        registry.load_jobs(("nope",))


def test_registry_lists_the_jobs_in_tick_order() -> None:
    assert registry.job_names() == [
        "tagger",
        "embedder",
        "librarian",
        "clusterer",
        "sessions",
        "alias_promoter",
        "search_stats",
    ]


def has_vector(live: psycopg.Connection[Any], memory_id: int) -> bool:
    row = live.execute("SELECT embedding IS NOT NULL FROM memory WHERE id = %s", (memory_id,))
    return bool(row.fetchone() == (True,))


class GatedEmbedder(ScriptedEmbedder):
    """Embeds one batch per permit the test hands out, so a drain goes at the test's pace."""

    def __init__(self) -> None:
        super().__init__()
        self.permits = threading.Semaphore(0)
        self.waiting = 0
        """Batches that arrived (each waits for its permit)."""

    def _embed_batch(self, texts: list[str], *, is_query: bool) -> Any:
        self.waiting += 1
        self.permits.acquire()
        return super()._embed_batch(texts, is_query=is_query)


def test_a_turn_notified_during_a_long_drain_is_embedded_in_the_next_batch_alone(
    make_settings: Any, db_url: str, live: Any
) -> None:
    settings = make_settings(
        database_url=db_url,
        cold_path_interval_sec=60,
        cold_path_warmup_sec=0,
        cold_path_embed_batch_size=10,
    )
    add_rows(live, [f"old turn {i}" for i in range(100)])
    embedder = GatedEmbedder()
    worker = make_worker(settings, embedder)
    thread = threading.Thread(target=worker.serve)
    thread.start()
    try:
        for done in (10, 20):
            embedder.permits.release()
            wait_until(lambda done=done: count_embedded(live) == done)
        wait_until(lambda: embedder.waiting == 3)  # the third batch is under way
        (fresh,) = add_rows(live, ["a turn captured just now"])
        live.execute("SELECT pg_notify('agents_memory_new', '1')")
        embedder.permits.release()  # the batch under way when the turn arrived
        wait_until(lambda: count_embedded(live) == 30)
        embedder.permits.release()  # the next batch: the fresh turn, alone
        wait_until(lambda: has_vector(live, fresh))
        assert embedder.batches[-1] == ["a turn captured just now"]
        assert count_embedded(live) == 31  # the rest of the backlog is still waiting
    finally:
        worker.request_stop()
        embedder.permits.release(100)
        thread.join(timeout=10)
        worker.close()
