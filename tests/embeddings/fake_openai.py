"""A real HTTP server on 127.0.0.1 that speaks OpenAI's ``POST /v1/embeddings``.

Vectors are deterministic (from a SHA-256 of the model and the input text) and deliberately not
unit length, so the client's normalisation is exercised; rows come back in reverse order with
their ``index``, as the protocol allows. ``fail_with`` queues HTTP statuses to answer before the
next successes. Every request is recorded.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


def fake_vector(model: str, text: str, dim: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    seed = int.from_bytes(hashlib.sha256(f"{model}\0{text}".encode()).digest()[:8], "big")
    return (np.random.default_rng(seed).standard_normal(dim) * 3.0).astype(np.float32)


@dataclass
class Seen:
    path: str
    authorization: str | None
    body: dict[str, Any]


@dataclass
class FakeEmbeddingServer:
    dim: int
    fail_with: list[int] = field(default_factory=list)
    requests: list[Seen] = field(default_factory=list)
    hold: threading.Event | None = None
    """When given, every request waits (at most 60 s) until it is set: a backend held busy."""
    arrived: threading.Event = field(default_factory=threading.Event)
    """Set when a request has arrived (before any :attr:`hold`)."""
    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(Seen(self.path, self.headers.get("Authorization"), body))
                server.arrived.set()
                if server.hold is not None:
                    server.hold.wait(60)
                if self.path != "/v1/embeddings":
                    self._answer(404, {"error": {"message": f"no route {self.path}"}})
                elif server.fail_with:
                    status = server.fail_with.pop(0)
                    self._answer(status, {"error": {"message": f"injected failure {status}"}})
                else:
                    self._answer(200, server.response(body))

            def _answer(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def response(self, body: dict[str, Any]) -> dict[str, Any]:
        model, inputs = body["model"], body["input"]
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": fake_vector(model, text, self.dim).tolist(),
            }
            for i, text in enumerate(inputs)
        ]
        return {
            "object": "list",
            "model": model,
            "data": data[::-1],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }
