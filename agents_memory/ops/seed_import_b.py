"""Import from unified-memory-mcp (its SQLite file or its JSONL dump), idempotently.

Messages become memories (their ``session_id`` kept, their ``source`` as the platform); a fact
slot's values fill the same slot here (``category.name``; the text ``[category] name: body``):
the live value pinned, with its expiry, an expired one archived, superseded ones archived as
the slot's history pointing at what replaced them. Live persona traits become the core
profile. What has no equivalent here yet (summaries, the entity graph and typed links,
messages moved to unified-memory-mcp's archive file, other roles, earlier persona traits) is
counted in the report, never dropped silently. The steps shared with the JS original are in
:mod:`agents_memory.ops.seed_import`.
"""

from __future__ import annotations

import time
from pathlib import Path

from agents_memory.config import Settings
from agents_memory.ops import seed_map
from agents_memory.ops.seed_import import (
    Progress,
    Target,
    admit,
    finish,
    merge_profile,
    open_target,
    store_new,
)
from agents_memory.ops.seed_report import ImportReport
from agents_memory.store.memories import NewMemory
from agents_memory.store.seeds import seed_write
from agents_memory.store.seeds.seed_b import (
    COUNTED_TABLES,
    SeedBFact,
    SeedBMessage,
    SeedBSource,
    SeedBVector,
)
from agents_memory.store.seeds.seed_b_dump import SeedBDump, is_dump
from agents_memory.store.seeds.seed_write import ImportedState

Source = SeedBSource | SeedBDump
"""Seed B's SQLite file or its JSONL dump: the same readers."""

_WHY = {
    "um_summaries": "compaction summaries of sessions; the Cold Path makes its own tag summaries",
    "um_entities": "entity graph; no graph here",
    "um_edges": "entity graph triples; no graph here",
    "um_links": "typed links between memories; no links here",
}


def import_seed_b(
    settings: Settings,
    path: Path,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    home: Path | None = None,
) -> ImportReport:
    """Import unified-memory-mcp's messages, fact slots and personas from the SQLite file, or
    the JSONL dump (``mem_doctor export``), at ``path``."""
    started = time.monotonic()
    report = ImportReport("seed-b", str(path), dry_run)
    dump = path.is_file() and is_dump(path)
    if dump:
        report.notes.append("read from seed B's JSONL dump (um-export-jsonl)")
    with SeedBDump.open(path) if dump else SeedBSource.open(path) as source:
        target, opened = open_target(settings, report, home or Path.home())
        with opened:
            meta = source.meta()
            model = meta.get("embedding_model")
            dim = int(meta["embedding_dim"]) if meta.get("embedding_dim", "").isdigit() else None
            keep = (
                target.has_vector
                and model is not None
                and (target.model, target.dim)
                == (
                    model,
                    dim,
                )
            )
            if model is not None and not keep:
                report.notes.append(
                    f"seed B vectors ({model}, {dim or '?'} dims) differ from this pool's"
                    f" ({target.model or 'none'}, {target.dim or '-'} dims): new rows are"
                    " embedded again"
                )
            identity = source.identity()
            _messages(target, source, identity, model if keep else None, progress)
            _facts(target, source.facts(), identity, settings.user_name)
            for table in COUNTED_TABLES:
                report.no_equivalent(table, source.count(table), _WHY[table])
            return finish(target, started)


def _messages(
    target: Target,
    source: Source,
    identity: str,
    model: str | None,
    progress: Progress | None,
) -> None:
    """Every message, in batches; vectors of ``model`` kept when it is not ``None``."""
    total, done = source.count("um_messages"), 0
    roles: dict[str, int] = {}
    archived = 0
    sessions: set[str] = set()
    owners: set[str] = set()
    for batch in source.messages():
        found = source.vectors("um_messages", [m.id for m in batch]) if model else {}
        rows: list[tuple[NewMemory, ImportedState]] = []
        for message in batch:
            if message.externalized_ref:
                archived += 1
                continue
            role = seed_map.role_of(message.role)
            if role is None:
                roles[message.role] = roles.get(message.role, 0) + 1
                continue
            mapped = _message(target, message, role, identity, found.get(message.id), model)
            if mapped is not None:
                rows.append(mapped)
                sessions.add(message.session_id)
                owners.add(message.owner)
        store_new(target, target.user_id, rows)
        done += len(batch)
        if progress is not None:
            progress(done, total)
    report = target.report
    report.notes.append(f"{len(sessions)} seed B sessions kept as session_id")
    if owners - {""}:
        report.notes.append(
            "seed B owners " + ", ".join(sorted(owners - {""})) + " all became this pool's owner"
        )
    report.no_equivalent(
        "archived messages",
        archived,
        "moved to seed B's archive file (UM_ARCHIVE_PATH), which this import does not read",
    )
    if roles:
        shown = ", ".join(f"{r} {n}" for r, n in sorted(roles.items()))
        why = f"{shown}; only user and assistant turns"
        report.no_equivalent("other roles", sum(roles.values()), why)


def _message(
    target: Target,
    message: SeedBMessage,
    role: seed_map.Role,
    identity: str,
    vector: SeedBVector | None,
    model: str | None,
) -> tuple[NewMemory, ImportedState] | None:
    key = seed_map.seed_b_key(identity, "message", message.id)
    admitted = admit(target, message.content, None, key)
    if admitted is None:
        return None
    memory = seed_map.seed_b_message(message, role, key, admitted)
    if message.source not in (memory.agent_platform, "unknown"):
        target.report.renamed[(message.source, memory.agent_platform)] += 1
    text = None
    if (
        vector is not None
        and vector.model == model
        and seed_map.vector_dim(vector.embedding) == target.dim
        and admitted.text == message.content
    ):
        text = seed_map.vector_text(vector.embedding)
    state = ImportedState(
        external_uuid=key,
        p_tag_id=None,
        d_tag=[],
        is_active=True,
        archived_at=None,
        tag_processed=False,
        created_at=memory.message_at,
        embedding=text,
        embedding_model=model if text is not None else None,
    )
    return memory, state


def _facts(target: Target, facts: list[SeedBFact], identity: str, owner: str) -> None:
    """Each slot's values into fact slots: the live value a pinned memory in its slot (with
    its expiry), an expired one archived in it, superseded ones archived as its history,
    each pointing at the value that replaced it. Live persona traits become the core
    profile."""
    now = time.time()
    persona: list[SeedBFact] = []
    weighted = earlier_traits = 0
    rows: list[tuple[NewMemory, ImportedState]] = []
    kept: list[tuple[SeedBFact, str]] = []
    for fact in facts:
        state = seed_map.fact_state(fact, now)
        if fact.category == seed_map.PERSONA_CATEGORY:
            if state == "live":
                persona.append(fact)
            else:
                earlier_traits += 1
            continue
        weighted += fact.importance != 0.5
        key = seed_map.seed_b_key(identity, "fact", fact.id)
        admitted = admit(target, seed_map.fact_text(fact), None, key)
        if admitted is not None:
            live = state == "live"
            rows.append(
                (
                    seed_map.seed_b_fact(fact, key, admitted, live=live),
                    seed_map.seed_b_fact_state(fact, key, live=live),
                )
            )
            kept.append((fact, key))
    store_new(target, target.user_id, rows, "facts")
    _slots(target, kept, identity)
    if persona:
        merge_profile(
            target, target.user_id, "core_profile", seed_map.persona_profile(persona), owner
        )
    report = target.report
    report.no_equivalent(
        "earlier persona traits", earlier_traits, "the profile keeps the live traits only"
    )
    report.no_equivalent(
        "fact importance", weighted, "importance other than 0.5; pinned is the only weight here"
    )


def _slots(target: Target, kept: list[tuple[SeedBFact, str]], identity: str) -> None:
    """Give the imported facts their slots, superseded values pointing at their successor."""
    keys = [key for _f, key in kept]
    keys += [seed_map.seed_b_key(identity, "fact", f.superseded_by) for f, _k in kept]
    ids = seed_write.ids_by_key(target.conn, keys)
    slots: list[seed_write.FactSlotRow] = []
    unnamed = 0
    for fact, key in kept:
        slot = seed_map.fact_slot(fact)
        if slot is None or key not in ids:
            unnamed += slot is None
            continue
        ended = seed_map.epoch(fact.valid_until) if fact.valid_until else None
        successor = (
            ids.get(seed_map.seed_b_key(identity, "fact", fact.superseded_by))
            if fact.superseded_by
            else None
        )
        slots.append(
            seed_write.FactSlotRow(
                memory_id=ids[key],
                slot=slot,
                expires_at=None if fact.superseded_by else ended,
                successor=successor,
                superseded_at=ended if fact.superseded_by else None,
            )
        )
    clashed = seed_write.fill_fact_slots(target.conn, slots)
    for memory_id in clashed:
        target.report.conflict(
            "facts", f"memory {memory_id}: this pool fills its slot with another live value"
        )
    if unnamed:
        target.report.notes.append(
            f"{unnamed} seed B fact(s) whose category and name make no slot name came in"
            " without a slot"
        )
