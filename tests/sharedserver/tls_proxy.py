"""TLS in front of a server built without it: the embedded wheel's PostgreSQL 18 has no SSL
support, so its only TCP entry is this proxy. It speaks PostgreSQL's own negotiation (the client
sends ``SSLRequest``, we answer ``S`` and do the handshake with the server certificate), refuses
a plain startup with a FATAL ``ErrorResponse`` (as ``hostssl``-only ``pg_hba.conf`` would), and
pipes the decrypted stream to the server's Unix socket, where the role's password is checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path

SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104


def _error_response(message: str) -> bytes:
    fields = b"SFATAL\0VFATAL\0C28000\0M" + message.encode() + b"\0\0"
    return b"E" + struct.pack("!I", len(fields) + 4) + fields


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


@dataclass
class TlsProxy:
    """``127.0.0.1:port`` (TLS required) → the PostgreSQL socket ``backend``."""

    backend: Path
    cert: Path
    key: Path
    plain_refused: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _server: asyncio.Server | None = None
    port: int = 0
    _ready: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._ready.wait(30), "the TLS proxy did not start"

    def stop(self) -> None:
        assert self._loop is not None and self._thread is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        self._server = loop.run_until_complete(
            asyncio.start_server(
                lambda r, w: self._serve(r, w, context), "127.0.0.1", 0, reuse_address=True
            )
        )
        self.port = int(self._server.sockets[0].getsockname()[1])
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            self._server.close()
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, context: ssl.SSLContext
    ) -> None:
        try:
            while True:
                length, code = struct.unpack("!II", await reader.readexactly(8))
                if length == 8 and code == GSSENC_REQUEST:
                    writer.write(b"N")
                    continue
                break
            if length != 8 or code != SSL_REQUEST:
                self.plain_refused += 1
                writer.write(_error_response("TLS is required (hostssl only)"))
                await writer.drain()
                writer.close()
                return
            writer.write(b"S")
            await writer.drain()
            await writer.start_tls(context)
            up_reader, up_writer = await asyncio.open_unix_connection(str(self.backend))
        except (ConnectionError, ssl.SSLError, OSError, asyncio.IncompleteReadError):
            with contextlib.suppress(Exception):
                writer.close()
            return
        await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
