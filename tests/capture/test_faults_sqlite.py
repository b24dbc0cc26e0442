"""Fault injection for the clients that keep sessions in SQLite (OpenCode, Hermes Agent): the
real ``memory-capture run`` daemon against real copies of the recorded stores, written the way
the clients write them (WAL mode, a writer connection that stays open, write transactions held
while we read, rows added while the daemon runs, a daemon killed mid-write, a locked, truncated,
overwritten or replaced file, a newer release's record kinds and columns), with the real embedded
PostgreSQL. Each test checks by key that nothing is lost or doubled, that the daemon keeps
going with the problem counted in ``status``, and that the client's file is never written or
held locked by our reads. Expected keys come from what the test wrote, never from the adapters.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.adapters._sqlite import wal_of
from agents_memory.capture import tailer
from agents_memory.store.capture.cursors import Cursor
from tests.capture.sqlite_stores import (
    CLIENTS,
    OPENCODE,
    Client,
    commit_exchanges,
    newer_release_records,
    oc_message,
    oc_part,
    snapshot,
    writer,
)
from tests.capture.test_faults import CAPTURE, Home, Proc, alive, wait_for
from tests.capture.transcripts import claude_exchange, claude_session_path, expected_texts


# --- PostgreSQL and status ----------------------------------------------------------------------
class Rows:
    """What the daemon stored, by key, on an autocommit connection of its own."""

    def __init__(self, url: str) -> None:
        self.conn = psycopg.connect(url, autocommit=True)

    def keys(self, platform: str) -> list[str]:
        try:
            rows = self.conn.execute(
                "SELECT external_uuid FROM memory WHERE agent_platform = %s", (platform,)
            ).fetchall()
        except psycopg.errors.UndefinedTable:
            return []  # the daemon has not migrated the database yet
        return [str(row[0]) for row in rows]

    def holds(self, platform: str, expected: set[str], proc: Proc) -> Callable[[], bool]:
        return lambda: alive(proc)() and set(self.keys(platform)) >= expected

    def counted(self, path: Path) -> Callable[[], str]:
        """The cursor's issue count and last issue for ``path`` (polled cheaply; ``status``
        reads the same columns and is asked once the problem is there)."""

        def read() -> str:
            try:
                found = self.conn.execute(
                    "SELECT issues, last_issue FROM capture_cursors WHERE path = %s",
                    (str(path),),
                ).fetchall()
            except psycopg.errors.UndefinedTable:
                return ""
            return f"{found[0][0]} {found[0][1]}" if found and found[0][0] else ""

        return read

    def read_past(self, path: Path) -> Callable[[], bool]:
        """Whether the daemon has read ``path`` as it is now: the signature its cursor keeps
        is the file's present one (plus ``|settling`` right after a write)."""
        now = tailer.signature(path, (wal_of(path),))

        def read() -> bool:
            try:
                found = self.conn.execute(
                    "SELECT last_line_hash FROM capture_cursors WHERE path = %s", (str(path),)
                ).fetchone()
            except psycopg.errors.UndefinedTable:
                return False
            return bool(found and found[0] and str(found[0]).split("|settling")[0] == now)

        return read

    def assert_exactly(self, platform: str, expected: set[str]) -> None:
        keys = self.keys(platform)
        assert len(keys) == len(set(keys)), "a turn was stored twice"
        assert set(keys) == expected, (sorted(expected - set(keys)), sorted(set(keys) - expected))


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
def rows(db_url: str) -> Iterator[Rows]:
    reader = Rows(db_url)
    try:
        yield reader
    finally:
        reader.conn.close()


def status(home: Home, platform: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(CAPTURE), "status", "--json"],
        env=home.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=home.path,
    )
    item: dict[str, Any] = json.loads(done.stdout)["platforms"][platform]
    return item


def other_client_still_captured(home: Home, rows: Rows, daemon: Proc, n: int) -> None:
    """A Claude Code turn written now is stored: the daemon goes on with the other clients."""
    path = claude_session_path(home.path, f"bystander-{n}")
    path.write_bytes(claude_exchange(f"bystander-{n}", n))
    texts = expected_texts(1, start=n)

    def stored() -> bool:
        alive(daemon)()
        found = rows.conn.execute(
            "SELECT message FROM memory WHERE agent_platform = 'claude-code'"
        ).fetchall()
        return texts <= {str(r[0]) for r in found}

    wait_for(stored, what="a Claude Code turn beside the faulty store")


# --- the tests ----------------------------------------------------------------------------------
def test_a_store_written_just_now_is_read_again_until_it_settles(tmp_path: Path) -> None:
    """SQLite publishes a commit in shared memory after writing its -wal frames, and a file
    time moves only at each clock tick: a read made within that window must not mark the
    store as read, or a turn committed at its end waits for the client's next write."""
    path = OPENCODE.install(tmp_path)
    wal = (path.with_name(path.name + "-wal"),)
    conn = writer(path)
    commit_exchanges(conn, OPENCODE, 1, 1)
    first = tailer.read_region(path, Cursor("opencode", "d", str(path)), "database", wal)
    assert first is not None and first.fingerprint is not None
    again = Cursor("opencode", "d", str(path), last_line_hash=first.fingerprint)
    assert tailer.read_region(path, again, "database", wal) is not None, "marked read mid-commit"
    settled = time.time() - tailer.SETTLE_SEC - 1
    for each in (path, *wal):
        os.utime(each, (settled, settled))
    last = tailer.read_region(path, again, "database", wal)
    assert last is not None and last.fingerprint == tailer.signature(path, wal)
    done = Cursor("opencode", "d", str(path), last_line_hash=last.fingerprint)
    assert tailer.read_region(path, done, "database", wal) is None
    conn.close()


@CLIENTS
def test_turns_committed_while_the_daemon_reads_are_stored_once_and_the_writer_never_waits(
    home: Home, rows: Rows, client: Client
) -> None:
    path = client.install(home.path)
    conn = writer(path)
    daemon = home.start("run")
    expected = client.fixture_keys()
    for n in range(40):  # no busy wait: a lock of ours on the file would fail a commit here
        expected |= commit_exchanges(conn, client, n, 1)
        if n % 10 == 9:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        time.sleep(0.02)  # pacing of the workload, not synchronisation
    wait_for(rows.holds(client.platform, expected, daemon), what="every committed turn")
    conn.execute("PRAGMA busy_timeout = 2000")  # a read in flight may finish; none may stay
    (busy, _log, _done) = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0, "a reader of ours still held the database"
    conn.close()
    rows.assert_exactly(client.platform, expected)
    assert len(expected) == len(client.fixture_keys()) + 80


@CLIENTS
def test_a_write_transaction_open_while_we_read_is_stored_once_it_is_committed(
    home: Home, rows: Rows, client: Client
) -> None:
    path = client.install(home.path)
    conn = writer(path)
    conn.execute("BEGIN IMMEDIATE")  # the client mid-write when the daemon starts
    pending = client.add_exchange(conn, 1)
    daemon = home.start("run")
    expected = client.fixture_keys()
    wait_for(rows.holds(client.platform, expected, daemon), what="the committed turns")
    assert not pending & set(rows.keys(client.platform)), "an uncommitted turn was read"
    conn.execute("COMMIT")  # with no busy wait: our reads never held the file
    expected |= pending
    wait_for(rows.holds(client.platform, expected, daemon), what="the turns once committed")
    expected |= commit_exchanges(conn, client, 2, 1)
    wait_for(rows.holds(client.platform, expected, daemon), what="a later turn")
    conn.close()
    rows.assert_exactly(client.platform, expected)


def test_an_opencode_reply_still_streaming_is_stored_only_once_completed_and_once(
    home: Home, rows: Rows
) -> None:
    path = OPENCODE.install(home.path)
    conn = writer(path)
    daemon = home.start("run")
    expected = OPENCODE.fixture_keys()
    wait_for(rows.holds("opencode", expected, daemon), what="the recorded turns")
    at = int(time.time() * 1000)
    conn.execute("BEGIN IMMEDIATE")  # a prompt and the start of its reply, as OpenCode streams
    oc_message(conn, "msg_live1u", {"role": "user", "time": {"created": at}}, at)
    oc_part(conn, "prt_live1u", "msg_live1u", {"type": "text", "text": "stream me"}, at)
    streaming: dict[str, Any] = {"role": "assistant", "time": {"created": at}, "modelID": "m"}
    oc_message(conn, "msg_live1a", streaming, at)
    oc_part(conn, "prt_live1a", "msg_live1a", {"type": "text", "text": "half a rep"}, at)
    conn.execute("COMMIT")
    expected.add("opencode:msg_live1u")
    # The read that stored the prompt saw the reply unfinished: it must not be there.
    wait_for(rows.holds("opencode", expected, daemon), what="the prompt")
    assert "opencode:msg_live1a" not in rows.keys("opencode")
    for step in range(1, 4):  # more text streamed, still no completed time
        conn.execute("BEGIN IMMEDIATE")
        text = {"type": "text", "text": "half a reply" + " more" * step}
        oc_part(conn, "prt_live1a", "msg_live1a", text, at + step)
        oc_message(conn, "msg_live1a", streaming, at + step)
        conn.execute("COMMIT")
        wait_for(rows.read_past(path), what="a read of the unfinished reply")
        assert "opencode:msg_live1a" not in rows.keys("opencode")
    conn.execute("BEGIN IMMEDIATE")
    done = {**streaming, "time": {"created": at, "completed": at + 9}}
    oc_message(conn, "msg_live1a", done, at + 9)
    oc_part(conn, "prt_live1a", "msg_live1a", {"type": "text", "text": "a full reply"}, at + 9)
    conn.execute("COMMIT")
    expected.add("opencode:msg_live1a")
    wait_for(rows.holds("opencode", expected, daemon), what="the completed reply")
    conn.execute("BEGIN IMMEDIATE")  # a non-text part after completion: not a second turn
    finish = {"type": "step-finish", "reason": "stop"}
    oc_part(conn, "prt_live1f", "msg_live1a", finish, at + 10)
    conn.execute("COMMIT")
    expected |= commit_exchanges(conn, OPENCODE, 1, 1)
    wait_for(rows.holds("opencode", expected, daemon), what="a later turn")
    conn.close()
    rows.assert_exactly("opencode", expected)
    stored = rows.conn.execute(
        "SELECT message FROM memory WHERE external_uuid = 'opencode:msg_live1a'"
    ).fetchall()
    assert stored == [("a full reply",)]


@CLIENTS
def test_daemon_killed_mid_write_and_restarted_stores_every_turn_once_with_stable_keys(
    home: Home, rows: Rows, client: Client
) -> None:
    path = client.install(home.path)
    conn = writer(path)
    expected = client.fixture_keys()
    n = 0
    for _ in range(3):
        daemon = home.start("run")
        wait_for(rows.holds(client.platform, expected, daemon), what="the turns so far")
        expected |= commit_exchanges(conn, client, n, 5)
        conn.execute("BEGIN IMMEDIATE")  # killed while the client is mid-write
        expected |= client.add_exchange(conn, n + 5)
        daemon.popen.send_signal(signal.SIGKILL)
        daemon.popen.wait(timeout=10)
        conn.execute("COMMIT")
        n += 6
    final = home.start("run")
    wait_for(rows.holds(client.platform, expected, final), what="every turn after the kills")
    conn.close()
    rows.assert_exactly(client.platform, expected)


@CLIENTS
def test_a_locked_database_is_counted_never_fatal_and_read_once_released(
    home: Home, rows: Rows, client: Client
) -> None:
    path = client.install(home.path, wal=False)  # rollback journal: a lock keeps readers out
    locker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    locker.execute("BEGIN EXCLUSIVE")
    pending = client.add_exchange(locker, 1)
    daemon = home.start("run")
    counted = rows.counted(path)
    wait_for(lambda: alive(daemon)() and "locked" in counted(), what="the lock to be counted")
    shown = status(home, client.platform)
    assert shown["issues"] >= 1 and "database is locked" in shown["last_issue"]
    other_client_still_captured(home, rows, daemon, 7)
    assert rows.keys(client.platform) == []
    locker.execute("COMMIT")
    locker.close()
    expected = client.fixture_keys() | pending
    wait_for(rows.holds(client.platform, expected, daemon), what="the turns once released")
    rows.assert_exactly(client.platform, expected)


def truncate(path: Path, whole: bytes) -> None:
    """Cut in place, as a full disk or a crash mid-copy leaves it."""
    with path.open("r+b") as handle:
        handle.truncate(len(whole) // 3)


def scribble(path: Path, whole: bytes) -> None:
    """Garbage over the header and the first pages, as a bad sector or a stray write leaves it."""
    with path.open("r+b") as handle:
        handle.write(bytes(range(256)) * 64)


@CLIENTS
@pytest.mark.parametrize("damage", [truncate, scribble], ids=["truncated", "overwritten"])
def test_a_damaged_store_is_counted_never_fatal_and_read_once_whole_again(
    home: Home, rows: Rows, client: Client, damage: Callable[[Path, bytes], None]
) -> None:
    path = client.install(home.path, wal=False)
    whole = path.read_bytes()
    daemon = home.start("run")
    expected = client.fixture_keys()
    wait_for(rows.holds(client.platform, expected, daemon), what="the recorded turns")
    damage(path, whole)
    counted = rows.counted(path)
    wait_for(lambda: alive(daemon)() and bool(counted()), what="the damage counted")
    shown = status(home, client.platform)
    assert shown["issues"] >= 1 and "cannot read" in shown["last_issue"]
    other_client_still_captured(home, rows, daemon, 8)
    path.write_bytes(whole)  # the client rewrites its store, then goes on writing
    conn = writer(path, busy_wait_sec=5)  # rollback journal: our retries may hold a read lock
    expected |= commit_exchanges(conn, client, 1, 3)
    conn.close()
    wait_for(rows.holds(client.platform, expected, daemon), what="the turns once whole")
    rows.assert_exactly(client.platform, expected)


@CLIENTS
def test_a_store_replaced_by_a_fresh_one_is_read_from_its_start(
    home: Home, rows: Rows, client: Client
) -> None:
    path = client.install(home.path)
    daemon = home.start("run")
    expected = client.fixture_keys()
    wait_for(rows.holds(client.platform, expected, daemon), what="the recorded turns")
    fresh = path.with_name("fresh.db")  # the user removed the store; the client made a new one
    shutil.copy(client.fixture, fresh)
    with sqlite3.connect(fresh) as conn:
        table = "part" if client.platform == "opencode" else "messages"
        conn.execute(f"DELETE FROM {table}")
        if client.platform == "opencode":
            conn.execute("DELETE FROM message")
        else:  # a new session, message ids from 1 again
            conn.execute("DELETE FROM sqlite_sequence")
            conn.execute("UPDATE sessions SET id = 'fresh_' || id, started_at = started_at + 1")
    conn.close()
    for leftover in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        leftover.unlink(missing_ok=True)
    os.replace(fresh, path)
    conn = writer(path)
    expected |= commit_exchanges(conn, client, 1, 2)
    conn.close()
    wait_for(rows.holds(client.platform, expected, daemon), what="the new store's turns")
    rows.assert_exactly(client.platform, expected)


@CLIENTS
def test_reads_never_change_the_clients_files(home: Home, rows: Rows, client: Client) -> None:
    path = client.install(home.path)  # the client not running: no -wal beside the store
    wal = path.with_name(path.name + "-wal")
    closed = snapshot(path)
    daemon = home.start("run")
    expected = client.fixture_keys()
    wait_for(rows.holds(client.platform, expected, daemon), what="the recorded turns")
    assert snapshot(path) == closed
    assert not wal.exists() or wal.stat().st_size == 0, "a read of ours wrote a -wal"
    conn = writer(path)  # the client running: its turns in the -wal, not yet checkpointed
    expected |= commit_exchanges(conn, client, 1, 3)
    running = snapshot(path, wal)
    assert running[wal.name] is not None
    wait_for(rows.holds(client.platform, expected, daemon), what="the turns in the -wal")
    assert snapshot(path, wal) == running
    conn.execute("PRAGMA busy_timeout = 2000")  # a read in flight may finish; none may stay
    (busy, _log, _done) = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0, "a reader of ours still held the database"
    conn.close()
    rows.assert_exactly(client.platform, expected)


@CLIENTS
def test_a_newer_release_changing_record_kinds_and_columns_is_counted_once_never_fatal(
    home: Home, rows: Rows, client: Client
) -> None:
    path = client.install(home.path)
    conn = writer(path)
    daemon = home.start("run")
    expected = client.fixture_keys()
    wait_for(rows.holds(client.platform, expected, daemon), what="the recorded turns")
    conn.execute("BEGIN IMMEDIATE")
    kinds = newer_release_records(client, conn)
    conn.execute("COMMIT")
    if client.platform == "opencode":
        expected.add("opencode:msg_newkind")  # its text part is still read
    for n in range(1, 4):  # later reads see the same records again: counted once all the same
        expected |= commit_exchanges(conn, client, n, 1)
        wait_for(rows.holds(client.platform, expected, daemon), what=f"turn {n}")
    assert status(home, client.platform)["unknown_kinds"] == kinds
    table = "message" if client.platform == "opencode" else "messages"
    conn.execute(f"ALTER TABLE {table} ADD COLUMN mood TEXT")  # an added column is harmless
    expected |= commit_exchanges(conn, client, 4, 1)
    wait_for(rows.holds(client.platform, expected, daemon), what="a turn after a new column")
    renamed = "time_updated" if client.platform == "opencode" else "content"
    conn.execute(f"ALTER TABLE {table} RENAME COLUMN {renamed} TO {renamed}_v2")
    counted = rows.counted(path)
    wait_for(lambda: alive(daemon)() and "no such column" in counted(), what="the renamed column")
    shown = status(home, client.platform)
    assert shown["issues"] >= 1 and f"no such column: {renamed}" in shown["last_issue"]
    other_client_still_captured(home, rows, daemon, 10)
    conn.close()
    rows.assert_exactly(client.platform, expected)
