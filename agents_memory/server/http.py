"""Streamable HTTP transport for clients that cannot spawn a process: loopback by default,
optional bearer token (``MCP_HTTP_TOKEN``, required off loopback).

DNS-rebinding protection stays on everywhere: a request must name an allowed host in its
``Host`` header (and, from a browser, an allowed ``Origin``). Allowed are the loopback names, the
address the server is bound to (with the machine's names when bound to every interface) and
whatever ``MCP_HTTP_ALLOWED_HOSTS`` adds (``memory.lan``, ``10.0.0.5:8765``).
"""

from __future__ import annotations

import hmac
import socket
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

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


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_BINDS = ("0.0.0.0", "::", "")  # noqa: S104 - names, not a bind


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> list[str]:
    """``Host`` header values the server answers: each name as it is and with any port
    (``name:*``); a configured ``name:port`` only as it is."""
    names = list(LOOPBACK_HOSTS)
    if bind in WILDCARD_BINDS:
        names += [socket.gethostname(), socket.getfqdn()]
    else:
        names.append(f"[{bind}]" if ":" in bind else bind)
    hosts: list[str] = []
    for name in [*names, *extra]:
        for value in (name,) if _has_port(name) else (name, f"{name}:*"):
            if value and value not in hosts:
                hosts.append(value)
    return hosts


def _has_port(name: str) -> bool:
    """``host:port`` or ``[v6]:port``; a bare ``[v6]`` has no port."""
    return ":" in name.rpartition("]")[2]


def transport_security(bind: str, extra: Iterable[str] = ()) -> TransportSecuritySettings:
    hosts = allowed_hosts(bind, extra)
    origins = [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def run_http(
    server: Any,
    *,
    host: str,
    port: int,
    token: str | None,
    extra_hosts: Iterable[str] = (),
) -> None:
    """Serve ``server`` (an MCPServer) on ``host:port`` at ``/mcp`` until stopped."""
    import uvicorn

    app: ASGIApp = server.streamable_http_app(
        transport_security=transport_security(host, extra_hosts), host=host
    )
    if token:
        app = BearerGuard(app, token)
    uvicorn.Server(
        uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    ).run()
