"""``memory-capture run``: watch every transcript root and capture each new turn once.

Inotify events (watchdog) mark files dirty; each is processed after a short debounce. A
periodic rescan catches missed events, roots that appear later and files that went idle with
a held-back group. When the database is unreachable the cursor stays where it was and the
file is retried with backoff: nothing is lost. SIGTERM/SIGINT finish the current file,
commit and exit 0.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

import psycopg
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from agents_memory.adapters.base import Adapter
from agents_memory.capture import tailer
from agents_memory.capture.discovery import Catalog, Unreadable
from agents_memory.capture.pipeline import FileOutcome, Ingestor
from agents_memory.config import Settings
from agents_memory.errors import AgentsMemoryError, first_line
from agents_memory.gitinfo import git_info
from agents_memory.store import database
from agents_memory.store.capture import cursors as cursor_store
from agents_memory.store.entry import open_user_connection

log = logging.getLogger(__name__)

IDLE_FINAL_SEC = 120.0
"""A file untouched this long is read with ``final=True`` (held-back groups are closed). Long:
one streamed response can pause between its blocks (a long tool call being generated), and a
group closed too early would be re-keyed by its later blocks alone. Its turns are stored at
once either way; only the cursor waits."""
BACKOFF_MAX_SEC = 30.0


class Companion(Protocol):
    """Work hosted in the daemon's process beside capture, handed in by the entry point (the
    brief socket and the context-file refresh of :mod:`agents_memory.recall`): started once the
    database is open, ticked on every pass of the loop, closed at shutdown. A companion never
    raises: it logs and carries on, because capture must not stop for it."""

    def start(self, stop: threading.Event) -> None: ...

    def tick(self) -> None: ...

    def close(self) -> None: ...


@dataclass(slots=True)
class DaemonStats:
    files: int = 0
    stored: int = 0
    issues: int = 0
    db_failures: int = 0
    started_at: float = field(default_factory=time.time)


class _Handler(FileSystemEventHandler):
    def __init__(self, on_path: Callable[[Path], None]) -> None:
        self.on_path = on_path

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        if event.is_directory:
            if event.event_type in ("created", "moved"):
                self.on_path(Path(os.fsdecode(getattr(event, "dest_path", "") or event.src_path)))
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                self.on_path(Path(os.fsdecode(raw)))


class CaptureDaemon:
    """One capture loop for one home directory. ``run()`` blocks until ``stop()``."""

    def __init__(
        self,
        settings: Settings,
        catalog: Catalog,
        *,
        poll_only: bool = False,
        nudge_socket: Path | None = None,
        companions: Sequence[Companion] = (),
    ) -> None:
        self.settings = settings
        self.nudge_socket = nudge_socket
        self.companions = tuple(companions)
        self.catalog = catalog
        self.poll_only = poll_only
        self.stats = DaemonStats()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._dirty: dict[Path, float] = {}
        self._watched: set[Path] = set()
        self._observer: BaseObserver | None = None
        self._conn: psycopg.Connection[Any] | None = None
        self._ingestor: Ingestor | None = None
        self._db: database.Database | None = None
        self._backoff = 0.5
        self._last_seen: dict[Path, str] = {}
        self._unreadable: set[Path] = set()
        """What the last rescan could not read (logged once, until it changes)."""
        self._nudge_sock: socket.socket | None = None
        self._next_rescan = 0.0
        self._root_paths: list[Path] = [root for root, _a in catalog.roots()]

    # --- control --------------------------------------------------------------------------
    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def nudge(self, path: Path | None = None) -> None:
        """Read ``path`` now (or rescan everything when ``None``)."""
        with self._lock:
            if path is None:
                self._next_rescan = 0.0
            else:
                self._dirty[path] = 0.0
        self._wake.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    # --- main loop ------------------------------------------------------------------------
    def run(self) -> DaemonStats:
        database.open_database(self.settings)
        self._connect()
        self._start_watching()
        self._start_nudge_listener()
        for companion in self.companions:
            companion.start(self._stop)
        self._next_rescan = 0.0
        debounce = self.settings.capture_debounce_ms / 1000
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if now >= self._next_rescan:
                    self._rescan()
                    self._next_rescan = time.monotonic() + self.settings.capture_rescan_sec
                for companion in self.companions:
                    companion.tick()
                for path in self._due(time.monotonic(), debounce):
                    if self._stop.is_set():
                        break
                    self._process(path, final=False)
                self._wake.wait(self._sleep_for(debounce))
                self._wake.clear()
        finally:
            self._shutdown()
        log.info(
            "capture stopped: %d files read, %d rows stored, %d bad records skipped",
            self.stats.files,
            self.stats.stored,
            self.stats.issues,
        )
        return self.stats

    def _sleep_for(self, debounce: float) -> float:
        with self._lock:
            pending = min(self._dirty.values(), default=None)
        until_rescan = max(0.0, self._next_rescan - time.monotonic())
        if pending is None:
            return min(until_rescan, 1.0)
        return max(0.0, min(until_rescan, pending + debounce - time.monotonic()))

    def _due(self, now: float, debounce: float) -> list[Path]:
        with self._lock:
            due = [p for p, t in self._dirty.items() if now - t >= debounce]
            for path in due:
                del self._dirty[path]
        return due

    def _mark(self, path: Path) -> None:
        if path.is_dir():
            self._watch_new_roots()
            return
        if not any(path.is_relative_to(root) for root in self._root_paths):
            return  # an event from a parent watched while a root does not exist yet
        found = self.catalog.transcript_for(path)  # a database's -wal means the database
        path = found[0] if found is not None else path
        with self._lock:
            self._dirty.setdefault(path, time.monotonic())
        self._wake.set()

    # --- flush nudges from hooks ------------------------------------------------------------
    def _start_nudge_listener(self) -> None:
        if self.nudge_socket is None:
            return
        path = self.nudge_socket
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.unlink(missing_ok=True)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sock.bind(str(path))
            path.chmod(0o600)
        except OSError as exc:
            log.warning("cannot listen for flush nudges on %s: %s", path, exc)
            return
        sock.settimeout(0.5)
        self._nudge_sock = sock
        threading.Thread(
            target=self._receive_nudges, args=(sock,), daemon=True, name="nudges"
        ).start()

    def _receive_nudges(self, sock: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                data = sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            text = data.decode("utf-8", errors="replace").strip()
            self.nudge(Path(text) if text else None)

    # --- watching -------------------------------------------------------------------------
    def _start_watching(self) -> None:
        if self.poll_only:
            return
        observer = Observer()
        observer.daemon = True
        self._observer = observer
        self._watch_new_roots()
        observer.start()

    def _watch_new_roots(self) -> None:
        self._root_paths = [root for root, _adapter in self.catalog.roots()]
        if self._observer is None:
            return
        handler = _Handler(self._mark)
        for root, _adapter in self.catalog.roots():
            target = root if root.is_dir() else _nearest_existing(root)
            if target is None or target in self._watched:
                continue
            recursive = target == root
            try:
                self._observer.schedule(handler, str(target), recursive=recursive)
            except OSError as exc:
                log.warning(
                    "cannot watch %s (%s); the periodic rescan still covers it", target, exc
                )
                continue
            self._watched.add(target)
            if recursive:
                log.info("watching %s", target)

    def _rescan(self) -> None:
        git_info.cache_clear()
        self._watch_new_roots()
        known = self._known_cursors()
        now = time.time()
        unreadable: list[Unreadable] = []
        for path, adapter in self.catalog.transcripts(unreadable=unreadable):
            if self._stop.is_set():
                return
            try:
                st = path.stat()
            except OSError:
                continue
            key = tailer.signature(path, adapter.companions(path))  # a -wal change counts
            if self._last_seen.get(path) == key:
                continue
            cursor = known.get(str(path))
            mark = key if adapter.read_mode(path) == "database" else None
            if cursor is not None and tailer.unchanged(cursor, st, mark):
                self._last_seen[path] = key
                continue
            idle = now - tailer.last_written(path, adapter.companions(path)) >= IDLE_FINAL_SEC
            if self._process(path, final=idle, adapter=adapter) is not None and idle:
                self._last_seen[path] = key
        self._report_unreadable(unreadable)

    def _report_unreadable(self, unreadable: list[Unreadable]) -> None:
        """Log each transcript or directory that became unreadable (once; the rescan reads it
        as soon as it is readable again)."""
        paths = {item.path for item in unreadable}
        for item in unreadable:
            if item.path not in self._unreadable:
                log.warning("%s (%s); captured once it is readable", item, item.platform)
        for path in self._unreadable - paths:
            log.info("%s is readable again", path)
        self._unreadable = paths

    def _known_cursors(self) -> dict[str, cursor_store.Cursor]:
        """This device's cursors, for skipping files that did not change (first scan only)."""
        if self._last_seen:
            return {}
        try:
            conn, _ingestor = self._connection()
            found = cursor_store.list_cursors(conn, self.settings.device_name)
            conn.commit()
        except (psycopg.Error, AgentsMemoryError):
            self._drop_connection()
            return {}
        return {c.path: c for c in found}

    # --- processing -----------------------------------------------------------------------
    def _process(
        self, path: Path, *, final: bool, adapter: Adapter | None = None
    ) -> FileOutcome | None:
        adapter = adapter or self.catalog.owner(path)
        if adapter is None or not path.is_file():
            return None
        try:
            conn, ingestor = self._connection()
            outcome = ingestor.ingest_file(conn, path, adapter, final=final)
        except (psycopg.OperationalError, psycopg.InterfaceError, AgentsMemoryError) as exc:
            self._database_down(path, exc)
            return None
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
            return None
        self._backoff = 0.5
        self.stats.files += 1
        self.stats.stored += outcome.stored
        self.stats.issues += outcome.issues
        if outcome.stored or outcome.issues or outcome.restarted:
            log.info(
                "%s: %d new, %d updated, %d dropped, %d bad records",
                path,
                outcome.inserted,
                outcome.updated,
                outcome.dropped,
                outcome.issues,
            )
        return outcome

    def _database_down(self, path: Path, exc: BaseException) -> None:
        self.stats.db_failures += 1
        log.warning(
            "database unavailable (%s); keeping the cursor of %s and retrying in %.1f s",
            first_line(exc),
            path,
            self._backoff,
        )
        self._drop_connection()
        with self._lock:
            self._dirty[path] = time.monotonic() + self._backoff
        self._stop.wait(self._backoff)
        self._backoff = min(BACKOFF_MAX_SEC, self._backoff * 2)

    def _connection(self) -> tuple[psycopg.Connection[Any], Ingestor]:
        if self._conn is None or self._conn.closed or self._ingestor is None:
            self._connect()
        assert self._conn is not None and self._ingestor is not None
        return self._conn, self._ingestor

    def _connect(self) -> None:
        # Locate again: an embedded server that stopped is started again here.
        opened = open_user_connection(self.settings, connect_timeout=5)
        self._db, self._conn = opened.db, opened.conn
        self._ingestor = Ingestor(
            self.settings,
            user_id=opened.user_id,
            has_vector=opened.has_vector,
            home=self.catalog.home,
        )

    def _drop_connection(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
        self._conn = None

    def _shutdown(self) -> None:
        for companion in self.companions:
            companion.close()
        if self._nudge_sock is not None:
            self._nudge_sock.close()
            if self.nudge_socket is not None:
                self.nudge_socket.unlink(missing_ok=True)
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        self._drop_connection()


def _nearest_existing(path: Path) -> Path | None:
    for parent in path.parents:
        if parent.is_dir():
            return parent
    return None


# --- the pid file, so that `status` can tell whether a daemon runs ------------------------
class PidFile:
    """An flock-ed pid file; held for the daemon's lifetime."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    def acquire(self) -> bool:
        """Take the lock; ``False`` when another daemon holds it (both may still run safely:
        cursor locks keep them from doubling anything)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._handle = handle
        return True

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def running_pid(path: Path) -> int | None:
    """The pid of the daemon holding ``path``, or ``None`` when none runs."""
    try:
        handle = path.open("r", encoding="utf-8")
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            text = handle.read().strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None
