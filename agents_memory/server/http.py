"""Streamable HTTP transport for clients that cannot spawn a process: loopback by default,
optional bearer token (``MCP_HTTP_TOKEN``)."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BearerGuard:
    """Pure ASGI middleware: HTTP requests need ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send(
                    {
                        "type": "http.response.body",
                        "body": b'{"error":"missing or wrong bearer token"}',
                    }
                )
                return
        await self.app(scope, receive, send)


def run_http(server: Any, *, host: str, port: int, token: str | None) -> None:
    """Serve ``server`` (an MCPServer) on ``host:port`` at ``/mcp`` until stopped."""
    import uvicorn

    app: ASGIApp = server.streamable_http_app()
    if token:
        app = BearerGuard(app, token)
    uvicorn.Server(
        uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    ).run()
