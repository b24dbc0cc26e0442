"""A bundle's actions (the agents' tool calls), each decided: imported, present, or refused
with its reason.

An action is identified by ``(user, platform, session, key)``; a client's tool-call id is
unique only within a session, so an action of another session with the same key is another
action and both are kept. For each row:

* its identity is free here: **imported**, its command, targets and excerpt through admission
  (private spans, redaction) like an imported turn's text, linked to its turn by the bundle's
  key for that turn (remapped like every memory key);
* an action holds its identity with the same values (``COMPARED`` of
  :mod:`agents_memory.store.owner.bundle_actions`, after admission): **present**; with other
  values: **refused**, a *conflict* (this pool's action stays: an import never replaces one)
  or, when an earlier row of this bundle holds it, *same key, other text*;
* refused too: its user unknown, its turn named but not in the pool after the memories were
  imported (refused by admission, say: the action goes with its turn), no turn of its session
  here for an action without a turn (``unknown session``: an excluded project's actions stay
  out), an action this pool forgot (``forgotten``: it has a tombstone), a row not of the shape
  an export writes (``malformed``) or that the database refuses.

Rows are decided a batch at a time (:data:`BATCH`): one query looks them all up, one statement
inserts the new ones (row by row, each in a savepoint, when the database refuses the batch).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import psycopg

from agents_memory.admission.admit import Admission
from agents_memory.ops import bundle_format as fmt
from agents_memory.ops import import_report as why
from agents_memory.ops.import_report import ImportReport
from agents_memory.ops.import_rows import action_problem
from agents_memory.store.owner import bundle_actions as store
from agents_memory.store.owner.bundle_import import RowRefused, guarded

MEMBER: Final = "actions"
BATCH: Final = 1000
"""Rows decided with one query and inserted with one statement."""


class ActionMerge:
    """The actions member's rows into the pool (one import's transaction)."""

    def __init__(
        self, conn: psycopg.Connection[Any], report: ImportReport, admission: Admission
    ) -> None:
        self.conn = conn
        self.report = report
        self.tally = report.tally(MEMBER)
        self.admission = admission
        self.seen: dict[tuple[Any, ...], int] = {}
        """The identities this import inserted, with their bundle line."""
        self.batch: list[tuple[int, dict[str, Any]]] = []

    def rows(
        self, rows: Iterable[tuple[int, Any]], progress: fmt.Progress | None, total: int
    ) -> None:
        for line, row in rows:
            self.tally.rows += 1
            self.add(line, row)
            if len(self.batch) >= BATCH:
                self.flush()
            if progress is not None and self.tally.rows % BATCH == 0:
                progress(MEMBER, self.tally.rows, total)
        self.flush()
        if progress is not None:
            progress(MEMBER, self.tally.rows, total)

    def add(self, line: int, found: Any) -> None:
        """One bundle row: refused now, or admitted and queued for the batch's decision."""
        problem = action_problem(found)
        if problem is not None:
            self._refuse(line, why.MALFORMED, f"{problem} (not a row an export writes)")
            return
        row: dict[str, Any] = dict(found)
        admitted = self.admission.imported_action(
            row.get("targets") or (), row.get("command"), row.get("excerpt")
        )
        row.update(
            targets=list(admitted.targets) or None,
            command=admitted.command,
            excerpt=admitted.excerpt,
        )
        self.batch.append((line, row))

    def flush(self) -> None:
        """Decide the queued rows (one query) and insert the new ones (one statement; row by
        row, each in its savepoint, when the database refuses the batch)."""
        batch, self.batch = self.batch, []
        if not batch:
            return
        places = store.place_actions(self.conn, [row for _line, row in batch])
        pending: dict[tuple[Any, ...], tuple[int, dict[str, Any]]] = {}
        for (line, row), place in zip(batch, places, strict=True):
            name = _name(row)
            refusal = self._refusal(row, place, name)
            if refusal is not None:
                self._refuse(line, *refusal)
            elif place.stored is not None:
                self._compare(line, row, place.stored, name)
            elif (earlier := pending.get(_identity(row))) is not None:
                self.seen[_identity(row)] = earlier[0]
                self._compare(line, row, earlier[1], name)
            else:
                values = {**row, "user_id": place.user_id, "memory_id": place.turn_id}
                pending[_identity(row)] = (line, values)
        try:
            inserted = guarded(
                self.conn,
                lambda: store.insert_actions(self.conn, [v for _n, v in pending.values()]),
            )
        except RowRefused:
            inserted = None
        for line, values in pending.values():
            if inserted is None:
                self._insert_one(line, values)
            elif (values["agent_platform"], values.get("session_id"), values["external_key"]) in (
                inserted
            ):
                self.tally.new += 1
                self.seen[_identity(values)] = line
            else:
                self._refuse(line, why.RACED, f"{_name(values)} was stored meanwhile elsewhere")

    def _insert_one(self, line: int, values: dict[str, Any]) -> None:
        values = {"created_at": None, **values}
        try:
            inserted = guarded(self.conn, lambda: store.insert_action(self.conn, values))
        except RowRefused as exc:
            self._refuse(line, why.MALFORMED, f"{_name(values)}: {exc}")
            return
        if not inserted:
            self._refuse(line, why.RACED, f"{_name(values)} was stored meanwhile elsewhere")
            return
        self.tally.new += 1
        self.seen[_identity(values)] = line

    def _refusal(
        self, row: dict[str, Any], place: store.ActionPlace, name: str
    ) -> tuple[str, str] | None:
        """Why ``row`` cannot come in (reason, detail), or ``None``."""
        if place.user_id is None:
            return why.UNKNOWN_USER, f"unknown user {row['user_name']!r} ({name})"
        if row.get("turn") is not None and place.turn_id is None:
            detail = f"{name}: its turn {row['turn']!r} is in neither pool nor bundle"
            return why.UNKNOWN_MEMORY, detail
        if row.get("turn") is None and not place.session_known:
            return why.UNKNOWN_SESSION, f"{name}: no turn of its session is in this pool"
        if place.buried and place.stored is None:
            return why.FORGOTTEN, f"{name} was forgotten here (it has a tombstone)"
        return None

    def _compare(self, line: int, row: dict[str, Any], stored: dict[str, Any], name: str) -> None:
        if all(row.get(c) == stored.get(c) for c in store.COMPARED):
            self.tally.present += 1
            return
        earlier = self.seen.get(_identity(row))
        if earlier is not None:
            detail = f"{name}: the same action as line {earlier} of this bundle, done otherwise"
            self._refuse(line, why.DUPLICATE, detail + " (the first is kept)")
        else:
            detail = f"{name}: a stored action with other values (this pool's action kept)"
            self._refuse(line, why.CONFLICT, detail)

    def _refuse(self, line: int, reason: str, detail: str) -> None:
        self.report.refuse(MEMBER, line, reason, detail)


def _name(row: dict[str, Any]) -> str:
    return f"action {row['external_key']!r} of session {row.get('session_id')!r}"


def _identity(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["user_name"], row["agent_platform"], row.get("session_id"), row["external_key"])
