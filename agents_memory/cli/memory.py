"""``mcp-agents-memory``: the database side — migrations, health, and (later) the MCP server."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING

import click

from agents_memory import __version__
from agents_memory.cli.common import (
    ScriptGroup,
    configure_logging,
    debug_option,
    run_main,
    settings_from,
)
from agents_memory.config import Settings, load_settings
from agents_memory.ops.units import human_bytes

if TYPE_CHECKING:
    from agents_memory.store.health import DatabaseHealth, SecretScan


@click.group(
    cls=ScriptGroup,
    script="mcp-agents-memory",
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=True,
)
@click.version_option(__version__, prog_name="mcp-agents-memory")
@debug_option
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Long-term, shared memory for AI coding agents (database and MCP side).

    With no command: serve MCP over stdio when a client pipes to it (what client configs run);
    on a terminal, this help. With no configuration
    the data lives in an embedded PostgreSQL server under the user data directory; set
    DATABASE_URL to share one server between machines.
    """
    settings = load_settings()
    level = "DEBUG" if "--debug" in sys.argv else settings.log_level
    configure_logging(level, settings.secrets())
    ctx.obj = settings
    if ctx.invoked_subcommand is None:
        if sys.stdin.isatty():
            click.echo(ctx.get_help())
            click.echo(
                "\n(With no command and stdin piped from an MCP client, this serves MCP over "
                "stdio; `mcp-agents-memory serve` does so on a terminal too.)"
            )
            return
        from agents_memory.server.app import serve as serve_mcp

        serve_mcp(settings)


@cli.command()
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (HTTP). Keep it on loopback unless you set a token.",
)
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=click.IntRange(1, 65535),
    help="Port to listen on (HTTP).",
)
@click.option(
    "--no-brief",
    is_flag=True,
    help="Leave the brief out of the MCP instructions: the client reads it from a context "
    "file the daemon keeps fresh (what `install` writes for OpenCode).",
)
@debug_option
@click.pass_context
def serve(ctx: click.Context, use_http: bool, host: str, port: int, no_brief: bool) -> None:
    """Serve the MCP tools: stdio (default) or streamable HTTP at http://HOST:PORT/mcp.

    Set MCP_HTTP_TOKEN to require `Authorization: Bearer <token>` on HTTP.
    """
    from agents_memory.server.app import serve as serve_mcp

    settings: Settings = settings_from(ctx)
    if use_http and host not in ("127.0.0.1", "::1", "localhost") and not settings.mcp_http_token:
        raise click.UsageError("listening beyond loopback needs MCP_HTTP_TOKEN")
    serve_mcp(settings, http=use_http, host=host, port=port, brief=not no_brief)


@cli.command()
@debug_option
@click.pass_context
def migrate(ctx: click.Context) -> None:
    """Create or upgrade the database schema (also done automatically on first use)."""
    from agents_memory.store import database
    from agents_memory.store import migrate as migrations

    settings: Settings = settings_from(ctx)
    db = database.locate_database(settings)
    with database.connect(db, autocommit=True) as conn:
        applied = migrations.migrate(conn)
        version = migrations.current_version(conn)
    if applied:
        names = ", ".join(f"{m.version:04d}_{m.name}" for m in applied)
        click.echo(f"applied {len(applied)} migration(s): {names}; schema at version {version}")
    else:
        click.echo(f"schema is up to date (version {version})")
    _ensure_vectors(settings)


def _ensure_vectors(settings: Settings) -> None:
    from agents_memory.embeddings import embedding_spec
    from agents_memory.store import database

    spec = embedding_spec(settings)
    database.open_database(settings, embedding=spec)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--secrets",
    is_flag=True,
    help="Also scan every stored memory, summary and profile for secrets with the redactor and "
    "an independent entropy detector (reports kinds and ids, never values).",
)
@click.option(
    "--fix",
    is_flag=True,
    help="With --secrets: re-redact what was found, everywhere its text lives (message, raw "
    "text, history, summaries, profiles); prints the dry-run count and asks first.",
)
@click.option("--yes", is_flag=True, help="With --fix: do not ask for confirmation.")
@debug_option
@click.pass_context
def doctor(ctx: click.Context, as_json: bool, secrets: bool, fix: bool, yes: bool) -> None:
    """Check the database: where it is, server and pgvector versions, schema, rows, disk.

    Exits 1 with a one-line hint per problem when something is wrong. With --secrets --fix,
    found secrets are re-redacted in place (with --json, only when --yes is given too;
    otherwise the JSON carries the dry-run count).
    """
    from agents_memory.ops.doctor import run_doctor

    if fix and not secrets:
        raise click.UsageError("--fix goes with --secrets")
    settings: Settings = settings_from(ctx)
    report = run_doctor(settings, scan_secrets=secrets)
    if fix and report.secret_scan is not None and report.secret_scan.found:
        report = _fix_secrets(settings, report, as_json=as_json, yes=yes)
    elif as_json:
        click.echo(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        _print_health(report)
    if not report.healthy:
        ctx.exit(1)


def _fix_secrets(
    settings: Settings, report: DatabaseHealth, *, as_json: bool, yes: bool
) -> DatabaseHealth:
    """Show ``report`` and the dry-run count; on confirmation re-redact and scan again (the
    report returned is the new one)."""
    from agents_memory.ops.doctor import run_doctor
    from agents_memory.ops.secrets import describe, fix_stored_secrets

    assert report.secret_scan is not None
    plan = fix_stored_secrets(settings, dry_run=True, scan=report.secret_scan)
    if as_json and not yes:
        data = report.as_dict() | {"fix": {"dry_run": True, **asdict(plan)}}
        click.echo(json.dumps(data, indent=2, default=str))
        return report
    if not as_json:
        _print_health(report)
        click.echo(describe(plan, dry_run=True))
        if not yes:
            click.confirm("re-redact them now?", abort=True)
    done = fix_stored_secrets(settings, dry_run=False, scan=report.secret_scan)
    after = run_doctor(settings, scan_secrets=True)
    if as_json:
        data = after.as_dict() | {"fix": {"dry_run": False, **asdict(done)}}
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        click.echo(describe(done, dry_run=False))
        click.echo("after the fix:")
        _print_health(after)
    return after


def _coldpath_lines(cold: dict[str, object] | None) -> list[tuple[str, str]]:
    if not cold:
        return []
    backlog = cold["backlog"]
    assert isinstance(backlog, dict)
    worker = cold.get("worker")
    running = (
        f"running: {worker.get('application_name') or 'pid ' + str(worker.get('pid'))}"
        if isinstance(worker, dict)
        else ("starting" if cold.get("starting") else "no worker running")
    )
    unembedded = backlog.get("unembedded")
    waiting = f"{backlog.get('untagged')} untagged" + (
        f", {unembedded} without a vector" if unembedded is not None else ""
    )
    llm = cold.get("llm_today") or []
    assert isinstance(llm, list)
    used = (
        ", ".join(f"{r['role']} {r['tokens']}/{r['budget']} tokens" for r in llm if r.get("calls"))
        or "no calls today"
    )
    from agents_memory.cli.views import local_time

    ran = cold.get("last_run_at")
    last = local_time(ran) if isinstance(ran, datetime) else (ran or "never")
    return [
        ("background worker", f"{running}; last run {last}"),
        ("backlog", f"{waiting}, {backlog.get('with_error')} with errors" + _eta(cold)),
        ("llm today", used if cold.get("llm_configured") else "none configured"),
    ]


def _eta(cold: dict[str, object]) -> str:
    """The vector backlog's time left at the worker's measured pace (``""``: no backlog)."""
    eta = cold.get("embed_eta")
    return f"; vectors: {eta}" if isinstance(eta, str) else ""


def _pgvector_line(version: str | None, available: bool) -> str:
    if version:
        return f"yes ({version})"
    where = "not created in this database" if available else "not available on this server"
    return f"{where}: search runs full-text only"


def _print_health(report: object) -> None:
    from agents_memory.store.health import DatabaseHealth

    assert isinstance(report, DatabaseHealth)
    lines = [
        ("database", f"{report.mode}: {report.location}"),
        ("server", report.server_version or "unreachable"),
        ("pgvector", _pgvector_line(report.pgvector_version, report.pgvector_available)),
        (
            "embeddings",
            f"{report.embedding_model} ({report.embedding_dim} dims)"
            if report.embedding_dim
            else "none stored yet",
        ),
        ("schema", f"version {report.schema_version} of {report.schema_latest}"),
        (
            "memories",
            f"{report.rows_total} ({report.rows_active} active, "
            f"{report.rows_archived} archived, {report.rows_pinned} pinned)",
        ),
        ("platforms", ", ".join(f"{k} {v}" for k, v in report.rows_by_platform.items()) or "-"),
        ("capture cursors", str(report.cursors)),
    ]
    if report.shared_buffers_bytes is not None:
        index = (
            f"; vector index {human_bytes(report.vector_index_bytes)}"
            if report.vector_index_bytes is not None
            else ""
        )
        kept = "; read back after a restart" if report.cache_prewarm else ""
        lines.append(
            ("cache", f"shared_buffers {human_bytes(report.shared_buffers_bytes)}{index}{kept}")
        )
    if report.data_dir:
        lines.append(("data dir", f"{report.data_dir} ({human_bytes(report.data_dir_bytes)})"))
    lines.extend(_coldpath_lines(report.coldpath))
    width = max(len(k) for k, _ in lines)
    for key, value in lines:
        click.echo(f"{key:<{width}}  {value}")
    if report.secret_scan is not None:
        for line in _secret_lines(report.secret_scan):
            click.echo(f"{'secrets':<{width}}  {line}")
    for note in report.notes:
        click.echo(f"note: {note}")
    for problem in report.problems:
        click.echo(f"problem: {problem}", err=True)
    click.echo("healthy" if report.healthy else "NOT healthy")


def _secret_lines(scan: SecretScan) -> list[str]:
    """Kinds and ids, never values: memory rows, agreement of the detectors, summaries,
    profiles, actions."""

    def ids(values: list[int]) -> str:
        return ", ".join(map(str, values[:5])) + (" …" if len(values) > 5 else "")

    found = (
        ", ".join(
            f"{k} in {v} rows (ids {ids(scan.example_ids[k])})"
            for k, v in sorted(scan.kinds.items())
        )
        or "none"
    )
    lines = [f"{scan.rows_scanned} rows scanned; secrets found: {found}"]
    if scan.memory_ids:
        a = scan.agreement
        lines.append(
            f"rows flagged by both detectors {a.get('both', 0)}, by the redactor only "
            f"{a.get('redactor_only', 0)}, by the second opinion only "
            f"{a.get('second_opinion_only', 0)}"
        )
    for what, scanned, by_kind, unit in (
        ("summaries", scan.summaries_scanned, scan.summary_ids, "summary ids"),
        (
            "session summaries",
            scan.session_summaries_scanned,
            scan.session_summary_ids,
            "session summary ids",
        ),
        ("profiles", scan.profiles_scanned, scan.profile_user_ids, "user ids"),
        ("actions", scan.actions_scanned, scan.action_ids, "action ids"),
    ):
        listed = ", ".join(f"{k} ({unit} {ids(v)})" for k, v in sorted(by_kind.items()))
        lines.append(f"{scanned} {what} scanned; secrets found: {listed or 'none'}")
    return lines


def _register_commands() -> None:
    for name, target in (
        ("search", "agents_memory.cli.search:search"),
        ("actions", "agents_memory.cli.actions:actions"),
        ("tags", "agents_memory.cli.tags:tags"),
        ("team", "agents_memory.cli.team:team"),
        ("coldpath", "agents_memory.cli.coldpath:coldpath"),
        ("reembed", "agents_memory.cli.coldpath:reembed"),
        ("export", "agents_memory.cli.data:export_cmd"),
        ("import", "agents_memory.cli.data:import_cmd"),
        ("forget", "agents_memory.cli.owner:forget"),
        ("restore", "agents_memory.cli.owner:restore"),
        ("db", "agents_memory.cli.db:db"),
        ("ui", "agents_memory.cli.ui:ui"),
        ("recall", "agents_memory.cli.recall:recall"),
        ("memory", "agents_memory.cli.recall:memory"),
    ):
        cli.add_lazy(name, target)


_register_commands()


def main() -> None:
    run_main(cli)


if __name__ == "__main__":
    main()
