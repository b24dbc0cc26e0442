"""The live feed: one thread LISTENs on the channel capture NOTIFYs after storing rows
(:data:`agents_memory.store.memories.NEW_MEMORY_CHANNEL`) and wakes every open timeline's
server-sent-events stream."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Final

import psycopg

from agents_memory.store.coldpath.coldqueue import listen_for_new_rows

log = logging.getLogger(__name__)

_POLL_SECONDS: Final = 0.5
"""How often the listener looks up from the socket to see whether it should stop."""


class LiveFeed:
    """Fans PostgreSQL notifications out to the event loop's subscribers."""

    def __init__(self, conninfo: str) -> None:
        self._conninfo = conninfo
        self._subscribers: set[asyncio.Queue[int]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.Thread(target=self._listen, name="console-live", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=10)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def subscribe(self) -> asyncio.Queue[int]:
        queue: asyncio.Queue[int] = asyncio.Queue(maxsize=1)
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[int]) -> None:
        self._subscribers.discard(queue)

    def _listen(self) -> None:
        """Long because it is the thread's whole life: connect, LISTEN, forward, reconnect."""
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._conninfo, autocommit=True) as conn:
                    listen_for_new_rows(conn)
                    self._ready.set()
                    while not self._stop.is_set():
                        for _note in conn.notifies(timeout=_POLL_SECONDS):
                            self._wake()
            except psycopg.Error as exc:
                log.warning("live feed lost its database connection, retrying: %s", exc)
                self._ready.set()
                self._stop.wait(2.0)

    def _wake(self) -> None:
        loop = self._loop
        if loop is None:
            return
        loop.call_soon_threadsafe(self._deliver)

    def _deliver(self) -> None:
        for queue in list(self._subscribers):
            if queue.empty():
                queue.put_nowait(1)
