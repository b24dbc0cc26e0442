"""The bundle's file format, shared by export and import: member names, the manifest, and one
JSON line per row written the same way every time (sorted keys, UTC times, no spaces), so two
exports of the same pool are byte-identical member by member.

A bundle is one zip file::

    manifest.json            product and schema version, embedding model and dimension,
                             filters, row counts and the sha256 of every member
    users.jsonl              user names and profiles
    profile_history.jsonl    every profile change
    project_tags.jsonl       project tags (aliases by name; registry kind, paused, description)
    memory.jsonl             every memory, every column that carries meaning (a fact's slot,
                             expiry, and the key of the value that superseded it)
    memory_history.jsonl     edits (the memory by its key)
    tag_summaries.jsonl      Clusterer summaries (their sources by key)
    alias_suggestions.jsonl  tag alias suggestions (tags by name, evidence by key)
    new_tag_suggestions.jsonl
    actions.jsonl            the agents' tool calls (their turn by key); a bundle written
                             before actions were kept has none (:data:`OPTIONAL`)
    task_pins.jsonl          every task pin event (the pin by a key of its create event)
    tombstones.jsonl         what the owner forgot: keys and text hashes, never text
    action_tombstones.jsonl  the forgotten tool calls' identities
    vectors.jsonl            only with ``--vectors``: key, model, vector (same order as memory)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

FORMAT: Final = 1
PRODUCT: Final = "mcp-agents-memory"
MANIFEST: Final = "manifest.json"

TABLES: Final = (
    "users",
    "profile_history",
    "project_tags",
    "memory",
    "memory_history",
    "tag_summaries",
    "alias_suggestions",
    "new_tag_suggestions",
    "actions",
    "task_pins",
    "tombstones",
    "action_tombstones",
)
"""The data members, in the order an import needs them (names before what refers to them)."""
OPTIONAL: Final = frozenset({"actions", "task_pins", "tombstones", "action_tombstones"})
"""Members added after format 1 was first written: a bundle without them still imports."""
VECTORS: Final = "vectors"

ZIP_TIME: Final = (1980, 1, 1, 0, 0, 0)
"""Every member's timestamp inside the zip (the archive's bytes do not depend on the clock)."""

Progress = Callable[[str, int, int | None], None]
"""``progress(stage, done, total)``: called as rows go by (``total`` ``None`` when unknown)."""


def member(table: str) -> str:
    return f"{table}.jsonl"


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    raise TypeError(f"cannot write {type(value).__name__} to a bundle")


def dump_line(row: dict[str, Any]) -> bytes:
    """One row as a JSON line: keys sorted, times in UTC ISO 8601, UTF-8."""
    text = json.dumps(
        row, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_plain
    )
    return text.encode("utf-8") + b"\n"


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return (
        json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"
    )
