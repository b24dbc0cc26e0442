"""What a bundle import did, row by row: every row of every member is **new** (imported),
**present** (this pool already holds it) or **refused** with its reason, so per table
``new + present + refused == rows``. Besides the counts the report lists what an owner would
not expect a bundle to do quietly: new users, memories on devices this pool has not seen,
profile fields filled from the bundle, and rows stored under another key than the bundle's.

The CLI prints :meth:`ImportReport.lines` (or :meth:`ImportReport.as_dict` with ``--json``);
the console's import page renders the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

SHOWN: Final = 20
"""Refusals and notes listed one by one (the rest are counted)."""
DEVICES_SHOWN: Final = 100

CONFLICT: Final = "conflict"
"""Same key (or user) as a stored row with other text: this pool's text stays."""
DUPLICATE: Final = "same key, other text"
"""Same key as an earlier row of the bundle, of the same session, with other text."""
UNKNOWN_USER: Final = "unknown user"
UNKNOWN_TAG: Final = "unknown project"
UNKNOWN_MEMORY: Final = "unknown memory"
UNKNOWN_PIN: Final = "unknown pin"
"""A task pin's update whose pin (its create event) is in neither pool nor bundle."""
NO_TARGET: Final = "no project or topic"
UNKNOWN_SESSION: Final = "unknown session"
"""An action without a turn whose session has no turn in this pool (nor in the bundle)."""
FORGOTTEN: Final = "forgotten"
"""An action this pool forgot (it has an action tombstone)."""
DUPLICATE_NAME: Final = "same name, other content"
KEY_TOO_LONG: Final = "key too long"
RACED: Final = "stored meanwhile"
MALFORMED: Final = "malformed"
"""A row not of the shape an export writes (:mod:`agents_memory.ops.import_rows`)."""


@dataclass(slots=True)
class Tally:
    """One member's rows: each counted exactly once."""

    rows: int = 0
    new: int = 0
    present: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    """By reason: :data:`CONFLICT`, :data:`UNKNOWN_USER`, an admission reason (``excluded``,
    ``private-only``, …), …"""

    @property
    def conflicts(self) -> int:
        return self.refused.get(CONFLICT, 0)

    @property
    def refused_total(self) -> int:
        return sum(self.refused.values())

    def summary(self) -> str:
        text = f"{self.rows} rows: {self.new} new, {self.present} already present"
        if self.refused:
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.refused.items()))
            text += f", {self.refused_total} refused ({reasons})"
        return text


@dataclass(slots=True)
class ImportReport:
    path: Path
    dry_run: bool
    tables: dict[str, Tally] = field(default_factory=dict)
    refusals: list[str] = field(default_factory=list)
    """The first :data:`SHOWN` refused rows: member, line and reason."""
    notes: list[str] = field(default_factory=list)
    """The first :data:`SHOWN` rows imported otherwise than the bundle has them (another
    key; an alias left unset)."""
    new_users: list[str] = field(default_factory=list)
    new_devices: dict[str, int] = field(default_factory=dict)
    """Device names no memory of this pool carried: memories imported on each."""
    profile_changes: list[str] = field(default_factory=list)
    left_off: dict[str, int] = field(default_factory=dict)
    """Of each list above, how many were not listed."""
    vectors_kept: bool = False
    reembed: int = 0
    """New memories left without a vector for the Cold Path to embed."""
    seconds: float = 0.0

    @property
    def conflicts(self) -> int:
        return sum(t.conflicts for t in self.tables.values())

    @property
    def refused(self) -> dict[str, int]:
        """Refused rows of every member, by reason."""
        total: dict[str, int] = {}
        for tally in self.tables.values():
            for reason, n in tally.refused.items():
                total[reason] = total.get(reason, 0) + n
        return total

    def tally(self, table: str) -> Tally:
        return self.tables.setdefault(table, Tally())

    def refuse(self, table: str, line: int, reason: str, detail: str) -> None:
        """Count a refused row of ``table`` (its ``line`` in the member) and list it."""
        refused = self.tally(table).refused
        refused[reason] = refused.get(reason, 0) + 1
        self._list(self.refusals, "refusals", f"{table}.jsonl line {line}: {detail}")

    def note(self, table: str, line: int, text: str) -> None:
        self._list(self.notes, "notes", f"{table}.jsonl line {line}: {text}")

    def new_user(self, text: str) -> None:
        self._list(self.new_users, "new_users", text)

    def profile_change(self, text: str) -> None:
        self._list(self.profile_changes, "profile_changes", text)

    def new_device(self, name: str) -> None:
        if name in self.new_devices or len(self.new_devices) < DEVICES_SHOWN:
            self.new_devices[name] = self.new_devices.get(name, 0) + 1
        else:
            self.left_off["new_devices"] = self.left_off.get("new_devices", 0) + 1

    def _list(self, items: list[str], name: str, text: str) -> None:
        if len(items) < SHOWN:
            items.append(text)
        else:
            self.left_off[name] = self.left_off.get(name, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON values."""
        return {
            "bundle": str(self.path),
            "dry_run": self.dry_run,
            "tables": {
                t: {"rows": c.rows, "new": c.new, "present": c.present, "refused": c.refused}
                for t, c in self.tables.items()
            },
            "new_users": self.new_users,
            "new_devices": self.new_devices,
            "profile_changes": self.profile_changes,
            "refusals": self.refusals,
            "notes": self.notes,
            "left_off": self.left_off,
            "vectors_kept": self.vectors_kept,
            "reembed": self.reembed,
            "seconds": round(self.seconds, 3),
        }

    def lines(self) -> list[str]:
        """The report as the CLI prints it (after its first line)."""
        width = max((len(t) for t in self.tables), default=0)
        out = [f"  {table:<{width}}  {tally.summary()}" for table, tally in self.tables.items()]
        out += [f"  new user: {u}" for u in self.new_users]
        out += [f"  new device: {d} ({n} memories)" for d, n in self.new_devices.items()]
        out += [f"  profile: {p}" for p in self.profile_changes]
        out += [f"  refused {r}" for r in self.refusals]
        out += [f"  note: {n}" for n in self.notes]
        out += [
            f"  ({n} more {what.replace('_', ' ')} not listed)" for what, n in self.left_off.items()
        ]
        vectors = "kept from the bundle" if self.vectors_kept else "none from the bundle"
        out.append(f"  vectors: {vectors}; {self.reembed} memories queued for embedding")
        return out
