"""Fault injection on the real capture daemon: kills, truncation, rotation, bad bytes, races,
a database that goes away, SIGTERM. Real ``memory-capture`` subprocesses, real files, the real
embedded PostgreSQL. Expected rows come from what the test wrote, never from the code under test.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import psycopg
import pytest

from agents_memory.store.embedded import EmbeddedServer
from tests.capture.transcripts import (
    claude_assistant,
    claude_exchange,
    claude_session_path,
    claude_user,
    expected_texts,
)
from tests.conftest import postgres_processes, private_tmp_dir

pytestmark = pytest.mark.slow

CAPTURE = Path(sys.executable).parent / "memory-capture"
POLL_STEP = 0.05


# --- helpers ------------------------------------------------------------------------------------
def wait_for(condition: Callable[[], bool], *, timeout: float = 30.0, what: str = "") -> float:
    """Poll ``condition`` every 50 ms until it holds; return the seconds it took."""
    started = time.monotonic()
    deadline = started + timeout
    while True:
        if condition():
            return time.monotonic() - started
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(POLL_STEP)


def session_id(n: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_OID, f"faults-session-{n}"))


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def exchanges(session: str, start: int, count: int) -> bytes:
    return b"".join(claude_exchange(session, n) for n in range(start, start + count))


class Pool:
    """Reads what the daemon stored, on its own autocommit connection."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None

    def _query(self, sql: str) -> list[tuple[object, ...]]:
        for attempt in range(2):
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=2)
                return self._conn.execute(sql).fetchall()
            except psycopg.OperationalError:
                self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def count(self) -> int:
        return int(str(self._query("SELECT count(*) FROM memory")[0][0]))

    def messages(self) -> list[str]:
        return [str(row[0]) for row in self._query("SELECT message FROM memory")]

    def totals(self) -> tuple[int, int]:
        row = self._query("SELECT count(*), count(DISTINCT external_uuid) FROM memory")[0]
        return int(str(row[0])), int(str(row[1]))

    def cursor_size(self, path: Path) -> int | None:
        rows = self._query("SELECT size FROM capture_cursors WHERE path = " + _literal(str(path)))
        return int(str(rows[0][0])) if rows else None

    def holds(self, expected: set[str]) -> bool:
        try:
            return set(self.messages()) >= expected
        except (psycopg.OperationalError, psycopg.errors.UndefinedTable):
            return False  # the server is down, or the daemon has not migrated it yet

    def assert_exactly(self, expected: set[str]) -> None:
        total, distinct = self.totals()
        messages = self.messages()
        assert total == distinct == len(expected), (total, distinct, len(expected))
        assert len(messages) == len(set(messages))
        missing = expected - set(messages)
        extra = set(messages) - expected
        assert not missing and not extra, (sorted(missing)[:5], sorted(extra)[:5])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass
class Proc:
    popen: subprocess.Popen[bytes]
    log: Path
    handle: IO[bytes]

    def stderr(self) -> str:
        self.handle.flush()
        return self.log.read_text(encoding="utf-8", errors="replace")


@dataclass
class Home:
    """A temp home with its own config/state dirs, and the processes started in it."""

    path: Path
    db_url: str
    procs: list[Proc] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": str(self.path),
            "XDG_CONFIG_HOME": str(self.path / ".config"),
            "XDG_STATE_HOME": str(self.path / ".local" / "state"),
            "XDG_DATA_HOME": str(self.path / ".local" / "share"),
            "DATABASE_URL": self.db_url,
            "DEVICE_NAME": "test-device",
            "USER_NAME": "tester",
            "CAPTURE_RESCAN_SEC": "0.5",
            "CAPTURE_DEBOUNCE_MS": "50",
            "EMBEDDING_BACKEND": "none",
            "LOG_LEVEL": "INFO",
        }
        env.update(extra)
        return env

    def start(self, *args: str) -> Proc:
        log = self.path / f"capture-{len(self.procs)}.log"
        handle = log.open("wb")
        popen = subprocess.Popen(
            [str(CAPTURE), *args],
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=handle,
            cwd=self.path,
        )
        proc = Proc(popen, log, handle)
        self.procs.append(proc)
        return proc

    def session(self, n: int) -> tuple[str, Path]:
        sid = session_id(n)
        return sid, claude_session_path(self.path, sid)

    def cleanup(self) -> None:
        for proc in self.procs:
            if proc.popen.poll() is None:
                proc.popen.kill()
            proc.popen.wait(timeout=10)
            proc.handle.close()


@pytest.fixture
def home(tmp_path: Path, db_url: str) -> Iterator[Home]:
    root = tmp_path / "home"
    root.mkdir()
    made = Home(root, db_url)
    try:
        yield made
    finally:
        made.cleanup()


@pytest.fixture
def pool(db_url: str) -> Iterator[Pool]:
    reader = Pool(db_url)
    try:
        yield reader
    finally:
        reader.close()


def alive(proc: Proc) -> Callable[[], bool]:
    """A condition that fails the wait at once (with the log) if the daemon died."""

    def check() -> bool:
        code = proc.popen.poll()
        assert code is None, f"memory-capture exited {code}:\n{proc.stderr()[-3000:]}"
        return True

    return check


def stored(pool: Pool, expected: set[str], proc: Proc | None = None) -> Callable[[], bool]:
    def check() -> bool:
        if proc is not None:
            alive(proc)()
        return pool.holds(expected)

    return check


def write_history(home: Home, sessions: int, per_session: int) -> set[str]:
    expected: set[str] = set()
    for s in range(sessions):
        sid, path = home.session(s)
        path.write_bytes(exchanges(sid, s * per_session, per_session))
        expected |= expected_texts(per_session, start=s * per_session)
    return expected


# --- 1. SIGKILL during a large backfill -------------------------------------------------------
SESSIONS, PER_SESSION = 20, 500


def _progressed(pool: Pool, proc: Proc, before: int) -> Callable[[], bool]:
    return lambda: pool.count() > before or proc.popen.poll() is not None


def _kill_repeatedly(home: Home, pool: Pool, args: tuple[str, ...], expected: set[str]) -> int:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    kills = rng.randint(5, 8)
    done = 0
    for _ in range(kills):
        before = pool.count()
        if before == len(expected):
            break
        proc = home.start(*args)
        # Let it make some progress (or finish), then kill it at a random moment.
        wait_for(_progressed(pool, proc, before), what=f"progress (seed {seed})")
        time.sleep(rng.uniform(0.0, 0.4))  # where the kill lands, not synchronisation
        proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait(timeout=10)
        done += 1
    return done


def test_daemon_killed_repeatedly_during_a_large_backfill_stores_every_turn_once(
    home: Home, pool: Pool
) -> None:
    expected = write_history(home, SESSIONS, PER_SESSION)
    kills = _kill_repeatedly(home, pool, ("run",), expected)
    assert kills >= 3, "the history was captured before the kills could hit it"
    final = home.start("run")
    wait_for(stored(pool, expected, final), timeout=60, what="every turn after the kills")
    pool.assert_exactly(expected)


def test_backfill_killed_repeatedly_then_rerun_stores_every_turn_once(
    home: Home, pool: Pool
) -> None:
    expected = write_history(home, SESSIONS, PER_SESSION)
    kills = _kill_repeatedly(home, pool, ("backfill", "--json"), expected)
    assert kills >= 3, "the history was captured before the kills could hit it"
    final = home.start("backfill", "--json")
    assert final.popen.wait(timeout=120) == 0, final.stderr()
    pool.assert_exactly(expected)


# --- 2-4. truncation, replacement, partial lines -----------------------------------------------
@pytest.mark.parametrize("new_count", [3, 40], ids=["shorter", "longer"])
def test_truncated_and_rewritten_file_captures_new_turns_and_keeps_old_ones_once(
    home: Home, pool: Pool, new_count: int
) -> None:
    sid, path = home.session(0)
    path.write_bytes(exchanges(sid, 0, 10))
    daemon = home.start("run")
    old = expected_texts(10)
    wait_for(stored(pool, old, daemon), what="the first version")
    with path.open("wb") as handle:  # truncate in place, same inode
        handle.write(exchanges(sid, 1000, new_count))
    expected = old | expected_texts(new_count, start=1000)
    wait_for(stored(pool, expected, daemon), what="the rewritten content")
    pool.assert_exactly(expected)


def test_file_replaced_by_a_new_inode_with_old_and_new_lines_has_no_duplicates(
    home: Home, pool: Pool
) -> None:
    sid, path = home.session(0)
    path.write_bytes(exchanges(sid, 0, 10))
    daemon = home.start("run")
    wait_for(stored(pool, expected_texts(10), daemon), what="the first version")
    inode = path.stat().st_ino
    staged = path.with_suffix(".tmp")
    staged.write_bytes(exchanges(sid, 0, 25))
    os.replace(staged, path)
    assert path.stat().st_ino != inode
    expected = expected_texts(25)
    wait_for(stored(pool, expected, daemon), what="the replacement's new turns")
    pool.assert_exactly(expected)


def test_partial_trailing_line_is_stored_only_once_it_is_complete(home: Home, pool: Pool) -> None:
    sid, path = home.session(0)
    path.write_bytes(exchanges(sid, 0, 3))
    daemon = home.start("run")
    wait_for(stored(pool, expected_texts(3), daemon), what="the first turns")
    line = claude_user(sid, "question 3 about the capture daemon", 3)
    half = len(line) // 2
    append(path, exchanges(sid, 10, 1) + line[:half])
    size = path.stat().st_size
    # The daemon has read the file as it is now (complete lines stored, cursor saw the size).
    wait_for(
        lambda: alive(daemon)() and pool.cursor_size(path) == size,
        what="the daemon to read past the partial line",
    )
    wait_for(stored(pool, expected_texts(3) | expected_texts(1, start=10), daemon))
    assert "question 3 about the capture daemon" not in pool.messages()
    append(path, line[half:])
    expected = expected_texts(3) | expected_texts(1, start=10)
    expected.add("question 3 about the capture daemon")
    wait_for(stored(pool, expected, daemon), what="the completed line")
    pool.assert_exactly(expected)


# --- 5. bad input ------------------------------------------------------------------------------
def _escaped(record: bytes, placeholder: str, escape: str) -> bytes:
    """``record`` with ``placeholder`` replaced by a raw JSON escape (``\\u0000``, ``\\ud83d``)."""
    return record.replace(placeholder.encode(), escape.encode())


def test_bad_records_in_a_live_file_are_logged_with_path_and_offset_and_skipped(
    home: Home, pool: Pool
) -> None:
    sid, path = home.session(0)
    path.write_bytes(exchanges(sid, 0, 2))
    _, empty = home.session(1)
    empty.write_bytes(b"")
    daemon = home.start("run")
    expected = expected_texts(2)
    wait_for(stored(pool, expected, daemon), what="the first turns")

    garbage = bytes(b for b in range(256) if b != 0x0A) * 4 + b"\0\0\0\0"
    malformed = [
        b'{"type":"user","message":{"role":"user","content":"caf\xc3\x28 \xff\xfe"}}\n',
        garbage + b"\n",
        b'{"type":"user","blob":"' + b"x" * (20 * 1024 * 1024) + b"\n",
    ]
    # The first is a turn with invalid UTF-8 in its text: kept, its bad bytes as U+FFFD.
    expected.add(b"caf\xc3\x28 \xff\xfe".decode("utf-8", "replace"))
    offsets: list[int] = []
    n = 2
    for bad in malformed:
        offsets.append(path.stat().st_size)
        append(path, bad + exchanges(sid, n, 1))
        expected |= expected_texts(1, start=n)
        n += 1
        wait_for(stored(pool, expected, daemon), what=f"the turn after bad record {n - 3}")

    # Well-formed records whose text PostgreSQL cannot hold as it is: a JSON-escaped NUL and
    # a lone surrogate (a client cut an emoji in half). The turn is kept, made storable.
    append(path, _escaped(claude_user(sid, "nul NUL inside", 50), "NUL", "\\u0000"))
    append(path, _escaped(claude_assistant(sid, "cut emoji SUR", 51), "SUR", "\\ud83d"))
    append(path, exchanges(sid, n, 1))
    expected |= {"nul  inside", "cut emoji \ufffd"} | expected_texts(1, start=n)
    n += 1
    wait_for(stored(pool, expected, daemon), what="the turns with NUL and a lone surrogate")

    # A lone surrogate in a user prompt, and a valid 20 MB prompt (larger than the full-text
    # index takes): each is either stored or logged with the path, never blocking the file.
    user_surrogate = _escaped(claude_user(sid, "typed emoji SUR", 52), "SUR", "\\ud83d")
    offsets.append(path.stat().st_size)
    append(path, user_surrogate)
    huge_text = " ".join(f"w{i}" for i in range(2_500_000))
    append(path, claude_user(sid, huge_text, 53) + exchanges(sid, n, 1))
    expected |= expected_texts(1, start=n)
    optional = {"typed emoji \ufffd", huge_text}
    wait_for(stored(pool, expected, daemon), timeout=60, what="the turn after a 20 MB prompt")

    append(empty, exchanges(session_id(1), 500, 2))
    expected |= expected_texts(2, start=500)
    wait_for(stored(pool, expected, daemon), what="turns in the formerly empty file")
    alive(daemon)()
    kept = set(pool.messages()) & optional
    pool.assert_exactly(expected | kept)
    log = daemon.stderr()
    for offset in offsets[: len(malformed)]:
        assert re.search(rf"{re.escape(str(path))}: .*offset {offset}\b", log), offset
    if "typed emoji \ufffd" not in kept:
        assert re.search(rf"{re.escape(str(path))}: .*offset {offsets[-1]}\b", log)
    if huge_text not in kept:
        assert re.search(rf"{re.escape(str(path))}: could not store", log)


# --- 6. races ----------------------------------------------------------------------------------
def _writer(home: Home, files: int, rounds: int, stop: threading.Event) -> set[str]:
    """Append one exchange per file per round, as agents in parallel sessions would."""
    expected: set[str] = set()
    for r in range(rounds):
        for f in range(files):
            if stop.is_set():
                return expected
            sid, path = home.session(100 + f)
            n = 10_000 * (f + 1) + r
            append(path, claude_exchange(sid, n))
            expected |= expected_texts(1, start=n)
        time.sleep(0.01)  # pacing of the workload, not synchronisation
    return expected


def test_two_daemons_on_one_home_and_database_never_double_or_lose_turns(
    home: Home, pool: Pool
) -> None:
    history = write_history(home, 4, 100)
    first, second = home.start("run"), home.start("run")
    expected = history | _writer(home, files=4, rounds=150, stop=threading.Event())
    wait_for(stored(pool, expected, first), timeout=60, what="every appended turn")
    alive(second)()
    pool.assert_exactly(expected)


def test_daemon_and_concurrent_backfill_never_double_or_lose_turns(home: Home, pool: Pool) -> None:
    history = write_history(home, 4, 100)
    daemon = home.start("run")
    backfills = [home.start("backfill", "--json")]
    expected = history | _writer(home, files=4, rounds=60, stop=threading.Event())
    backfills.append(home.start("backfill", "--json"))
    expected |= _writer(home, files=4, rounds=60, stop=threading.Event())
    for proc in backfills:
        assert proc.popen.wait(timeout=60) == 0, proc.stderr()
    wait_for(stored(pool, expected, daemon), timeout=60, what="every appended turn")
    pool.assert_exactly(expected)


# --- 7. the database goes away -----------------------------------------------------------------
@pytest.fixture
def own_server() -> Iterator[tuple[EmbeddedServer, str]]:
    base = private_tmp_dir("am-fault-pg-")
    base.chmod(0o755)
    server = EmbeddedServer(base / "cluster")
    info = server.start()
    try:
        yield server, info.conninfo()
    finally:
        server.stop()
        leftover = postgres_processes(server.pgdata)
        shutil.rmtree(base, ignore_errors=True)
        assert leftover == [], "the private server left processes behind"


def test_database_stopped_and_restarted_under_a_running_daemon_loses_nothing(
    tmp_path: Path, own_server: tuple[EmbeddedServer, str]
) -> None:
    server, url = own_server
    root = tmp_path / "home"
    root.mkdir()
    home = Home(root, url)
    reader = Pool(url)
    try:
        sid, path = home.session(0)
        path.write_bytes(exchanges(sid, 0, 5))
        daemon = home.start("run")
        expected = expected_texts(5)
        wait_for(stored(reader, expected, daemon), what="turns before the outage")
        append(path, exchanges(sid, 5, 5))
        expected |= expected_texts(5, start=5)
        reader.close()
        server.stop()
        for n in range(10, 20):  # written while the database is down
            append(path, exchanges(sid, n, 1))
            expected |= expected_texts(1, start=n)
        wait_for(
            lambda: alive(daemon)() and "database unavailable" in daemon.stderr(),
            what="the daemon to notice the outage",
        )
        server.start()
        append(path, exchanges(sid, 20, 5))
        expected |= expected_texts(5, start=20)
        wait_for(stored(reader, expected, daemon), timeout=60, what="every turn after restart")
        reader.assert_exactly(expected)
    finally:
        reader.close()
        home.cleanup()


# --- 8. SIGTERM --------------------------------------------------------------------------------
def test_sigterm_during_work_exits_zero_and_a_restart_continues_without_loss(
    home: Home, pool: Pool
) -> None:
    expected = write_history(home, 10, 300)
    daemon = home.start("run")
    wait_for(lambda: alive(daemon)() and pool.count() > 0, what="capture to start")
    sent = time.monotonic()
    daemon.popen.send_signal(signal.SIGTERM)
    code = daemon.popen.wait(timeout=15)
    took = time.monotonic() - sent
    assert code == 0, daemon.stderr()
    assert took < 10, f"SIGTERM took {took:.1f} s"
    sid, path = home.session(0)
    append(path, exchanges(sid, 90_000, 3))
    expected |= expected_texts(3, start=90_000)
    restarted = home.start("run")
    wait_for(stored(pool, expected, restarted), timeout=60, what="every turn after restart")
    pool.assert_exactly(expected)


# --- 9. live latency ---------------------------------------------------------------------------
def test_turn_appended_to_a_watched_transcript_is_stored_within_ten_seconds(
    home: Home, pool: Pool
) -> None:
    sid, path = home.session(0)
    path.write_bytes(exchanges(sid, 0, 2))
    daemon = home.start("run")
    wait_for(stored(pool, expected_texts(2), daemon), what="the existing turns")
    latencies = []
    for n in range(2, 7):
        append(path, claude_exchange(sid, n))
        latencies.append(
            wait_for(stored(pool, expected_texts(1, start=n), daemon), timeout=10, what="live")
        )
    print(f"append -> stored latency: {', '.join(f'{s * 1000:.0f} ms' for s in latencies)}")
    pool.assert_exactly(expected_texts(7))
