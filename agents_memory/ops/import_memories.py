"""A bundle's memory rows, each decided: imported, present, or refused with its reason.

A row's identity is its key **and** the turn it names: platform, session and role. For each
row, the key is looked up in the pool and among the bundle's earlier rows:

* nothing holds it: **imported** under its key;
* a row of the same platform, session and role with the same text: **present**;
* the same with other text: **refused**; a stored row is a *conflict* (this pool's text stays:
  an import never overwrites), an earlier row of the bundle is named by its line;
* a row of **another** session, role or client: that is another turn whose client reused the
  id. It is never replaced and the bundle's row is not lost: it is **imported under a scoped
  key** (:func:`scoped_key`: the key, ``~s`` and a digest of platform, session and role), the
  same on every import, so a second import finds it present. The report notes each one.

A row whose user neither this pool nor the bundle's ``users.jsonl`` has is refused (``unknown
user``), as is a row admission refuses (private, excluded, …) and a key over
:data:`MAX_KEY` characters. Rows are decided and written a batch at a time (:data:`BATCH`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

import psycopg

from agents_memory.admission.admit import Admission, Refused
from agents_memory.gitinfo import GitInfo
from agents_memory.ops import import_report as why
from agents_memory.ops.import_report import ImportReport
from agents_memory.ops.import_rows import memory_problem, vector_problem
from agents_memory.store import identity
from agents_memory.store.owner import bundle_import as store
from agents_memory.store.owner.bundle_import import ImportedMemory, StoredTurn

BATCH: Final = 5000
MAX_KEY: Final = 1000
MEMBER: Final = "memory"


def scoped_key(key: str, platform: str | None, session: str | None, role: str | None) -> str:
    """The key a row is stored under when its own key holds another session's turn: the one
    rule capture uses (:func:`agents_memory.store.identity.scoped_key`)."""
    return identity.scoped_key(key, platform or "", session, role or "")


@dataclass(frozen=True, slots=True)
class _Row:
    line: int
    memory: ImportedMemory

    @property
    def ident(self) -> tuple[Any, Any, Any]:
        v = self.memory.values
        return (v.get("agent_platform"), v.get("session_id"), v.get("role"))

    def scoped(self) -> str:
        return scoped_key(self.memory.external_uuid, *self.ident)


class MemoryMerge:
    """The memory member's rows, in bundle order, into the pool (one import's transaction)."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        report: ImportReport,
        admission: Admission,
        *,
        vectors: bool,
        dim: int | None,
    ) -> None:
        self.conn = conn
        self.report = report
        self.tally = report.tally(MEMBER)
        self.admission = admission
        self.vectors = vectors
        self.dim = dim
        self.users = store.user_names(conn)
        self.devices = store.device_names(conn)
        self.batch: list[_Row] = []
        self.later: list[_Row] = []
        """Superseded slot values: imported last, so their successors are in."""
        self.vectors_written = 0

    def add(self, line: int, row: dict[str, Any], vector: dict[str, Any] | None) -> None:
        """One bundle row: refused now, or queued for the batch's decision."""
        self.tally.rows += 1
        problem = memory_problem(row)
        if problem is not None:
            self._refuse(line, why.MALFORMED, f"{problem} (not a row an export writes)")
            return
        key, user = row["external_uuid"], row["user_name"]
        if user not in self.users:
            self._refuse(line, why.UNKNOWN_USER, f"unknown user {user!r} (key {key!r})")
            return
        if len(key) > MAX_KEY:
            self._refuse(line, why.KEY_TOO_LONG, f"a key of {len(key)} characters (over {MAX_KEY})")
            return
        git = GitInfo(row.get("git_root"), row.get("git_remote"))
        result = self.admission.imported(
            row["message"], raw=row.get("raw_message"), cwd=row.get("cwd"), git=git, key=key
        )
        if isinstance(result, Refused):
            self._refuse(
                line, result.reason, f"refused by admission: {result.reason} (key {key!r})"
            )
            return
        if vector is not None and (bad := vector_problem(vector, self.dim)) is not None:
            text = f"the vector of {key!r} is left out ({bad}); the Cold Path embeds the turn"
            self.report.note(MEMBER, line, text)
            vector = None
        values = {k: v for k, v in row.items() if k not in ("message", "raw_message")}
        values["source"] = row.get("source") or "import"
        memory = ImportedMemory(
            external_uuid=key,
            user_name=user,
            message=result.text,
            raw_message=result.raw,
            values=values,
            embedding=vector["embedding"] if vector else None,
            embedding_model=vector["model"] if vector else None,
        )
        if values.get("superseded_by") is not None:
            self.later.append(_Row(line, memory))  # after its successor (:meth:`link_history`)
            return
        self.batch.append(_Row(line, memory))
        if len(self.batch) >= BATCH:
            self.flush()

    def _refuse(self, line: int, reason: str, detail: str) -> None:
        self.report.refuse(MEMBER, line, reason, detail)

    def flush(self) -> None:
        """Decide the queued rows and write the imported ones."""
        rows, self.batch = self.batch, []
        if not rows:
            return
        stored = store.stored_turns(self.conn, [r.memory.external_uuid for r in rows])
        idents: dict[str, set[tuple[Any, Any, Any]]] = {}
        for r in rows:
            idents.setdefault(r.memory.external_uuid, set()).add(r.ident)
        strangers = [r.scoped() for r in rows if _stranger(r, stored, idents)]
        if strangers:  # rows whose key holds another session's turn: their scoped keys too
            stored.update(store.stored_turns(self.conn, strangers))
        pending: dict[str, StoredTurn] = {}
        accepted: list[tuple[_Row, str]] = []
        remembered: list[tuple[str, str, int, bool]] = []
        for row in rows:
            key = self._decide(row, pending, stored)
            if key is None:
                continue
            if key in pending or key in stored:
                self.tally.present += 1
                remembered.append((row.memory.external_uuid, key, row.line, False))
                continue
            platform, session, role = row.ident
            pending[key] = StoredTurn(platform, session, role, row.memory.message, row.line)
            accepted.append((row, key))
        inserted = store.insert_memories(
            self.conn,
            [replace(row.memory, external_uuid=key) for row, key in accepted],
            vectors=self.vectors,
        )
        for row, key in accepted:
            if key not in inserted:
                detail = f"key {key!r} was stored meanwhile by another writer (that row is kept)"
                self._refuse(row.line, why.RACED, detail)
                continue
            self.tally.new += 1
            self.vectors_written += row.memory.embedding is not None
            remembered.append((row.memory.external_uuid, key, row.line, True))
            device = row.memory.values.get("device_name")
            if device is not None and device not in self.devices:
                self.report.new_device(str(device))
        store.remember_keys(self.conn, remembered)
        lines = {key: row.line for row, key in accepted}
        for key, slot in store.slot_clashes(self.conn):
            text = f"slot {slot!r}: this pool fills it with another live value, which stays;"
            self.report.note(MEMBER, lines.get(key, 0), f"{text} {key!r} came in without it")

        for key, successor in store.lost_successors(self.conn, list(lines)):
            text = f"{key!r} was superseded by {successor!r}, which neither pool nor bundle has"
            self.report.note(MEMBER, lines[key], text)

    def link_history(self) -> None:
        """Once every other row is in: the superseded slot values, newest first, each
        pointing at its successor (imported just before it, or stored here)."""
        for row in reversed(self.later):
            self.batch = [row]
            self.flush()
        self.later = []

    def _decide(
        self, row: _Row, pending: dict[str, StoredTurn], stored: dict[str, StoredTurn]
    ) -> str | None:
        """The key ``row`` is imported or present under (present when a row holds it), or
        ``None`` when it is refused (counted and listed here)."""
        bundle_key = row.memory.external_uuid
        for attempt in range(2):
            key = row.scoped() if attempt else bundle_key
            other = pending.get(key) or stored.get(key)
            if other is None:
                if key != bundle_key:
                    holder = pending.get(bundle_key) or stored.get(bundle_key)
                    self.report.note(
                        MEMBER,
                        row.line,
                        f"key {bundle_key!r} holds a turn of another session, role or client"
                        f"{_where(holder)}; imported under {key!r} (neither row replaced)",
                    )
                return key
            if (other.agent_platform, other.session_id, other.role) != row.ident:
                continue
            if other.message == row.memory.message:
                return key
            if other.line is not None:
                detail = (
                    f"same key {bundle_key!r} as line {other.line} of this bundle, with"
                    " different text (the first is kept)"
                )
                self._refuse(row.line, why.DUPLICATE, detail)
            else:
                detail = (
                    f"same key {bundle_key!r} as a stored row with different text (this pool's"
                    " text kept)"
                )
                self._refuse(row.line, why.CONFLICT, detail)
            return None
        detail = f"key {bundle_key!r} and its scoped key both hold turns of other sessions"
        self._refuse(row.line, why.CONFLICT, detail)
        return None


def _stranger(
    row: _Row, stored: dict[str, StoredTurn], idents: dict[str, set[tuple[Any, Any, Any]]]
) -> bool:
    """Whether ``row``'s key may hold a turn of another session, role or client: a stored one,
    or another row of the batch."""
    key = row.memory.external_uuid
    other = stored.get(key)
    if other is not None and (other.agent_platform, other.session_id, other.role) != row.ident:
        return True
    return len(idents[key]) > 1


def _where(other: StoredTurn | None) -> str:
    if other is None or other.line is None:
        return " stored here"
    return f" (line {other.line} of this bundle)"
