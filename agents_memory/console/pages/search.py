"""Search (the same hybrid search as ``search_memory``, each hit with why it matched) and the
session page it leads to (the whole conversation, subagent turns nested)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final
from urllib.parse import urlencode

import psycopg
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from agents_memory.console.context import console_from
from agents_memory.console.forms import text
from agents_memory.errors import SearchArgumentError, UnknownProjectError
from agents_memory.recall.actions import actions_shown
from agents_memory.recall.search import QueryVector, embed_query, prepare_search, search_user
from agents_memory.recall.search_request import SearchRequest
from agents_memory.recall.sessions import session_summary
from agents_memory.store.owner import console as console_store
from agents_memory.store.owner.console import ConsoleTurn, CoveringSummary
from agents_memory.store.search import MAX_LIMIT, MatchWhy, SearchHit, SearchResult
from agents_memory.store.search.action_text import ACTION_KINDS, action_line
from agents_memory.store.session_summaries import SessionSummaryRow

FIELDS = (
    "q",
    "project",
    "since",
    "until",
    "role",
    "platform",
    "device_scope",
    "limit",
    "kind",
    "file",
)


def request_of(params: Mapping[str, Any]) -> SearchRequest:
    """The form as the one search request (the older ``p_tag`` / ``date_range`` fields of a
    saved link still read)."""
    return SearchRequest.build(
        query=text(params, "q"),
        project=text(params, "project"),
        since=text(params, "since"),
        until=text(params, "until"),
        p_tag=text(params, "p_tag"),
        date_range=text(params, "date_range"),
        role=text(params, "role"),
        platform=text(params, "platform") or "*",
        device_scope=text(params, "device_scope") or "global",
        limit=asked_limit(params),
        include_archived=bool(params.get("include_archived")),
        kind=text(params, "kind"),
        file=text(params, "file"),
    )


async def search_page(request: Request) -> Response:
    console = console_from(request)
    params = request.query_params
    values = {name: params.get(name, "") for name in FIELDS}
    values["project"] = values["project"] or params.get("p_tag", "")
    values["include_archived"] = "1" if params.get("include_archived") else ""
    page: dict[str, Any] = {
        "values": values,
        "platforms": [a.name for a in console.catalog.adapters],
        "kinds": ACTION_KINDS,
    }
    if text(params, "q") is None and not (text(params, "kind") or text(params, "file")):
        return console.render(request, "search.html", **page, result=None, error=None)
    now = datetime.now().astimezone()
    try:
        asked = prepare_search(
            request_of(params), device_name=console.settings.device_name, now=now
        )
        vector: QueryVector = await run_in_threadpool(
            lambda: embed_query(console.state.embedder(), asked.text)
        )
        result = await console.read(
            lambda conn: search_user(conn, console.user_id, asked, vector.vector, console.settings)
        )
    except (SearchArgumentError, UnknownProjectError, ValueError) as exc:
        return console.render(
            request, "search.html", status_code=400, **page, result=None, error=str(exc)
        )
    return console.render(
        request,
        "search.html",
        **page,
        result=result,
        why={hit.id: why_line(result, hit.why) for hit in result.hits},
        acted={hit.id: [action_line(a) for a in hit.actions] for hit in result.hits},
        note=vector.note or result.note,
        error=None,
        paged=paged(params, result),
    )


PER_PAGE: Final = 10


def page_of(params: Mapping[str, Any]) -> tuple[int, int]:
    """The page asked for (1 = first) and its size (``limit``: results per page)."""
    try:
        size = max(1, min(MAX_LIMIT, int(text(params, "limit") or PER_PAGE)))
        number = max(1, int(text(params, "page") or 1))
    except ValueError as exc:
        raise ValueError("page and results per page are whole numbers") from exc
    return min(number, -(-MAX_LIMIT // size)), size


def asked_limit(params: Mapping[str, Any]) -> int:
    """How many hits to ask for: every page up to the one shown, and one more (to know
    whether there is a next page), at most the search's own cap."""
    number, size = page_of(params)
    return min(MAX_LIMIT, number * size + 1)


@dataclass(frozen=True, slots=True)
class Paged:
    """The hits of one page of results, and the links to its neighbours."""

    hits: tuple[SearchHit, ...]
    first: int
    """The place (1 = best) of this page's first hit."""
    previous: str | None
    next: str | None
    capped: bool
    """Whether the search's cap (``MAX_LIMIT`` hits) ends the results here."""


def paged(params: Mapping[str, Any], result: SearchResult) -> Paged:
    number, size = page_of(params)
    start = (number - 1) * size
    kept = {k: v for k, v in params.items() if k in FIELDS or k == "include_archived"}

    def link(to: int) -> str:
        return "/search?" + urlencode({**kept, "page": to})

    more = len(result.hits) > start + size
    return Paged(
        hits=result.hits[start : start + size],
        first=start + 1,
        previous=link(number - 1) if number > 1 else None,
        next=link(number + 1) if more and start + size < MAX_LIMIT else None,
        capped=not more and len(result.hits) >= MAX_LIMIT,
    )


def why_line(result: SearchResult, why: MatchWhy) -> str:
    """Why a hit matched, in words: its full-text and vector ranks, similarity, score."""
    parts: list[str] = []
    if why.fts_rank is not None:
        parts.append(f"full-text #{why.fts_rank}")
    if why.vector_rank is not None:
        parts.append(f"vector #{why.vector_rank}")
    if why.similarity is not None:
        parts.append(f"similarity {why.similarity:.2f}")
    if why.words_matched is not None:
        parts.append(f"{why.words_matched} word(s) found")
    if why.action_rank is not None:
        parts.append(f"action #{why.action_rank}")
    if why.score is not None:
        parts.append(f"score {why.score:.4f}")
    return ", ".join(parts) or result.used


async def turn(request: Request) -> Response:
    """A turn in its session (``/turn/<id>``)."""
    console = console_from(request)
    memory_id = int(request.path_params["memory_id"])
    where = await console.read(
        lambda conn: console_store.turn_session(conn, console.user_id, memory_id)
    )
    if where is None:
        return console.render(request, "gone.html", status_code=404, memory_id=memory_id)
    platform, session_id = where
    query = {"platform": platform, "id": session_id} if session_id else {"turn": memory_id}
    return RedirectResponse(f"/session?{urlencode(query)}#turn-{memory_id}", status_code=303)


@dataclass(frozen=True, slots=True)
class Block:
    """A main-thread turn, or a run of subagent turns shown nested under it."""

    turn: ConsoleTurn | None
    nested: list[ConsoleTurn]


def blocks(turns: list[ConsoleTurn]) -> list[Block]:
    out: list[Block] = []
    for item in turns:
        if item.subagent and out and out[-1].turn is None:
            out[-1].nested.append(item)
        elif item.subagent:
            out.append(Block(None, [item]))
        else:
            out.append(Block(item, []))
    return out


async def session_page(request: Request) -> Response:
    console = console_from(request)
    platform, session_id = text(request.query_params, "platform"), text(request.query_params, "id")
    single = text(request.query_params, "turn")

    def load(
        conn: psycopg.Connection[Any],
    ) -> tuple[list[ConsoleTurn], list[CoveringSummary], SessionSummaryRow | None]:
        own = None
        if platform and session_id:
            rows = console_store.session_turns(conn, console.user_id, platform, session_id)
            own = session_summary(conn, console.user_id, platform, session_id)
        elif single and single.isdigit():
            rows = console_store.single_turn(conn, console.user_id, int(single))
        else:
            rows = []
        ids = [r.id for r in rows]
        return rows, console_store.summaries_covering(conn, console.user_id, ids), own

    rows, summaries, own = await console.read(load)
    acted = await console.read(
        lambda conn: actions_shown(conn, console.user_id, [r.id for r in rows])
    )
    if not rows:
        return console.render(request, "gone.html", status_code=404, memory_id=None)
    projects = sorted({r.project for r in rows if r.project})
    return console.render(
        request,
        "session.html",
        platform=platform or rows[0].agent_platform,
        session_id=session_id,
        blocks=blocks(rows),
        count=len(rows),
        projects=projects,
        summaries=summaries,
        session_summary=own,
        first=rows[0],
        last=rows[-1],
        actions=acted,
        action_count=sum(len(a) for a in acted.values()),
    )


ROUTES = [
    Route("/search", search_page),
    Route("/turn/{memory_id:int}", turn),
    Route("/session", session_page),
]
