"""The one search request: what every caller of a search builds (``mcp-agents-memory search``,
the MCP tool ``search_memory``, ``forget --match``, the console's search form) and what the
brief socket carries to the capture daemon (:meth:`SearchRequest.to_wire` /
:meth:`SearchRequest.from_wire`).

Its fields are the one vocabulary of the commands: ``project``, ``since`` / ``until``
(:func:`agents_memory.daterange.period_bound`), ``platform`` (a client's name or short name,
resolved by :func:`agents_memory.adapters.platform_filter`). The older spellings ``p_tag``,
``date_range`` and ``agent_platform`` are still accepted (:meth:`SearchRequest.build`), for one
release. Kept free of heavy imports (no database driver, no numpy): the command builds it
before it knows whether the daemon answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any, Literal

from agents_memory.adapters import platform_filter
from agents_memory.daterange import DateRange, period_bound, split_period
from agents_memory.errors import AdapterError, SearchArgumentError
from agents_memory.store.search.action_text import ACTION_KINDS
from agents_memory.store.search.fusion import MAX_PHRASINGS
from agents_memory.store.search.types import MAX_LIMIT

DEFAULT_LIMIT = 10
MAX_FILE_CHARS = 1_000
"""The longest ``file`` filter (a path or a part of one) taken."""

OLD_NAMES = {"p_tag": "project", "date_range": "since", "agent_platform": "platform"}
"""Older argument names still accepted for one release -> the name that replaced them
(``date_range`` became the pair ``since`` / ``until``)."""


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A search as asked. Blank text is ``None``; ``platform`` is stored resolved (``claude``
    is ``claude-code``, ``*`` is every client: ``None``). Construction checks every field and
    raises :class:`SearchArgumentError` naming the argument; the dates and the project are
    read where the clock and the database are (:meth:`period`, the search itself)."""

    query: str | None = None
    project: str | None = None
    since: str | None = None
    until: str | None = None
    role: Literal["user", "assistant"] | None = None
    platform: str | None = None
    device_scope: Literal["global", "local"] = "global"
    limit: int = DEFAULT_LIMIT
    include_archived: bool = False
    as_of: str | None = None
    """See the pool as it was at the end of this date: what was said by then, archived and
    superseded values that were live then, without what had expired."""
    queries: tuple[str, ...] = ()
    """Other phrasings of the same question, searched too and fused into one ranking
    (:mod:`agents_memory.store.search.fusion`); with ``query``, at most
    :data:`~agents_memory.store.search.fusion.MAX_PHRASINGS` in all."""
    kind: str | None = None
    """Only turns that made an action of this kind (edit, write, read, shell, ...)."""
    file: str | None = None
    """Only turns that made an action on this path (a part of it, or a glob with ``*``)."""

    def __post_init__(self) -> None:
        for name in ("query", "project", "since", "until", "platform", "as_of", "kind", "file"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise SearchArgumentError(f"{name} must be text", argument=name, value=str(value))
            object.__setattr__(self, name, value.strip() or None if value else None)
        if self.role not in (None, "user", "assistant"):
            raise SearchArgumentError(
                f"role must be 'user' or 'assistant', got {self.role!r}", argument="role"
            )
        if self.device_scope not in ("global", "local"):
            raise SearchArgumentError(
                f"device_scope must be 'global' or 'local', got {self.device_scope!r}",
                argument="device_scope",
            )
        if isinstance(self.limit, bool) or not isinstance(self.limit, int):
            raise SearchArgumentError("limit must be a whole number", argument="limit")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise SearchArgumentError(
                f"limit must be between 1 and {MAX_LIMIT}, got {self.limit}", argument="limit"
            )
        if self.kind is not None and self.kind not in ACTION_KINDS:
            raise SearchArgumentError(
                f"kind must be one of {', '.join(ACTION_KINDS)}, got {self.kind!r}",
                argument="kind",
                value=self.kind,
            )
        if self.file is not None and len(self.file) > MAX_FILE_CHARS:
            raise SearchArgumentError(
                f"file is longer than {MAX_FILE_CHARS} characters", argument="file"
            )
        if not isinstance(self.include_archived, bool):
            raise SearchArgumentError("include_archived must be true or false")
        try:
            object.__setattr__(self, "platform", platform_filter(self.platform))
        except AdapterError as exc:
            raise SearchArgumentError(
                str(exc), argument="platform", value=self.platform or ""
            ) from exc
        self._check_queries()

    def _check_queries(self) -> None:
        queries: object = self.queries
        if not isinstance(queries, list | tuple) or not all(isinstance(q, str) for q in queries):
            raise SearchArgumentError("queries must be a list of texts", argument="queries")
        object.__setattr__(self, "queries", tuple(q.strip() for q in queries if q.strip()))
        if len(self.phrasings) > MAX_PHRASINGS:
            raise SearchArgumentError(
                f"at most {MAX_PHRASINGS} phrasings in all (query and queries),"
                f" got {len(self.phrasings)}",
                argument="queries",
            )

    @property
    def phrasings(self) -> tuple[str, ...]:
        """``query`` and ``queries``, each once, in that order (empty: list the newest)."""
        seen: dict[str, None] = {}
        for text in (self.query, *self.queries):
            if text and text.casefold() not in {s.casefold() for s in seen}:
                seen[text] = None
        return tuple(seen)

    @classmethod
    def build(
        cls,
        *,
        p_tag: str | None = None,
        date_range: str | None = None,
        agent_platform: str | None = None,
        **arguments: Any,
    ) -> SearchRequest:
        """The request for ``arguments`` (the field names) and the older spellings: ``p_tag``
        for ``project``, ``agent_platform`` for ``platform``, ``date_range`` for the pair
        ``since`` / ``until`` (``A..B`` is both ends). A new name wins over its old one."""
        if p_tag and not arguments.get("project"):
            arguments["project"] = p_tag
        if agent_platform and not arguments.get("platform"):
            arguments["platform"] = agent_platform
        if isinstance(date_range, str) and not (arguments.get("since") or arguments.get("until")):
            arguments["since"], arguments["until"] = split_period(date_range)
        unknown = set(arguments) - {f.name for f in fields(cls)}
        if unknown:
            raise SearchArgumentError(f"not search arguments: {', '.join(sorted(unknown))}")
        return cls(**arguments)

    def period(self, now: datetime) -> DateRange | None:
        """The period ``since`` / ``until`` name, relative to ``now`` (aware): ``since`` from
        the start of its period, ``until`` to the end of its (``--until 2026-02-15`` keeps that
        day). ``None`` without either; :class:`SearchArgumentError` naming the argument and
        the accepted forms for a date it cannot read or an empty period."""
        start = self._bound("since", now)
        end = self._bound("until", now)
        if start is None and end is None:
            return None
        try:
            return DateRange(start, end)
        except ValueError as exc:
            raise SearchArgumentError(str(exc), argument="until", value=self.until or "") from exc

    def moment(self, now: datetime) -> datetime | None:
        """The moment ``as_of`` names (the end of its period), relative to ``now``."""
        return self._bound("as_of", now)

    def _bound(self, name: str, now: datetime) -> datetime | None:
        text = getattr(self, name)
        if text is None:
            return None
        try:
            return period_bound(text, now, start=name == "since")
        except ValueError as exc:
            raise SearchArgumentError(str(exc), argument=name, value=text) from exc

    def to_wire(self) -> dict[str, Any]:
        """The request as JSON-ready data (the brief socket's ``search`` value); ``queries``
        only when there are some (a daemon of an older release refuses a name it lacks)."""
        data = asdict(self)
        data.pop("queries")
        if self.queries:
            data["queries"] = list(self.queries)
        return data

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> SearchRequest:
        """The request :meth:`to_wire` wrote (older names accepted); anything else raises
        :class:`SearchArgumentError`."""
        if not isinstance(data, Mapping):
            raise SearchArgumentError("a search request is an object of arguments")
        return cls.build(**{str(k): v for k, v in data.items()})
