"""What the console's pages share about requests: the checked form of a change, redirects
that carry a notice, and the few argument shapes (optional text, day bounds)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse

from agents_memory.console.inputs import BadInput, check_encoded, check_fields
from agents_memory.daterange import period_bound
from agents_memory.errors import OwnerRequestError


async def change_form(request: Request) -> FormData:
    """The form of a change, once its CSRF token is checked (403 otherwise). The guard has
    already checked the session and the origin. Then every field passes the input rule
    (:mod:`agents_memory.console.inputs`; a :class:`BadInput` otherwise): an encoded form as
    sent, before its undecodable bytes are replaced, and any form as parsed."""
    encoded = request.headers.get("content-type", "").startswith(
        "application/x-www-form-urlencoded"
    )
    raw = await request.body() if encoded else b""
    form = await request.form()
    expected = request.scope.get("csrf")
    given = form.get("csrf") or request.headers.get("x-csrf-token") or ""
    if not expected or not isinstance(given, str):
        await form.close()
        raise HTTPException(403, "refused: no CSRF token")
    if not hmac.compare_digest(given.encode(), str(expected).encode()):
        await form.close()
        raise HTTPException(403, "refused: wrong CSRF token")
    try:
        check_encoded(raw)
        check_fields((k, v) for k, v in form.multi_items() if isinstance(v, str))
    except BadInput:
        await form.close()
        raise
    return form


def text(values: Mapping[str, Any], name: str) -> str | None:
    """The trimmed value of ``name``; ``None`` when absent or blank (or an upload)."""
    value = values.get(name)
    if not isinstance(value, str):
        return None
    return value.strip() or None


def number(values: Mapping[str, Any], name: str) -> int | None:
    value = text(values, name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError as exc:
        raise OwnerRequestError(f"{name} must be a number, got {value!r}") from exc


def back(
    path: str, *, notice: str | None = None, failed: str | None = None, **query: Any
) -> RedirectResponse:
    """A 303 to ``path`` that shows ``notice`` (or ``failed``) on arrival."""
    params = {k: v for k, v in query.items() if v not in (None, "")}
    if notice:
        params["notice"] = notice
    if failed:
        params["failed"] = failed
    target = f"{path}?{urlencode(params)}" if params else path
    return RedirectResponse(target, status_code=303)


def day_bound(value: str | None, now: datetime, *, start: bool) -> datetime | None:
    """The start (or the exclusive end) of the day or period ``value`` names."""
    if not value:
        return None
    try:
        return period_bound(value, now, start=start)
    except ValueError as exc:
        raise OwnerRequestError(str(exc)) from exc


def query_string(values: Mapping[str, Any], *names: str) -> str:
    """``names`` from ``values`` as a query string (blank ones left out)."""
    return urlencode({n: v for n in names if (v := text(values, n))})
