"""Export: the pool (or a slice of it) as one bundle file, or as a Markdown tree.

An owner service: the CLI's ``mcp-agents-memory export`` (and later the console) only parse
arguments into an :class:`ExportRequest` and print the :class:`ExportReport`. The bundle's
format is :mod:`agents_memory.ops.bundle_format`; the SQL is
:mod:`agents_memory.store.owner.bundle`.
Capture cursors are never exported: they describe one machine's files, not memory.
A team member (their own database role) exports their own memory only: a teammate's shared
project is that teammate's to export, though the member may read it.
"""

from __future__ import annotations

import hashlib
import time
import zipfile
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal

import psycopg

from agents_memory import __version__, adapters
from agents_memory.config import Settings
from agents_memory.daterange import period_bound
from agents_memory.errors import AdapterError, BundleError
from agents_memory.ops import bundle_format as fmt
from agents_memory.ops.export_files import check_destination, open_private_binary
from agents_memory.ops.export_markdown import write_markdown
from agents_memory.store import database, entry, migrate, tags, team, vectors
from agents_memory.store.owner import bundle, bundle_extra
from agents_memory.store.projects import resolve_project

Format = Literal["bundle", "markdown"]


@dataclass(frozen=True, slots=True)
class ExportRequest:
    path: Path
    format: Format = "bundle"
    project: str | None = None
    since: str | None = None
    """A date in the product's one grammar (:mod:`agents_memory.daterange`): from its start."""
    until: str | None = None
    """A date in the same grammar: up to the end of that day."""
    platform: str | None = None
    include_archived: bool = False
    vectors: bool = False
    force: bool = False
    """Replace an existing bundle file, or write into a non-empty folder (a tree)."""


@dataclass(slots=True)
class ExportReport:
    path: Path
    format: Format
    counts: dict[str, int] = field(default_factory=dict)
    """Rows written per table (``memory`` = turns)."""
    files: int = 0
    """Files written (the Markdown tree; 1 for a bundle)."""
    size: int = 0
    seconds: float = 0.0
    person: str | None = None
    """A team member's export: whose memory it holds (theirs alone; a teammate's shared
    project is that teammate's to export). ``None``: the owner's whole pool."""


def default_path(fmt_name: Format, now: datetime) -> Path:
    stem = f"agents-memory-{now.strftime('%Y%m%d-%H%M%S')}"
    return Path(stem + ".zip" if fmt_name == "bundle" else stem)


def export(
    settings: Settings,
    request: ExportRequest,
    *,
    now: datetime,
    progress: fmt.Progress | None = None,
) -> ExportReport:
    """Write what ``request`` asks for; raises :class:`BundleError` (one line) on a bad
    argument or an unwritable path. Reads one consistent snapshot of the pool. Files are
    written ``0600`` (folders ``0700``); see :mod:`agents_memory.ops.export_files`."""
    started = time.monotonic()
    check_destination(request.path, tree=request.format == "markdown", force=request.force)
    try:
        request = replace(request, platform=adapters.platform_filter(request.platform))
    except AdapterError as exc:
        raise BundleError(str(exc)) from None
    db = entry.locate(settings, prepare=True)
    with database.connect(db) as conn:
        bundle.begin_snapshot(conn)
        flt = _filter(conn, request, now)
        if request.format == "markdown":
            tree = write_markdown(conn, request.path, flt, progress=progress)
            out = ExportReport(request.path, "markdown", tree.counts, tree.files, tree.size)
        else:
            out = _write_bundle(conn, request, flt, now, progress)
        out.person = None if flt.person is None else bundle_extra.user_name(conn, flt.person)
        conn.rollback()
    out.seconds = time.monotonic() - started
    return out


def _filter(
    conn: psycopg.Connection[Any], request: ExportRequest, now: datetime
) -> bundle.ExportFilter:
    project_id = None
    if request.project is not None:
        tag = tags.tag_by_name(conn, resolve_project(conn, request.project))
        if tag is None:  # resolve_project names only projects that exist
            raise BundleError(f"no project tag named {request.project!r} (see `tags list`)")
        project_id = tag.canonical_id
    try:
        since = period_bound(request.since, now, start=True) if request.since else None
        until = period_bound(request.until, now, start=False) if request.until else None
    except ValueError as exc:
        raise BundleError(str(exc)) from None
    return bundle.ExportFilter(
        person=team.member_user_id(conn),
        project_id=project_id,
        since=since,
        until=until,
        platform=request.platform,
        include_archived=request.include_archived,
    )


def _write_bundle(
    conn: psycopg.Connection[Any],
    request: ExportRequest,
    flt: bundle.ExportFilter,
    now: datetime,
    progress: fmt.Progress | None,
) -> ExportReport:
    status = vectors.vector_status(conn)
    members = list(fmt.TABLES)
    if request.vectors and status.enabled:
        members.append(fmt.VECTORS)
    total = bundle.count_memories(conn, flt)
    counts: dict[str, int] = {}
    digests: dict[str, str] = {}
    partial = request.path.with_name(request.path.name + ".partial")
    try:
        with (
            open_private_binary(partial) as out,
            zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        ):
            for table in members:
                info = zipfile.ZipInfo(fmt.member(table), date_time=fmt.ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                with archive.open(info, "w", force_zip64=True) as sink:
                    rows = bundle.read_member(conn, table, flt)
                    counts[table], digests[table] = _write_rows(sink, table, rows, total, progress)
            manifest = _manifest(conn, request, flt, status, counts, digests, now)
            info = zipfile.ZipInfo(fmt.MANIFEST, date_time=fmt.ZIP_TIME)
            archive.writestr(info, fmt.manifest_bytes(manifest))
        partial.replace(request.path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise BundleError(f"cannot write {request.path}: {exc.strerror or exc}") from None
    return ExportReport(request.path, "bundle", counts, 1, request.path.stat().st_size)


def _write_rows(
    sink: IO[bytes],
    table: str,
    rows: Any,
    total: int,
    progress: fmt.Progress | None,
) -> tuple[int, str]:
    digest = hashlib.sha256()
    count = 0
    for row in rows:
        line = fmt.dump_line(row)
        digest.update(line)
        sink.write(line)
        count += 1
        if progress is not None and count % 1000 == 0:
            progress(table, count, total if table in ("memory", fmt.VECTORS) else None)
    if progress is not None:
        progress(table, count, count)
    return count, digest.hexdigest()


def _manifest(
    conn: psycopg.Connection[Any],
    request: ExportRequest,
    flt: bundle.ExportFilter,
    status: vectors.VectorStatus,
    counts: dict[str, int],
    digests: dict[str, str],
    now: datetime,
) -> dict[str, Any]:
    embedding = {"model": status.model, "dim": status.column_dim} if status.column_dim else None
    return {
        "product": fmt.PRODUCT,
        "product_version": __version__,
        "format": fmt.FORMAT,
        "schema_version": migrate.current_version(conn),
        "created_at": now.isoformat(),
        "embedding": embedding,
        "vectors": fmt.VECTORS in counts,
        "filters": {
            "project": request.project,
            "since": flt.since.isoformat() if flt.since else None,
            "until": flt.until.isoformat() if flt.until else None,
            "platform": flt.platform,
            "include_archived": flt.include_archived,
        },
        "counts": counts,
        "sha256": {fmt.member(t): d for t, d in digests.items()},
    }
