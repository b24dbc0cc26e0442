"""Export / import: download a bundle (:mod:`agents_memory.ops.export`); upload one, see the
dry run's report (:mod:`agents_memory.ops.importer`), then import it."""

from __future__ import annotations

import re
import secrets
import shutil
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Final

from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from agents_memory.console.context import Console, console_from
from agents_memory.console.forms import back, change_form, text
from agents_memory.errors import AgentsMemoryError
from agents_memory.ops import team as team_service
from agents_memory.ops.export import ExportRequest, default_path, export
from agents_memory.ops.import_report import ImportReport
from agents_memory.ops.importer import import_bundle

MAX_UPLOAD: Final = 256 * 1024**2
"""The largest upload the console takes (a bigger bundle: ``mcp-agents-memory import FILE``)."""
TOO_LARGE: Final = (
    f"the upload is larger than {MAX_UPLOAD // 1024**2} MiB: import a bundle this large with"
    " `mcp-agents-memory import FILE`"
)
_CHUNK: Final = 1024 * 1024
_KEY: Final = re.compile(r"[0-9a-f]{32}")
"""What :func:`upload` names a kept bundle by (``secrets.token_hex(16)``)."""


async def transfer_page(request: Request) -> Response:
    console = console_from(request)
    who = await console.read(team_service.whoami)
    return console.render(
        request,
        "transfer.html",
        report=None,
        upload=None,
        platforms=[a.name for a in console.catalog.adapters],
        person=who.user_name if who.kind == "person" else None,
    )


async def download(request: Request) -> Response:
    """The bundle for the filters in the query, written to a temporary file and sent."""
    console = console_from(request)
    params = request.query_params
    now = datetime.now().astimezone()
    folder = Path(tempfile.mkdtemp(prefix="am-export-"))
    name = default_path("bundle", now).name
    job = ExportRequest(
        path=folder / name,
        project=text(params, "project"),
        since=text(params, "since"),
        until=text(params, "until"),
        platform=text(params, "platform"),
        include_archived=bool(params.get("include_archived")),
        vectors=bool(params.get("vectors")),
    )
    try:
        await run_in_threadpool(export, console.settings, job, now=now, progress=None)
    except BaseException as exc:
        shutil.rmtree(folder, ignore_errors=True)  # on every failure, not only ours
        if isinstance(exc, AgentsMemoryError):
            return back("/transfer", failed=str(exc))
        raise
    return FileResponse(
        job.path,
        media_type="application/zip",
        filename=name,
        background=BackgroundTask(shutil.rmtree, folder, ignore_errors=True),
    )


def _uploads(console: Console) -> Path:
    if console.work_dir is None:
        console.work_dir = Path(tempfile.mkdtemp(prefix="am-console-"))
    return console.work_dir


async def upload(request: Request) -> Response:
    """Keep the uploaded bundle and show what importing it would do (nothing written)."""
    console = console_from(request)
    if not _declared_size_fits(request):
        return back("/transfer", failed=TOO_LARGE)
    form = await change_form(request)
    try:
        bundle = form.get("bundle")
        if not isinstance(bundle, UploadFile) or not bundle.filename:
            return back("/transfer", failed="choose a bundle file to upload")
        key = secrets.token_hex(16)
        path = _uploads(console) / f"{key}.zip"
        if not await _save(bundle, path):
            return back("/transfer", failed=TOO_LARGE)
    finally:
        await form.close()
    return await _run_import(request, console, path, key, dry_run=True)


def _declared_size_fits(request: Request) -> bool:
    """Whether the request says how large it is and that is within :data:`MAX_UPLOAD` (checked
    before the form is parsed, so a larger upload is never spooled to a temporary file)."""
    declared = request.headers.get("content-length", "")
    return declared.isdigit() and int(declared) <= MAX_UPLOAD + _CHUNK


async def _save(bundle: UploadFile, path: Path) -> bool:
    """Copy the upload to ``path``; ``False`` (and nothing kept) when it is too large or the
    copy fails."""
    size = 0
    try:
        with path.open("wb") as out:
            while chunk := await bundle.read(_CHUNK):
                size += len(chunk)
                if size > MAX_UPLOAD:
                    break
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    if size > MAX_UPLOAD:
        path.unlink()
        return False
    return True


async def apply_upload(request: Request) -> Response:
    console = console_from(request)
    form = await change_form(request)
    key = text(form, "upload") or ""
    path = _uploads(console) / f"{key}.zip"
    if not _KEY.fullmatch(key) or not path.is_file():
        return back("/transfer", failed="that upload is gone: upload the bundle again")
    return await _run_import(request, console, path, key, dry_run=False)


async def _run_import(
    request: Request, console: Console, path: Path, key: str, *, dry_run: bool
) -> Response:
    kept = False
    try:
        report: ImportReport = await run_in_threadpool(
            lambda: import_bundle(console.settings, path, home=console.home, dry_run=dry_run)
        )
        kept = dry_run  # only a checked bundle waits for its import
    finally:  # a refused bundle is shown on the page with its reason (HTTP 400)
        if not kept:
            path.unlink(missing_ok=True)
    return console.render(
        request,
        "transfer.html",
        report=report,
        upload=key if dry_run else None,
        platforms=[a.name for a in console.catalog.adapters],
    )


ROUTES = [
    Route("/transfer", transfer_page),
    Route("/export", download),
    Route("/import", upload, methods=["POST"]),
    Route("/import/apply", apply_upload, methods=["POST"]),
]
