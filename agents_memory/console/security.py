"""The console's guard, in front of every route.

* Only the Host names ``127.0.0.1:<port>`` and ``localhost:<port>`` are served (a DNS
  rebinding page cannot reach the console under its own name).
* ``/login?token=…`` exchanges the one-time token printed by ``mcp-agents-memory ui`` for a
  session cookie (httpOnly, SameSite=Strict); the token works once.
* Every other route but ``/static`` needs that session.
* Every change (any method but GET/HEAD) needs an ``Origin`` (or, lacking it, ``Referer``) of
  this console and the session's CSRF token (form field ``csrf`` or header ``X-CSRF-Token``;
  checked by :func:`agents_memory.console.forms.change_form`).
* Every response carries ``Content-Security-Policy: default-src 'self'`` and friends.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE: Final = "am_console"
CSP: Final = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
_HEADERS: Final = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
SAFE_METHODS: Final = frozenset({"GET", "HEAD"})


@dataclass(slots=True)
class Guard:
    """The console's secrets: the one-time login token and the sessions it opened."""

    port: int
    login_token: str | None = field(default_factory=lambda: secrets.token_urlsafe(32))
    sessions: dict[str, str] = field(default_factory=dict)
    """Session id -> its CSRF token."""

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    def login_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/login?token={self.login_token}"

    def redeem(self, token: str) -> str | None:
        """A new session id for the one-time token (``None`` when it is wrong or used)."""
        expected = self.login_token
        if expected is None or not hmac.compare_digest(token.encode(), expected.encode()):
            return None
        self.login_token = None
        session = secrets.token_urlsafe(32)
        self.sessions[session] = secrets.token_urlsafe(32)
        return session

    def csrf_for(self, session: str | None) -> str | None:
        return self.sessions.get(session) if session else None


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _cookie(scope: Scope) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed cookie header is no session
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel else None


def same_origin(scope: Scope, guard: Guard) -> bool:
    """The change comes from a page of this console (``Origin``, else ``Referer``)."""
    origin = _header(scope, b"origin")
    if origin is None:
        referer = _header(scope, b"referer")
        if referer is None:
            return False
        parts = urlsplit(referer)
        origin = f"{parts.scheme}://{parts.netloc}"
    return origin in guard.origins


class GuardMiddleware:
    """Host allow-list, login, session, origin of changes, security headers (pure ASGI, so the
    live feed streams)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.extend(_HEADERS)
                if not any(k == b"cache-control" for k, _ in headers):
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        refusal = self._refusal(scope)
        if refusal is not None:
            await _plain(secured, *refusal)
            return
        if scope["path"] == "/login":
            await self._login(scope, secured)
            return
        await self.app(scope, receive, secured)

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        if _header(scope, b"host") not in self.guard.hosts:
            return 421, "this console answers only at 127.0.0.1 or localhost"
        path = scope["path"]
        if path == "/login" or path.startswith("/static/"):
            return None
        csrf = self.guard.csrf_for(_cookie(scope))
        if csrf is None:
            return 401, "open the URL `mcp-agents-memory ui` printed to log in"
        if scope["method"] not in SAFE_METHODS and not same_origin(scope, self.guard):
            return 403, "refused: this change does not come from the console's own pages"
        scope["csrf"] = csrf
        return None

    async def _login(self, scope: Scope, send: Send) -> None:
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        session = self.guard.redeem((query.get("token") or [""])[0])
        if session is None:
            await _plain(send, 403, "this login link is wrong or was used already")
            return
        cookie = f"{COOKIE}={session}; Path=/; HttpOnly; SameSite=Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [(b"location", b"/"), (b"set-cookie", cookie.encode())],
            }
        )
        await send({"type": "http.response.body", "body": b""})


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": body})
