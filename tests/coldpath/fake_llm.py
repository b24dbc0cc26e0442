"""A real HTTP server on 127.0.0.1 that speaks OpenAI's ``POST /v1/chat/completions``.

Scripted, for the Cold Path's LLM tests (and any job's)::

    with FakeLLMServer() as llm:                      # answers a minimal schema-valid object
        llm.queue({"p_tag": None, "d_tag": ["x"]})    # next reply: this object as JSON
        llm.queue("{not json")                        # then: this text verbatim
        llm.queue(HTTPFailure(503))                   # then: an HTTP error
        llm.queue(lambda req: {"echo": req.user})     # then: computed from the request
        settings = make_settings(local_llm_base_url=llm.base_url)

* ``replies``: a callable ``(ChatRequest) -> Reply`` used when the queue is empty (default:
  :func:`schema_example` of the request's schema).
* ``reject_json_schema=500`` (or 400) answers every ``response_format: json_schema`` request
  with that status and llama-cpp-python's message, like its server does.
* ``delay`` seconds before every answer (or queue ``Slow(seconds, reply)`` for one).
* ``usage=(prompt, completion)`` tokens reported per answer; ``None`` omits ``usage``.
* ``requests`` records every request (``ChatRequest``), in order.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

LLAMA_CPP_PYTHON_REJECTION = (
    "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]"
)


@dataclass(frozen=True)
class ChatRequest:
    path: str
    body: dict[str, Any]
    authorization: str | None

    @property
    def response_format(self) -> dict[str, Any]:
        value = self.body.get("response_format") or {}
        return value if isinstance(value, dict) else {}

    @property
    def format_type(self) -> str | None:
        return self.response_format.get("type")

    @property
    def schema(self) -> dict[str, Any] | None:
        fmt = self.response_format
        if fmt.get("type") == "json_schema":
            return (fmt.get("json_schema") or {}).get("schema")
        return fmt.get("schema")

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    def content(self, role: str) -> str:
        return "\n".join(
            str(m.get("content", "")) for m in self.body.get("messages", []) if m["role"] == role
        )

    @property
    def system(self) -> str:
        return self.content("system")

    @property
    def user(self) -> str:
        return self.content("user")


@dataclass(frozen=True)
class HTTPFailure:
    status: int
    message: str = "injected failure"


@dataclass(frozen=True)
class Slow:
    seconds: float
    reply: Any


Reply = str | dict[str, Any] | HTTPFailure | Slow | Callable[[ChatRequest], Any]


def schema_example(schema: Mapping[str, Any] | None) -> Any:  # noqa: PLR0911
    """A small value that satisfies ``schema`` (the subset the Cold Path uses)."""
    if not schema:
        return {}
    if "anyOf" in schema:
        return schema_example(schema["anyOf"][0])
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "object":
        props = schema.get("properties", {})
        return {key: schema_example(props.get(key, {})) for key in schema.get("required", [])}
    if kind == "array":
        return [schema_example(schema.get("items"))] * int(schema.get("minItems", 0))
    if kind == "string":
        return "x" * max(1, int(schema.get("minLength", 1)))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


@dataclass
class FakeLLMServer:
    replies: Callable[[ChatRequest], Any] | None = None
    reject_json_schema: int | None = None
    delay: float = 0.0
    usage: tuple[int, int] | None = (100, 20)
    requests: list[ChatRequest] = field(default_factory=list)
    _queue: deque[Reply] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # --- control ----------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def chat_requests(self) -> list[ChatRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def start(self) -> Self:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- answering --------------------------------------------------------------------------
    def _next_reply(self, request: ChatRequest) -> Any:
        with self._lock:
            reply: Any = self._queue.popleft() if self._queue else None
        if reply is None:
            reply = self.replies(request) if self.replies else schema_example(request.schema)
        while callable(reply):
            reply = reply(request)
        return reply

    def _answer(self, request: ChatRequest) -> tuple[int, dict[str, Any]]:
        if not request.path.endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {request.path}"}}
        if self.reject_json_schema and request.format_type == "json_schema":
            return self.reject_json_schema, {
                "error": {"message": LLAMA_CPP_PYTHON_REJECTION, "type": "internal_server_error"}
            }
        reply = self._next_reply(request)
        if isinstance(reply, Slow):
            self._stopping.wait(reply.seconds)
            reply = reply.reply
            while callable(reply):
                reply = reply(request)
        if isinstance(reply, HTTPFailure):
            return reply.status, {"error": {"message": reply.message}}
        content = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
        body: dict[str, Any] = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": request.model or "fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
        if self.usage is not None:
            prompt, completion = self.usage
            body["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return 200, body

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in two writes: with Nagle and delayed ACKs every
            # answer would wait ~40 ms
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                request = ChatRequest(self.path, body, self.headers.get("Authorization"))
                with server._lock:
                    server.requests.append(request)
                if server.delay:
                    server._stopping.wait(server.delay)
                status, payload = server._answer(request)
                self._send(status, payload)

            def do_GET(self) -> None:
                if self.path.endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test)
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
