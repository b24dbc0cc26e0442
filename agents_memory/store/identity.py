"""A row's identity: which stored row an incoming turn may replace.

A client's id for a message (``external_uuid``: Claude Code's ``message.id``, OpenCode's
message id, …) is unique only where the client makes it so. A proxy, a local model server or a
test backend can hand out ``msg_1`` in every session. So a stored row is *the same turn* as an
incoming one only when the key **and** the identity match: the same user, client
(``agent_platform``), session and role. The rules, applied in this order to each incoming row
with key ``K``:

=====================================================  =========================================
what the database (and the batch so far) holds         what happens to the incoming row
=====================================================  =========================================
a row ``K`` of the same identity                       upsert on ``K`` (a rewrite of the turn)
a row under the scoped key ``K~s<hash>`` (its          upsert on the scoped key
identity's own)
a row ``K`` of another identity, with the same         a *duplicate*: the same message written
client, role, text and time                            twice (a history replayed into another
                                                       file); not stored again
a row ``K`` of another identity, otherwise             a *collision*: stored under the scoped key,
                                                       counted and logged, the other row untouched
nothing                                                inserted under ``K``
=====================================================  =========================================

The scoped key is deterministic (a hash of client, session and role), so a rescan of the same
file finds the row it stored before and never doubles it. The upsert itself also refuses to
touch a row of another identity (:data:`SAME_IDENTITY`), so even a writer racing this lookup
can never rewrite a stranger's row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import Field, dataclass, replace
from datetime import datetime
from typing import Any, ClassVar, Final, Generic, Protocol, TypeVar

import psycopg

SCOPE_MARK: Final = "~s"
SCOPED_KEY_PATTERN: Final = r"~s[0-9a-f]{16}$"
"""A POSIX regular expression that matches the end of a scoped key (and nothing an adapter
makes)."""

SAME_IDENTITY: Final = (
    "memory.user_id = EXCLUDED.user_id AND memory.agent_platform = EXCLUDED.agent_platform"
    " AND memory.role = EXCLUDED.role"
    " AND memory.session_id IS NOT DISTINCT FROM EXCLUDED.session_id"
)
"""The guard of every upsert on ``memory``: a conflicting row is replaced only when it is the
same turn's (``memory`` the stored row, ``EXCLUDED`` the incoming one)."""


class _Row(Protocol):
    """What the rules read of a row to store (:class:`agents_memory.store.memories.NewMemory`)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def external_uuid(self) -> str | None: ...
    @property
    def agent_platform(self) -> str: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def role(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def message_at(self) -> datetime | None: ...


Row = TypeVar("Row", bound=_Row)


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a row belongs to, beyond its key."""

    user_id: int
    platform: str
    session_id: str | None
    role: str


def scoped_key(key: str, platform: str, session_id: str | None, role: str) -> str:
    """``key`` made unique to one client, session and role (for a key another turn holds)."""
    digest = hashlib.sha256(f"{platform}\0{session_id or ''}\0{role}".encode()).hexdigest()
    return f"{key}{SCOPE_MARK}{digest[:16]}"


@dataclass(frozen=True, slots=True)
class _Stored:
    identity: Identity
    message_md5: str
    message_at: datetime | None


@dataclass(frozen=True, slots=True)
class Resolved(Generic[Row]):
    """A batch with every key settled: ``rows`` to upsert (one per key), and what was set
    aside."""

    rows: list[Row]
    collisions: int = 0
    """Rows whose key another identity holds, stored under their scoped key."""
    duplicates: int = 0
    """Rows that another identity already holds with the same text and time."""


def resolve(conn: psycopg.Connection[Any], user_id: int, rows: Sequence[Row]) -> Resolved[Row]:
    """``rows`` with their keys settled by the rules above (one indexed query for the batch).

    Within the batch the last row of an identity and key wins (a turn streamed in several
    snapshots); rows without a key are always new."""
    latest: dict[tuple[str, Identity], Row] = {}
    loose: list[Row] = []
    for row in rows:
        if row.external_uuid is None:
            loose.append(row)
            continue
        slot = (row.external_uuid, _identity(user_id, row))
        latest.pop(slot, None)
        latest[slot] = row
    if not latest:
        return Resolved(loose)
    wanted = {key for key, _who in latest} | {_scoped(key, who) for key, who in latest}
    stored = _stored(conn, sorted(wanted))
    out: list[Row] = []
    collisions = duplicates = 0
    for (key, who), row in latest.items():
        scoped = _scoped(key, who)
        owner = stored.get(key)
        mine = owner.identity == who if owner is not None else scoped not in stored
        if mine:
            chosen = key
        elif scoped in stored:
            chosen = scoped
        elif owner is not None and _same_message(owner, row, who):
            duplicates += 1
            continue
        else:
            chosen = scoped
            collisions += 1
        # Later rows of the batch see this one as stored (two identities sharing a new key).
        stored.setdefault(chosen, _Stored(who, _md5(row.message), row.message_at))
        out.append(row if chosen == key else replace(row, external_uuid=chosen))
    return Resolved([*out, *loose], collisions, duplicates)


def _identity(user_id: int, row: _Row) -> Identity:
    return Identity(user_id, row.agent_platform, row.session_id, row.role)


def _scoped(key: str, who: Identity) -> str:
    return scoped_key(key, who.platform, who.session_id, who.role)


def _same_message(owner: _Stored, row: _Row, who: Identity) -> bool:
    """The stored row is this very message, written again in another file: same user, client,
    role, text and time."""
    mine = owner.identity
    return (
        (mine.user_id, mine.platform, mine.role) == (who.user_id, who.platform, who.role)
        and owner.message_md5 == _md5(row.message)
        and owner.message_at is not None
        and row.message_at is not None
        and owner.message_at == _aware(row.message_at)
    )


def _md5(text: str) -> str:
    """The hex MD5 of ``text`` as PostgreSQL's ``md5(text)`` computes it (UTF-8 bytes); only
    a comparison, so the batch's keys never ship their stored texts back."""
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.astimezone()


def _stored(conn: psycopg.Connection[Any], keys: list[str]) -> dict[str, _Stored]:
    found: dict[str, _Stored] = {}
    for key, user_id, platform, session_id, role, digest, at in conn.execute(
        "SELECT external_uuid, user_id, agent_platform, session_id, role, md5(message), message_at"
        " FROM memory WHERE external_uuid = ANY(%s)",
        (keys,),
    ):
        found[key] = _Stored(Identity(user_id, platform, session_id, role), digest, at)
    return found
