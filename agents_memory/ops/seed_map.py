"""How a seed row becomes ours: pure functions from the source's values to ours.

The JS original is this product's own ancestor, so its memory columns map
one to one, with two exceptions: ``venue`` has no column here (a chat venue becomes the row's
``session_id``; the others are reported; ``entry_type='task'`` rows become task pins), and a row
without ``external_uuid`` gets a key derived from the source's identity and its id, so a second
import finds it. unified-memory-mcp keeps messages, fact slots and personas (facts of category
``persona``) in SQLite or its JSONL dump: a message becomes a memory, a slot's live value a
pinned memory in that slot with its superseded values as the slot's history, an expired value an
archived one, a persona the core profile; what has no counterpart (summaries, the graph) is
counted in the report.
"""

from __future__ import annotations

import re
import struct
from datetime import UTC, datetime
from typing import Final, Literal

from agents_memory.adapters import platform_for_client
from agents_memory.admission.admit import Admitted
from agents_memory.store.memories import NewMemory
from agents_memory.store.seeds.seed_a import SeedAMemory
from agents_memory.store.seeds.seed_b import SeedBFact, SeedBMessage
from agents_memory.store.seeds.seed_write import ImportedState

Role = Literal["user", "assistant"]

SEED_A_MODEL: Final = "text-embedding-3-large"
"""The JS original's embedding model unless its ``EMBEDDING_MODEL`` said otherwise (it never records
which model made its vectors, only their dimension)."""

SEED_B_PLATFORM: Final = "unified-memory"
"""The platform of a unified-memory-mcp row whose ``source`` names no client (``unknown``)."""

PERSONA_CATEGORY: Final = "persona"

_CHAT_VENUES: Final = ("buzz", "slack")


def seed_a_key(identity: str, row: SeedAMemory) -> str:
    """The row's own ``external_uuid`` (a capture key, which our capture may share), else
    ``seed-a:<source identity>:<id>``."""
    return row.external_uuid or f"seed-a:{identity}:{row.id}"


_SESSION_KEYED = ("claude-code", "codex", "gemini", "grok")
"""The JS original capture modules whose keys read ``<module>:<session>:<entry>``."""


def key_session(key: str) -> str | None:
    """The session a the JS original capture key names (``claude-code:<session>:<line uuid>``,
    ``codex:<sid>:@<offset>``, ``gemini:<sid>:<id>``, ``grok:<sid>:<index>``); ``None`` for
    other keys (and for ours, ``claude-code:u:…`` / ``claude-code:a:…``)."""
    parts = key.split(":", 2)
    if len(parts) < 3 or parts[0] not in _SESSION_KEYED or not parts[1]:
        return None
    if parts[0] == "claude-code" and parts[1] in ("u", "a"):
        return None
    return parts[1]


def platform_name(name: str) -> str:
    """The JS original's platform name in ours when an adapter answers to it (its MCP client name,
    e.g. ``gemini-cli-mcp-client`` → ``gemini-cli``); any other name is kept."""
    return platform_for_client(name) or name


def venue_session(venue: str | None) -> str | None:
    """A chat venue (``buzz:<channel>``, ``buzz:dm``, ``slack``) is the conversation, kept as
    the session; ``terminal``, ``auto`` and ``subagent`` say nothing the row does not."""
    if venue and venue.split(":", 1)[0] in _CHAT_VENUES:
        return venue
    return None


def role_of(role: str) -> Role | None:
    value = role.strip().lower()
    if value == "user":
        return "user"
    if value == "assistant":
        return "assistant"
    return None


def seed_a_memory(row: SeedAMemory, role: Role, key: str, admitted: Admitted) -> NewMemory:
    return NewMemory(
        agent_platform=platform_name(row.agent_platform),
        role=role,
        message=admitted.text,
        external_uuid=key,
        message_at=row.created_at,
        agent_model=row.agent_model,
        subagent=row.subagent,
        subagent_model=row.subagent_model if row.subagent else None,
        subagent_role=row.subagent_role if row.subagent else None,
        raw_message=admitted.raw,
        session_id=venue_session(row.venue) or key_session(key),
        device_name=row.device_name,
        source="import",
        is_pinned=row.is_pinned and row.archived_at is None,
    )


def seed_a_state(
    row: SeedAMemory, key: str, tag_id: int | None, *, vector: str | None, model: str | None
) -> ImportedState:
    return ImportedState(
        external_uuid=key,
        p_tag_id=tag_id,
        d_tag=list(row.d_tag or []),
        is_active=row.is_active,
        archived_at=row.archived_at,
        tag_processed=row.tag_processed,
        created_at=row.created_at,
        embedding=vector,
        embedding_model=model if vector is not None else None,
    )


# --- unified-memory-mcp ---------------------------------------------------------------------------


def epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(float(seconds), tz=UTC)


def seed_b_key(identity: str, kind: Literal["message", "fact"], row_id: int) -> str:
    return f"seed-b:{identity}:{kind}:{row_id}"


def seed_b_platform(source: str) -> str:
    name = source.strip()
    return platform_name(name) if name and name != "unknown" else SEED_B_PLATFORM


def seed_b_message(row: SeedBMessage, role: Role, key: str, admitted: Admitted) -> NewMemory:
    return NewMemory(
        agent_platform=seed_b_platform(row.source),
        role=role,
        message=admitted.text,
        external_uuid=key,
        message_at=epoch(row.created_at),
        session_id=row.session_id or None,
        source="import",
    )


FactState = Literal["live", "expired", "superseded"]


def fact_state(fact: SeedBFact, now: float) -> FactState:
    """A slot value is live (``valid_until`` 0 or still ahead), expired (ended, nothing took
    its place), or superseded (a newer value of the slot replaced it)."""
    if fact.superseded_by:
        return "superseded"
    if fact.valid_until == 0 or fact.valid_until > now:
        return "live"
    return "expired"


def fact_text(fact: SeedBFact) -> str:
    """A fact slot as one line of memory text: ``[category] name: body``."""
    return f"[{fact.category}] {fact.name}: {fact.body}"


_SLOT_CHARS: Final = re.compile(r"[^a-z0-9_.:/-]+")
_SLOT: Final = re.compile(r"^[a-z0-9][a-z0-9_.:/-]{0,99}$")


def fact_slot(fact: SeedBFact) -> str | None:
    """A slot's name here (``category.name``, lower case, other characters as ``-``);
    ``None`` when nothing of it is a slot name (a name in another script, say)."""
    text = _SLOT_CHARS.sub("-", f"{fact.category}.{fact.name}".strip().lower()).strip("-.")
    return text if _SLOT.match(text) else None


def seed_b_fact(fact: SeedBFact, key: str, admitted: Admitted, *, live: bool) -> NewMemory:
    return NewMemory(
        agent_platform=SEED_B_PLATFORM,
        role="user",
        message=admitted.text,
        external_uuid=key,
        message_at=epoch(fact.updated_at or fact.created_at),
        source="import",
        is_pinned=live,
    )


def seed_b_fact_state(fact: SeedBFact, key: str, *, live: bool) -> ImportedState:
    return ImportedState(
        external_uuid=key,
        p_tag_id=None,
        d_tag=[],
        is_active=live,
        archived_at=None if live else epoch(fact.valid_until),
        tag_processed=False,
        created_at=epoch(fact.created_at),
    )


def persona_profile(traits: list[SeedBFact]) -> str:
    """Live persona traits as profile lines (``persona <trait>: <value>``), by trait name."""
    return "\n".join(f"persona {t.name}: {t.body}" for t in sorted(traits, key=lambda t: t.name))


def vector_text(blob: bytes) -> str:
    """A unified-memory-mcp vector (float32 little-endian) as pgvector text."""
    values = struct.unpack(f"<{len(blob) // 4}f", blob[: len(blob) // 4 * 4])
    return "[" + ",".join(repr(v) for v in values) + "]"


def vector_dim(blob: bytes) -> int:
    return len(blob) // 4
