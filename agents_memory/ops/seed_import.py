"""Import from the source systems: the JS original's PostgreSQL and unified-memory-mcp's SQLite,
idempotently.

An owner service (``mcp-agents-memory import --from seed-a|seed-b``). Both imports:

* read the source read-only (:mod:`agents_memory.store.seeds.seed_a`, :mod:`~.seed_b`);
* map each row with :mod:`agents_memory.ops.seed_map` and send its text through admission
  (``imported``: private spans, brief echoes, redaction);
* insert in one transaction through the ordinary memory insert, keyed by a stable
  ``external_uuid``: a row already here with the same text is *present*, with other text a
  *conflict* left as this pool has it, so a second import changes nothing;
* keep the source's vectors only when they come from the model and dimension this pool is
  stamped with (and the admitted text is the text they were made from); other new rows wait
  for the Cold Path's embedder;
* with ``dry_run`` do the same work and roll back.

unified-memory-mcp's fact slots, personas and the rest are in
:mod:`agents_memory.ops.seed_import_b`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.admission.admit import Admission, Admitted, Refused, create_admission
from agents_memory.config import Settings
from agents_memory.embeddings import embedding_spec
from agents_memory.errors import TagEditError
from agents_memory.gitinfo import NO_GIT
from agents_memory.masking import mask
from agents_memory.ops import seed_map
from agents_memory.ops.seed_pins import SeedPins
from agents_memory.ops.seed_report import ImportReport
from agents_memory.store import entry, knowledge, tags, vectors
from agents_memory.store.knowledge import ProfileField
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from agents_memory.store.memories import notify_new_memories as notify
from agents_memory.store.seeds import seed_write
from agents_memory.store.seeds.seed_a import SeedAMemory, SeedASource, SeedATag, SeedAUser
from agents_memory.store.seeds.seed_write import ImportedState

Progress = Callable[[int, int], None]
"""Called with (rows read, rows in the source) as an import goes."""


@dataclass(slots=True)
class Target:
    """This pool, opened for one import."""

    conn: psycopg.Connection[Any]
    user_id: int
    has_vector: bool
    model: str | None
    dim: int | None
    admission: Admission
    report: ImportReport


def open_target(settings: Settings, report: ImportReport, home: Path) -> tuple[Target, Any]:
    """Connect to this pool (migrated, vectors set up as configured)."""
    db = entry.locate(settings, prepare=True, embedding=embedding_spec(settings))
    opened = entry.open_user_connection(settings, db=db)
    status = vectors.vector_status(opened.conn)
    target = Target(
        opened.conn,
        opened.user_id,
        opened.has_vector,
        status.model,
        status.column_dim,
        create_admission(settings, home=home),
        report,
    )
    return target, opened


def finish(target: Target, started: float) -> ImportReport:
    """Commit (or, for a dry run, roll back) and wake the Cold Path for the new rows."""
    report = target.report
    if report.dry_run:
        target.conn.rollback()
    else:
        if report.new_memories:
            notify(target.conn, report.new_memories)
        target.conn.commit()
    report.seconds = time.monotonic() - started
    return report


def admit(target: Target, text: str, raw: str | None, key: str) -> Admitted | None:
    """Admission's verdict on an imported text; a refusal is counted and gives ``None``."""
    verdict = target.admission.imported(text, raw=raw, cwd=None, git=NO_GIT, key=key)
    if isinstance(verdict, Refused):
        target.report.refused[verdict.reason] += 1
        return None
    return verdict


def store_new(
    target: Target,
    user_id: int,
    rows: Sequence[tuple[NewMemory, ImportedState]],
    kind: str = "memories",
) -> None:
    """Insert the rows not here yet, give them their source state; count the rest as
    present or (other text under the key) conflicting."""
    if not rows:
        return
    here = seed_write.present_keys(target.conn, [m.external_uuid or "" for m, _s in rows])
    tally = target.report.tally(kind)
    fresh = []
    for memory, state in rows:
        stored = here.get(state.external_uuid)
        if stored is None:
            fresh.append((memory, state))
        elif stored == memory.message:
            tally.present += 1
        else:
            target.report.conflict(
                kind, f"{state.external_uuid}: this pool holds other text under that key"
            )
    if not fresh:
        return
    counts = insert_memories(
        target.conn, user_id, [m for m, _s in fresh], has_vector=target.has_vector
    )
    states = [s for _m, s in fresh]
    seed_write.apply_imported_state(target.conn, states, has_vector=target.has_vector)
    tally.new += counts.inserted
    kept = sum(1 for s in states if s.embedding is not None)
    target.report.vectors_kept += kept
    target.report.reembed += counts.inserted - kept


def merge_profile(
    target: Target, user_id: int, field: ProfileField, value: str | None, who: str
) -> None:
    """Set this pool's empty profile field to ``value`` (admitted as an edit); a field that
    already holds other text is a conflict, left as it is."""
    if not value or not value.strip():
        return
    verdict = target.admission.edited_text(value)
    if isinstance(verdict, Refused):
        target.report.refused[verdict.reason] += 1
        return
    ours = knowledge.get_profiles(target.conn, user_id)
    current = ours.core_profile if field == "core_profile" else ours.sub_profile
    tally = target.report.tally("profiles")
    if not current or not current.strip():
        knowledge.set_profile(
            target.conn, user_id, field, verdict.text, changed_by="import", sources=None
        )
        tally.new += 1
    elif current.strip() == verdict.text.strip():
        tally.present += 1
    else:
        target.report.conflict(
            "profiles", f"{field} of {who}: this pool has its own; edit it by hand to merge"
        )


# --- the JS original ------------------------------------------------------------------------------


def import_seed_a(
    settings: Settings,
    url: str,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    source_model: str = seed_map.SEED_A_MODEL,
    home: Path | None = None,
) -> ImportReport:
    """Import the JS original's users' profiles, project tags (aliases, registry fields), both
    suggestion queues and every memory from the PostgreSQL at ``url``.

    ``source_model`` is the model that made the JS original's vectors (the JS original does not
    record it)."""
    started = time.monotonic()
    report = ImportReport("seed-a", mask(url, _url_secret(url)), dry_run)
    with SeedASource.open(url) as source:
        target, opened = open_target(settings, report, home or Path.home())
        with opened:
            owners = _owners(target, source.users(), settings.user_name)
            tag_ids = _tags(target, source.tags())
            suggestions = source.alias_suggestions()
            wanted = {
                i for s in suggestions for i in (*s.evidence_memory_ids, *s.conflict_memory_ids)
            }
            pins = SeedPins()
            keys = _memories(
                target, source, (owners, pins), tag_ids, wanted, source_model, progress
            )
            pins.write(target.conn, target.admission, report)
            _alias_suggestions(target, suggestions, owners, tag_ids, keys)
            _new_suggestions(target, source, owners, tag_ids)
            return finish(target, started)


def _url_secret(url: str) -> list[str]:
    from psycopg.conninfo import conninfo_to_dict

    try:
        password = conninfo_to_dict(url).get("password")
    except psycopg.Error:
        return []
    return [str(password)] if password else []


def _owners(target: Target, users: list[SeedAUser], owner_name: str) -> dict[int, int]:
    """The JS original's users → ours: a single seed user is this pool's owner; with several, the
    one
    of the owner's name is, and each other keeps its name. Their profiles are merged."""
    owners: dict[int, int] = {}
    for user in users:
        if len(users) == 1 or user.user_name == owner_name:
            owners[user.user_id] = target.user_id
        else:
            owners[user.user_id] = ensure_user(target.conn, user.user_name)
            target.report.notes.append(
                f"seed A user {user.user_name} kept as its own user here"
                f" (this pool's owner is {owner_name})"
            )
        fields: tuple[tuple[ProfileField, str | None], ...] = (
            ("core_profile", user.core_profile),
            ("sub_profile", user.sub_profile),
        )
        for field, value in fields:
            merge_profile(target, owners[user.user_id], field, value, user.user_name)
    return owners


def _tags(target: Target, seed_tags: list[SeedATag]) -> dict[int, int]:
    """Create the project tags by name (registry ``kind`` and ``paused`` kept), then their
    aliases; returns seed tag id → our tag id."""
    ids: dict[int, int] = {}
    tally = target.report.tally("project tags")
    for tag in seed_tags:
        ours, created = seed_write.import_tag(
            target.conn,
            tag.name.strip().lower(),
            description=tag.description,
            kind=tag.kind,
            paused=tag.paused,
        )
        ids[tag.id] = ours
        if created:
            tally.new += 1
        else:
            tally.present += 1
    aliases = target.report.tally("aliases")
    for tag in seed_tags:
        if tag.alias_of is None or tag.alias_of not in ids:
            continue
        source_id, target_id = ids[tag.id], ids[tag.alias_of]
        current = seed_write.tag_alias(target.conn, source_id)
        if current == target_id:
            aliases.present += 1
            continue
        try:
            if current is not None:
                raise TagEditError("it is an alias of another tag here")
            tags.set_alias(target.conn, source_id, target_id)
            aliases.new += 1
        except TagEditError as exc:
            target.report.conflict("aliases", f"alias {tag.name} → seed tag {tag.alias_of}: {exc}")
    return ids


def _memories(
    target: Target,
    source: SeedASource,
    people: tuple[dict[int, int], SeedPins],
    tag_ids: dict[int, int],
    wanted: set[int],
    source_model: str,
    progress: Progress | None,
) -> dict[int, str]:
    """Every memory row, in batches (task rows set aside in ``people``'s pins, by owner);
    returns the keys of the seed ids in ``wanted``."""
    owners, pins = people
    dim = source.vector_dim()
    keep = target.has_vector and (target.model, target.dim) == (source_model, dim)
    if dim is not None and not keep:
        target.report.notes.append(
            f"seed A vectors ({source_model}, {dim} dims) differ from this pool's"
            f" ({target.model or 'none'}, {target.dim or '-'} dims): new rows are embedded again"
        )
    identity, total, done = source.identity(), source.memory_count(), 0
    keys: dict[int, str] = {}
    skipped = {"role": 0}
    venues: dict[str, int] = {}
    for batch in source.memories(with_vectors=keep):
        by_user: dict[int, list[tuple[NewMemory, ImportedState]]] = {}
        for row in batch:
            if row.entry_type == "task":
                pins.add(owners.get(row.user_id, target.user_id), row)
                continue
            mapped = _seed_a_row(target, row, identity, tag_ids, source_model, skipped, venues)
            if mapped is not None:
                by_user.setdefault(owners.get(row.user_id, target.user_id), []).append(mapped)
                if row.id in wanted:
                    keys[row.id] = mapped[1].external_uuid
        for user_id, rows in by_user.items():
            store_new(target, user_id, not_captured(target, user_id, rows))
        done += len(batch)
        if progress is not None:
            progress(done, total)
    _report_seed_a_leftovers(target.report, skipped, venues)
    return keys


def not_captured(
    target: Target, user_id: int, rows: list[tuple[NewMemory, ImportedState]]
) -> list[tuple[NewMemory, ImportedState]]:
    """``rows`` less those capture already stored from the same transcripts: the JS original keyed a
    turn by its line and stamped it with its capture time, we key it by the transcript's own
    time and text, so the same turn would be two rows. A twin is a captured row of the same
    platform, session, role and text (whitespace aside); it is counted, not imported."""
    candidates = [
        (i, memory) for i, (memory, _state) in enumerate(rows) if memory.session_id is not None
    ]
    twins = seed_write.captured_twins(
        target.conn,
        user_id,
        [(m.agent_platform, m.session_id or "", m.role, m.message) for _i, m in candidates],
    )
    if not twins:
        return rows
    skip = {candidates[t][0] for t in twins}
    target.report.captured += len(skip)
    return [row for i, row in enumerate(rows) if i not in skip]


def _seed_a_row(
    target: Target,
    row: SeedAMemory,
    identity: str,
    tag_ids: dict[int, int],
    source_model: str,
    skipped: dict[str, int],
    venues: dict[str, int],
) -> tuple[NewMemory, ImportedState] | None:
    role = seed_map.role_of(row.role) if row.entry_type == "memory" else None
    if role is None:
        skipped["role"] += 1
        return None
    key = seed_map.seed_a_key(identity, row)
    admitted = admit(target, row.message, row.raw_message, key)
    if admitted is None:
        return None
    memory = seed_map.seed_a_memory(row, role, key, admitted)
    if memory.agent_platform != row.agent_platform:
        target.report.renamed[(row.agent_platform, memory.agent_platform)] += 1
    if row.venue and seed_map.venue_session(row.venue) is None:
        venues[row.venue] = venues.get(row.venue, 0) + 1
    vector = row.embedding if admitted.text == row.message else None
    tag_id = tag_ids.get(row.p_tag_id) if row.p_tag_id is not None else None
    return memory, seed_map.seed_a_state(row, key, tag_id, vector=vector, model=source_model)


def _report_seed_a_leftovers(
    report: ImportReport, skipped: dict[str, int], venues: dict[str, int]
) -> None:
    report.no_equivalent(
        "rows of another role or entry type", skipped["role"], "only user and assistant turns"
    )
    if venues:
        shown = ", ".join(f"{v} {n}" for v, n in sorted(venues.items()))
        report.no_equivalent(
            "venue",
            sum(venues.values()),
            f"{shown}; no venue column here (chat venues become the session)",
        )


def _alias_suggestions(
    target: Target,
    suggestions: Iterable[Any],
    owners: dict[int, int],
    tag_ids: dict[int, int],
    keys: dict[int, str],
) -> None:
    """Both queues keep their decisions: a pending question stays pending, a rejection stays
    a rejection (the promoter never asks again)."""
    ids = seed_write.ids_by_key(target.conn, list(keys.values()))
    ours = {seed_id: ids[key] for seed_id, key in keys.items() if key in ids}
    tally = target.report.tally("alias suggestions")
    for s in suggestions:
        row = seed_write.AliasSuggestionRow(
            source_tag_id=tag_ids[s.source_tag_id],
            target_tag_id=tag_ids[s.target_tag_id],
            relation=s.relation,
            status=s.status,
            confidence=s.confidence,
            candidate_sources=list(s.candidate_sources or []),
            evidence_memory_ids=[ours[i] for i in s.evidence_memory_ids or [] if i in ours],
            conflict_memory_ids=[ours[i] for i in s.conflict_memory_ids or [] if i in ours],
            signals=s.signals,
            model_provider=s.model_provider,
            model_name=s.model_name,
            rationale=s.rationale,
            auto_apply_eligible=s.auto_apply_eligible,
            decided_by=s.decided_by,
            decision_reason=s.decision_reason,
            decided_at=s.decided_at,
            applied_at=s.applied_at,
            created_at=s.created_at,
        )
        user_id = owners.get(s.user_id, target.user_id)
        if seed_write.import_alias_suggestion(target.conn, user_id, row):
            tally.new += 1
        else:
            tally.present += 1


def _new_suggestions(
    target: Target, source: SeedASource, owners: dict[int, int], tag_ids: dict[int, int]
) -> None:
    tally = target.report.tally("new-tag suggestions")
    for s in source.new_suggestions():
        row = seed_write.NewSuggestionRow(
            name=s.name,
            members=list(s.members or []),
            uses=s.uses,
            status=s.status,
            recommendation=s.recommendation,
            rationale=s.rationale,
            model_provider=s.model_provider,
            model_name=s.model_name,
            project_tag_id=tag_ids.get(s.project_tag_id) if s.project_tag_id else None,
            retrotagged=s.retrotagged,
            decided_by=s.decided_by,
            decision_reason=s.decision_reason,
            decided_at=s.decided_at,
            last_seen_at=s.last_seen_at,
            created_at=s.created_at,
        )
        user_id = owners.get(s.user_id, target.user_id)
        if seed_write.import_new_suggestion(target.conn, user_id, row):
            tally.new += 1
        else:
            tally.present += 1
