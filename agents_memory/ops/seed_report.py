"""What a seed import did: counts per kind of thing, refusals, conflicts, and what the source
held that has no equivalent here (reported, never dropped silently)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal

CONFLICTS_SHOWN: Final = 20
MEMORY_KINDS: Final = frozenset({"memories", "facts", "prompts", "observations"})
"""The tallies that count memory rows (the others: profiles, tags, suggestions, summaries)."""


@dataclass(slots=True)
class Tally:
    new: int = 0
    present: int = 0
    """Already here with the same content (a second import finds everything present)."""
    conflicts: int = 0
    """Here with other content: left as this pool has it."""


@dataclass(slots=True)
class ImportReport:
    source: Literal["seed-a", "seed-b", "claude-mem"]
    location: str
    dry_run: bool
    tallies: dict[str, Tally] = field(default_factory=dict)
    refused: Counter[str] = field(default_factory=Counter)
    """Memories admission refused, by reason (``private-only``, ``echo``, ``empty``)."""
    conflict_notes: list[str] = field(default_factory=list)
    unmapped: dict[str, str] = field(default_factory=dict)
    """What the source holds that has no equivalent here: its name → a count and why."""
    renamed: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Platform names given in ours: (source name, ours) → rows."""
    notes: list[str] = field(default_factory=list)
    captured: int = 0
    """Memories capture already stored from their transcripts (same session, role and text):
    not imported again."""
    vectors_kept: int = 0
    reembed: int = 0
    """New memories without a vector, for the Cold Path to embed."""
    seconds: float = 0.0

    def tally(self, kind: str) -> Tally:
        return self.tallies.setdefault(kind, Tally())

    def conflict(self, kind: str, note: str) -> None:
        self.tally(kind).conflicts += 1
        if len(self.conflict_notes) < CONFLICTS_SHOWN:
            self.conflict_notes.append(note)

    def no_equivalent(self, name: str, count: int, why: str) -> None:
        if count:
            self.unmapped[name] = f"{count} ({why})"

    @property
    def new_memories(self) -> int:
        """New memory rows of every kind (the Cold Path is woken for them)."""
        return sum(t.new for kind, t in self.tallies.items() if kind in MEMORY_KINDS)

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON values."""
        data = asdict(self)
        data["renamed"] = [
            {"source": theirs, "here": ours, "rows": n}
            for (theirs, ours), n in sorted(self.renamed.items())
        ]
        data["refused"] = dict(self.refused)
        return data

    def lines(self) -> list[str]:
        """The report as the CLI prints it."""
        verb = "would import" if self.dry_run else "imported"
        out = [f"{verb} from {self.source} {self.location} in {self.seconds:.1f} s"]
        for kind, t in self.tallies.items():
            extra = f", {t.conflicts} conflicting (left as they are here)" if t.conflicts else ""
            out.append(f"  {kind}: {t.new} new, {t.present} already here{extra}")
        if self.captured:
            out.append(
                f"  {self.captured} memories already captured from their transcripts"
                " (same session, role and text): not imported again"
            )
        if self.refused:
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.refused.items()))
            out.append(f"  refused by admission: {reasons}")
        for (theirs, ours), n in sorted(self.renamed.items()):
            out.append(f"  platform {theirs} is {ours} here ({n} rows)")
        out.append(
            f"  vectors: {self.vectors_kept} kept; {self.reembed} new memories to embed"
            " (the Cold Path does it)"
        )
        out.extend(f"  conflict: {note}" for note in self.conflict_notes)
        if self.unmapped:
            out.append("  no equivalent here (not imported):")
            out.extend(f"    {name}: {why}" for name, why in self.unmapped.items())
        out.extend(f"  note: {note}" for note in self.notes)
        if self.dry_run:
            out.append("dry run: nothing was written")
        return out
