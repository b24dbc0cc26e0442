"""Import: an export bundle into this pool, idempotently.

An owner service: ``mcp-agents-memory import`` (and later the console) call :func:`import_bundle`
and print its :class:`ImportReport`. The steps:

1. **Check** the bundle before anything is written: a zip with our manifest, a format and a
   schema version this code knows (a newer one is refused), every member's sha256 as the
   manifest says. Any failure is one :class:`BundleError` line.
2. **Import** in one transaction, tables in :data:`bundle_format.TABLES` order (names before
   what refers to them). Memory text goes through admission (``imported``: private spans,
   exclusions, redaction; later tombstones); a refused row is counted, not stored. Rows keep
   their own ``source``. Ids are remapped: a bundle names memories by key, tags and users by
   name (:mod:`agents_memory.store.owner.bundle_import`). Actions (tool calls) come last, by
   their identity, linked to their turns (:mod:`agents_memory.ops.import_actions`); a bundle
   written before actions were exported simply has none.
3. **Vectors** are kept only when the bundle has them and they come from the model and
   dimension this pool is configured for; otherwise new rows have none and the Cold Path's
   embedder makes them (``reembed`` in the report).
4. ``dry_run``: the same work, the same report, then a rollback: nothing is written.

What is "the same": a memory with the bundle's key, session and text is *present*; with other
text it is a *conflict*, reported and left as it is here (an import never overwrites what this
pool holds; edit or forget the row here, or keep both by design). A key that holds a turn of
another session here is another turn: imported under a scoped key
(:mod:`agents_memory.ops.import_memories`). A second import of the same bundle therefore
reports everything present and changes nothing.

Every row is accounted for (:mod:`agents_memory.ops.import_report`): imported, present, or
refused with its reason (unknown user, admission, conflict, …); new users, devices and profile
fields filled are listed, in the dry run as in the import.
"""

from __future__ import annotations

import hashlib
import json
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.admission.admit import Admission, create_admission
from agents_memory.config import Settings
from agents_memory.embeddings import embedding_spec
from agents_memory.errors import BundleError
from agents_memory.ops import bundle_format as fmt
from agents_memory.ops.bundle_reader import (
    LIMITS,
    ReadLimits,
    member_chunks,
    member_lines,
    open_archive,
    read_manifest,
)
from agents_memory.ops.bundle_rows import parse_row
from agents_memory.ops.import_actions import ActionMerge
from agents_memory.ops.import_memories import BATCH, MemoryMerge
from agents_memory.ops.import_report import ImportReport
from agents_memory.ops.import_tables import TableMerge
from agents_memory.store import database, entry, migrate, vectors
from agents_memory.store.memories import notify_new_memories
from agents_memory.store.owner import bundle_import as store

_ROW_ERRORS = (
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    IndexError,
    RecursionError,
    psycopg.DataError,
    psycopg.IntegrityError,
    psycopg.ProgrammingError,
)
"""What a row of unexpected shape or content raises while it is imported (JSON that does not
parse, a missing or mistyped field, a value the database refuses)."""


@dataclass(frozen=True, slots=True)
class Manifest:
    data: dict[str, Any]

    @property
    def vectors(self) -> bool:
        return bool(self.data.get("vectors")) and fmt.member(fmt.VECTORS) in self.sha256

    @property
    def sha256(self) -> dict[str, str]:
        return dict(self.data.get("sha256") or {})

    def count(self, table: str) -> int:
        counts = self.data.get("counts")
        value = counts.get(table, 0) if isinstance(counts, dict) else 0
        return value if isinstance(value, int) else 0


def check_bundle(path: Path, limits: ReadLimits = LIMITS) -> Manifest:
    """The bundle's manifest once the bundle checks out (see step 1); nothing is written."""
    with open_archive(path) as archive:
        try:
            data = json.loads(read_manifest(archive, fmt.MANIFEST, limits))
        except (ValueError, RecursionError):
            raise BundleError(
                f"{path} is not an export bundle (no readable manifest.json)"
            ) from None
        except BundleError as exc:
            if fmt.MANIFEST not in archive.namelist():
                raise BundleError(
                    f"{path} is not an export bundle (no readable manifest.json)"
                ) from None
            raise exc
        if not isinstance(data, dict) or data.get("product") != fmt.PRODUCT:
            raise BundleError(f"{path} is not an mcp-agents-memory export bundle")
        _check_versions(data)
        sums = data.get("sha256")
        if not isinstance(sums, dict) or not all(isinstance(v, str) for v in sums.values()):
            raise BundleError("the manifest's sha256 is not a table of member names and sums")
        names = set(archive.namelist())
        for name, expected in sorted(sums.items()):
            if name not in names:
                raise BundleError(f"bundle member {name} is missing; the bundle is incomplete")
            if _sha256(archive, name, limits) != expected:
                raise BundleError(f"bundle member {name} fails its checksum; the bundle is damaged")
        missing = [
            fmt.member(t) for t in fmt.TABLES if fmt.member(t) not in sums and t not in fmt.OPTIONAL
        ]
        if missing:
            raise BundleError(f"the manifest lists no checksum for {', '.join(missing)}")
    return Manifest(data)


def _check_versions(data: dict[str, Any]) -> None:
    known = migrate.latest_version()
    schema, form = data.get("schema_version") or 0, data.get("format") or 0
    if not isinstance(schema, int) or not isinstance(form, int):
        raise BundleError("the manifest's schema_version and format must be whole numbers")
    if schema > known:
        raise BundleError(
            f"the bundle's schema version {schema} is newer than this mcp-agents-memory "
            f"knows ({known}); upgrade mcp-agents-memory to import it"
        )
    if form > fmt.FORMAT:
        raise BundleError(
            f"the bundle's format {data.get('format')} is newer than this mcp-agents-memory "
            f"reads ({fmt.FORMAT}); upgrade mcp-agents-memory to import it"
        )


def _sha256(archive: zipfile.ZipFile, name: str, limits: ReadLimits) -> str:
    digest = hashlib.sha256()
    for chunk in member_chunks(archive, name, limits):
        digest.update(chunk)
    return digest.hexdigest()


def import_bundle(
    settings: Settings,
    path: Path,
    *,
    home: Path,
    dry_run: bool = False,
    progress: fmt.Progress | None = None,
    limits: ReadLimits = LIMITS,
) -> ImportReport:
    """Check, then import ``path`` (steps 1-4 of the module's docstring), reading it within
    ``limits``. A row the import cannot take is one :class:`BundleError` naming its member and
    line, and nothing is written."""
    started = time.monotonic()
    manifest = check_bundle(path, limits)
    spec = embedding_spec(settings)
    db = entry.locate(settings, prepare=True, embedding=spec)
    report = ImportReport(path, dry_run)
    with database.connect(db) as conn, open_archive(path) as archive:
        status = vectors.vector_status(conn)
        found = manifest.data.get("embedding")
        bundle_model = found if isinstance(found, dict) else {}
        report.vectors_kept = (
            manifest.vectors
            and status.enabled
            and spec is not None
            and (bundle_model.get("model"), bundle_model.get("dim")) == (spec.model, spec.dim)
            and status.column_dim == spec.dim
        )
        store.prepare(conn)
        job = _Import(conn, archive, manifest, create_admission(settings, home=home), report)
        job.limits = limits
        job.dim = spec.dim if spec is not None else None
        try:
            job.run(progress)
        except _ROW_ERRORS as exc:
            reason = (str(exc).strip().splitlines() or [""])[0][:200]
            raise BundleError(
                f"{job.where}: cannot be imported ({type(exc).__name__}: {reason});"
                " nothing was imported"
            ) from None
        if status.enabled:
            report.reembed = report.tables["memory"].new - job.vectors_written
        if dry_run:
            conn.rollback()
        else:
            if report.tables["memory"].new:
                notify_new_memories(conn, report.tables["memory"].new)
            conn.commit()
    report.seconds = time.monotonic() - started
    return report


class _Import:
    """One import's pass over the bundle's members, in one transaction."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        archive: zipfile.ZipFile,
        manifest: Manifest,
        admission: Admission,
        report: ImportReport,
    ) -> None:
        self.conn = conn
        self.archive = archive
        self.manifest = manifest
        self.admission = admission
        self.report = report
        self.vectors_written = 0
        self.limits = LIMITS
        self.where = "the bundle"
        """The member and line being imported (what an error names)."""
        self.dim: int | None = None
        self.tables = TableMerge(conn, report, admission)

    def run(self, progress: fmt.Progress | None) -> None:
        for table in fmt.TABLES:
            if table in fmt.OPTIONAL and fmt.member(table) not in self.manifest.sha256:
                continue  # a bundle written before this member was
            self.report.tally(table)
            if table == "memory":
                self._memories(progress)
            elif table == "users":
                self.tables.users(self._numbered(table))
            elif table == "project_tags":
                self.tables.tags(list(self._numbered(table)))
            elif table == "actions":
                merge = ActionMerge(self.conn, self.report, self.admission)
                merge.rows(self._numbered(table), progress, self.manifest.count(table))
            else:
                total = self.manifest.count(table)
                self.tables.small(table, self._numbered(table), progress, total)

    def _rows(self, table: str, *, track: bool = True) -> Iterator[Any]:
        for _line, row in self._numbered(table, track=track):
            yield row

    def _numbered(self, table: str, *, track: bool = True) -> Iterator[tuple[int, Any]]:
        """The member's rows with their line numbers (from 1), streamed within the limits; a
        line that is not one JSON object is refused in one line naming it (``track``: the
        line being imported is the one an error names)."""
        name = fmt.member(table)
        for number, line in member_lines(self.archive, name, self.limits):
            if track:
                self.where = f"bundle member {name} line {number}"
            row = parse_row(name, number, line)
            if row is not None:
                yield number, row

    def _memories(self, progress: fmt.Progress | None) -> None:
        total = self.manifest.count("memory")
        keep = self.report.vectors_kept
        vectors = _Vectors(self._rows(fmt.VECTORS, track=False) if keep else iter(()))
        merge = MemoryMerge(self.conn, self.report, self.admission, vectors=keep, dim=self.dim)
        for line, row in self._numbered("memory"):
            key = row.get("external_uuid") if isinstance(row, dict) else None
            merge.add(line, row, vectors.take(key))
            if progress is not None and merge.tally.rows % BATCH == 0:
                progress("memory", merge.tally.rows, total)
        merge.flush()
        merge.link_history()
        self.vectors_written = merge.vectors_written
        if progress is not None:
            progress("memory", merge.tally.rows, total)


class _Vectors:
    """``vectors.jsonl`` read alongside ``memory.jsonl``: the same order, rows without a vector
    skipped, so each memory's vector (if any) is the next one."""

    def __init__(self, rows: Iterator[dict[str, Any]]) -> None:
        self._rows = rows
        self._next: dict[str, Any] | None = next(rows, None)

    def take(self, key: object) -> dict[str, Any] | None:
        if not isinstance(self._next, dict) or self._next.get("external_uuid") != key:
            return None
        found, self._next = self._next, next(self._rows, None)
        return found
