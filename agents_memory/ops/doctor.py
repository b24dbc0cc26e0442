"""``mcp-agents-memory doctor``: gather what is right and wrong, with a hint for each problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents_memory.capture.daemon import running_pid
from agents_memory.config import Settings, ignored_seed_settings
from agents_memory.embeddings import embedding_spec, local_model_mismatch
from agents_memory.errors import AgentsMemoryError
from agents_memory.paths import user_state_dir
from agents_memory.store import database
from agents_memory.store.health import DatabaseHealth, inspect

CAPTURE_PID = "capture.pid"


def run_doctor(
    settings: Settings, *, scan_secrets: bool = False, state_dir: Path | None = None
) -> DatabaseHealth:
    """``state_dir`` (the user state dir by default) holds the capture daemon's pid file."""
    external = database.external_conninfo(settings)
    if external is None:
        server = database.embedded_server(settings)
        health = DatabaseHealth(mode="embedded", location=str(server.pgdata))
        # As root the cluster may live outside the data dir (see store/embedded.py): show
        # where the data really is.
        placed = not server.pgdata.is_relative_to(settings.data_dir)
        health.data_dir = str(server.pgdata if placed else settings.data_dir)
    else:
        health = DatabaseHealth(
            mode="external", location=database.Database(external, None).description
        )
    _settings_notes(settings, health)
    spec = embedding_spec(settings)
    try:
        db = database.open_database(settings, embedding=spec, connect_timeout=5)
        with database.connect(db, connect_timeout=5, autocommit=True) as conn:
            inspect(conn, health, vectors_wanted=spec is not None)
            if health.schema_version >= health.schema_latest:
                _coldpath(conn, settings, health)
                _team(conn, health)
            if scan_secrets:
                from agents_memory.ops.secrets import scan_secrets as scan

                health.secret_scan = scan(conn)
                if health.secret_scan.found:
                    health.problems.append(
                        "secrets found in stored memories (see ids above): re-redact them "
                        "everywhere with `mcp-agents-memory doctor --secrets --fix`, and keep "
                        "REDACT_ENABLED on"
                    )
    except AgentsMemoryError as exc:
        hint = (
            "check DATABASE_URL / DB_* and that the server is up"
            if external is not None
            else f"see {database.embedded_server(settings).log_file}"
        )
        health.problems.append(f"{exc} — {hint}")
    if external is None and health.data_dir and Path(health.data_dir).exists():
        health.data_dir_bytes = database.data_dir_size(Path(health.data_dir))
    if running_pid((state_dir or user_state_dir()) / CAPTURE_PID) is None:
        health.notes.append(
            "the capture daemon is not running on this machine, so new turns are not "
            "captured: `memory-capture start` (or `memory-capture install` for the service)"
        )
    return health


def _settings_notes(settings: Settings, health: DatabaseHealth) -> None:
    """the JS original traps: an ``EMBEDDING_MODEL`` the local backend cannot serve (a problem,
    with what to set), and the JS original settings read nowhere here (a note each, with why)."""
    mismatch = local_model_mismatch(settings)
    if mismatch:
        health.problems.append(mismatch)
    for name, why in ignored_seed_settings():
        health.notes.append(f"{name} is ignored: {why}")


def _team(conn: Any, health: DatabaseHealth) -> None:
    """Which role this is to the team and what it shares (nothing said without a team)."""
    from agents_memory.ops.team import describe, index_advice, whoami

    who = whoami(conn)
    if who.team is None and who.kind == "owner":
        return
    health.notes.append(f"database role {describe(who)}")
    advice = index_advice(conn)
    if advice:
        health.notes.append(
            "members' searches scan without the full-text and vector indexes until the "
            "server's admin (a superuser) runs: " + "; ".join(advice)
        )


def _coldpath(conn: Any, settings: Settings, health: DatabaseHealth) -> None:
    from agents_memory.coldpath.status import coldpath_status

    status = coldpath_status(conn, settings)
    health.coldpath = status.as_dict()
    for reason in status.degraded:
        health.notes.append(f"degraded: {reason}")
    if settings.cold_path_enabled and not status.worker_running and not status.starting:
        health.notes.append(
            "no Cold Path worker is running anywhere on this database: `memory-capture start` "
            "runs one with the capture daemon (or the systemd unit mcp-agents-memory-coldpath)"
        )
