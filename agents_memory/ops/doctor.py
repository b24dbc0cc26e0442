"""``mcp-agents-memory doctor``: gather what is right and wrong, with a hint for each problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents_memory.capture.daemon import running_pid
from agents_memory.config import Settings
from agents_memory.embeddings import embedding_spec
from agents_memory.errors import AgentsMemoryError
from agents_memory.paths import user_state_dir
from agents_memory.store import database
from agents_memory.store.health import DatabaseHealth, inspect, scan_messages

CAPTURE_PID = "capture.pid"


def run_doctor(
    settings: Settings, *, scan_secrets: bool = False, state_dir: Path | None = None
) -> DatabaseHealth:
    """``state_dir`` (the user state dir by default) holds the capture daemon's pid file."""
    external = database.external_conninfo(settings)
    if external is None:
        server = database.embedded_server(settings)
        health = DatabaseHealth(mode="embedded", location=str(server.pgdata))
        health.data_dir = str(settings.data_dir)
    else:
        health = DatabaseHealth(
            mode="external", location=database.Database(external, None).description
        )
    try:
        db = database.open_database(settings, embedding=embedding_spec(settings), connect_timeout=5)
        with database.connect(db, connect_timeout=5, autocommit=True) as conn:
            inspect(conn, health, vectors_wanted=settings.embedding_backend != "none")
            if health.schema_version >= health.schema_latest:
                _coldpath(conn, settings, health)
            if scan_secrets:
                from agents_memory.admission.redact import scan

                health.secret_scan = scan_messages(conn, scan)
                if health.secret_scan.kinds:
                    health.problems.append(
                        "secrets found in stored memories (see ids above); remove them with "
                        "manage_knowledge remove or turn on REDACT_ENABLED"
                    )
    except AgentsMemoryError as exc:
        hint = (
            "check DATABASE_URL / DB_* and that the server is up"
            if external is not None
            else f"see {settings.data_dir / 'pg' / 'server.log'}"
        )
        health.problems.append(f"{exc} — {hint}")
    if external is None and settings.data_dir.exists():
        health.data_dir_bytes = database.data_dir_size(settings.data_dir)
    if running_pid((state_dir or user_state_dir()) / CAPTURE_PID) is None:
        health.notes.append(
            "the capture daemon is not running on this machine, so new turns are not "
            "captured: `memory-capture start` (or `memory-capture install` for the service)"
        )
    return health


def _coldpath(conn: Any, settings: Settings, health: DatabaseHealth) -> None:
    from agents_memory.coldpath.status import coldpath_status

    status = coldpath_status(conn, settings)
    health.coldpath = status.as_dict()
    for reason in status.degraded:
        health.notes.append(f"degraded: {reason}")
    if settings.cold_path_enabled and not status.worker_running:
        health.notes.append(
            "no Cold Path worker is running anywhere on this database: `memory-capture start` "
            "runs one with the capture daemon (or the systemd unit mcp-agents-memory-coldpath)"
        )
