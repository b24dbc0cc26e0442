"""Seed A's task pins into this pool's task pin log (``task_pin_events``).

The JS original kept a pin as ``entry_type='task'`` memory rows, append-only: the first line of
a row's message is a JSON header (who it is for, its status, the pin an update belongs to),
the rest its text. A row that names no pin creates one (that row's id is the pin); a row that
names one appends an update to it. The header's names are read leniently (``to`` or
``to_agent``, ``pin`` or ``pin_id``, ``action`` or ``event``, …); a row whose first line is no
JSON object is a pin of its whole text with no recipient (``to`` = ``unknown``), counted in
the report. Titles and notes go through admission (redaction). Idempotent: a pin is found
again by its key (:data:`~agents_memory.store.owner.bundle.PIN_KEY_SQL`), an update by its
time, status and note.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Final

import psycopg

from agents_memory.admission.admit import Admission, Refused
from agents_memory.ops.seed_map import platform_name
from agents_memory.ops.seed_report import ImportReport
from agents_memory.store.owner import bundle_extra
from agents_memory.store.seeds.seed_a import SeedAMemory

STATUSES: Final = ("pending", "in_progress", "done", "failed")
NO_RECIPIENT: Final = "unknown"
MAX_TITLE: Final = 300
KIND: Final = "task pins"


@dataclass(frozen=True, slots=True)
class SeedPinEvent:
    """One seed A task row read as a pin event (``pin``: the seed id of its pin)."""

    seed_id: int
    pin: int
    event: str
    status: str
    title: str
    note: str | None
    from_agent: str | None
    to_agent: str
    project: str | None
    payload: Any
    headed: bool
    """Whether the row had a JSON header (else it is a pin of its whole text)."""


def _text(header: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = header.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def read_pin_row(row: SeedAMemory) -> SeedPinEvent:
    """A seed A task row as a pin event."""
    first, _nl, body = row.message.partition("\n")
    try:
        header = json.loads(first)
    except ValueError:
        header = None
    if not isinstance(header, dict):
        header, body = {}, row.message
    text = body.strip() or None
    named = header.get("pin", header.get("pin_id"))
    pin = named if isinstance(named, int) and named != row.id else None
    event = "update" if pin is not None else "create"
    status = _text(header, "status")
    title = _text(header, "title") or (text or "").split("\n", 1)[0] or "(untitled)"
    return SeedPinEvent(
        seed_id=row.id,
        pin=pin if pin is not None else row.id,
        event=event,
        status=status if status in STATUSES else "pending",
        title=title[:MAX_TITLE],
        note=_text(header, "note") or (text if event == "update" or header.get("title") else None),
        from_agent=_text(header, "from", "from_agent", "by") or platform_name(row.agent_platform),
        to_agent=_text(header, "to", "to_agent") or NO_RECIPIENT,
        project=_text(header, "project", "p_tag"),
        payload=header.get("payload"),
        headed=bool(header),
    )


class SeedPins:
    """The task rows of one seed A import, kept as they are read and written at the end
    (creates before the updates that name them)."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, SeedAMemory]] = []

    def add(self, user_id: int, row: SeedAMemory) -> None:
        """A task row of seed A, to be written for this pool's user ``user_id``."""
        self.rows.append((user_id, row))

    def write(
        self, conn: psycopg.Connection[Any], admission: Admission, report: ImportReport
    ) -> None:
        tally = report.tally(KIND)
        events = sorted(((u, read_pin_row(r), r) for u, r in self.rows), key=lambda e: e[1].seed_id)
        keys: dict[int, str] = {}
        pins: dict[int, SeedPinEvent] = {}
        orphans = unheaded = 0
        for user, event, row in sorted(events, key=lambda e: e[1].event != "create"):
            texts = _admitted(admission, event, report)
            if texts is None:
                continue
            title, note = texts
            if event.event == "create":
                keys[event.pin] = bundle_extra.pin_key(conn, row.created_at, event.to_agent, title)
                pins[event.pin] = replace(event, title=title)
            key, pin = keys.get(event.pin), pins.get(event.pin)
            if key is None or pin is None:
                orphans += 1
                continue
            unheaded += not event.headed
            values = {
                "user_name": bundle_extra.user_name(conn, user),
                "pin": key,
                "event": event.event,
                "status": event.status,
                "title": pin.title,  # an update carries its pin's title, recipient, project
                "note": note,
                "from_agent": event.from_agent,
                "to_agent": pin.to_agent,
                "project": pin.project,
                "payload": pin.payload,
                "device_name": row.device_name,
                "created_at": row.created_at,
            }
            if bundle_extra.insert_row(conn, "task_pins", values):
                tally.new += 1
            else:
                tally.present += 1
        if orphans:
            report.no_equivalent(
                "task pin updates without their pin",
                orphans,
                "the pin they update is not in seed A",
            )
        if unheaded:
            report.notes.append(
                f"{unheaded} seed A task row(s) had no JSON header: each came in as a pending pin"
                f" of its text, to {NO_RECIPIENT!r}"
            )


def _admitted(
    admission: Admission, event: SeedPinEvent, report: ImportReport
) -> tuple[str, str | None] | None:
    out: list[str | None] = []
    for text in (event.title, event.note):
        if text is None:
            out.append(None)
            continue
        verdict = admission.edited_text(text)
        if isinstance(verdict, Refused):
            report.refused[verdict.reason] += 1
            return None
        out.append(verdict.text)
    title = out[0] or "(untitled)"
    return title, out[1]
