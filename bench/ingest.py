"""Backfill throughput per client format against binary COPY of the same rows (SPEC §12:
≥ 20,000 turns/s parse+redact+store on 2 cores; target ≥ 0.5x COPY).

    python -m bench.ingest --turns 100000 [--platforms claude-code,codex-cli] [--repeat 1]
                           [--profile-turns 20000]

For each platform: synthetic transcripts (``bench/synth.py``) are written under a temp HOME and
imported by the product's ``backfill`` into a fresh database; then the rows it stored are
exported with ``COPY … TO STDOUT (FORMAT BINARY)`` and loaded into another fresh database with the
same schema and indexes by ``COPY … FROM STDIN (FORMAT BINARY)`` — the physical limit for writing
those rows into that table. A cProfile of one backfill shows where the time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import time
from pathlib import Path

import psycopg

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.capture.pipeline import Ingestor
from agents_memory.store.capture.cursors import Cursor
from bench import common, synth

_COLUMNS = (
    "user_id, agent_platform, agent_model, subagent, subagent_model, subagent_role, role,"
    " message, raw_message, external_uuid, device_name, session_id, cwd, git_root, git_remote,"
    " source, message_at, is_pinned, tag_processed"
)


def _backfill(db: common.BenchDB, dbname: str) -> tuple[float, int]:
    common_settings = db.settings(dbname, embedding_backend="none")
    db.create_database(dbname)
    report = backfill(common_settings, Catalog(all_adapters(), db.home))
    return report.seconds, report.stored


def _parse_cost(db: common.BenchDB) -> float:
    """Process CPU microseconds per stored turn to read, parse, filter and redact the files
    under ``db.home`` with no database: the work the backfill's read-ahead thread does."""
    ingestor = Ingestor(
        db.settings("probe", embedding_backend="none"), user_id=1, has_vector=False, home=db.home
    )
    rows = 0
    started = time.process_time()
    for path, adapter in Catalog(all_adapters(), db.home).transcripts():
        cursor = Cursor(adapter.name, "bench", str(path))
        while (read := ingestor.read(path, adapter, cursor, final=True)) is not None:
            rows += len(read.rows)
            if not read.more:
                break
            cursor = read.advanced(cursor)
    return (time.process_time() - started) / max(rows, 1) * 1e6


def _export(db: common.BenchDB, source: str) -> tuple[bytes, list[tuple[int, str]]]:
    with psycopg.connect(db.url(source)) as conn:
        buf = io.BytesIO()
        with conn.cursor().copy(
            f"COPY (SELECT {_COLUMNS} FROM memory ORDER BY id) TO STDOUT (FORMAT BINARY)"
        ) as copy:
            for chunk in copy:
                buf.write(chunk)
        users = conn.execute("SELECT user_id, user_name FROM users").fetchall()
    return buf.getvalue(), [(int(u), str(n)) for u, n in users]


def _backend_cpu(pid: int) -> float:
    """CPU seconds a server process used so far (the embedded server runs on this machine)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _copy_baseline(
    db: common.BenchDB, source: str, target: str, drop: tuple[str, ...] = ()
) -> tuple[float, int, float]:
    """Seconds, rows and server CPU seconds of one binary COPY of ``source``'s rows."""
    data, users = _export(db, source)
    db.create_database(target)
    with psycopg.connect(db.url(target)) as conn:
        for uid, name in users:
            conn.execute("INSERT INTO users (user_id, user_name) VALUES (%s, %s)", (uid, name))
        for statement in drop:
            conn.execute(statement)
        conn.commit()
        cpu = _backend_cpu(conn.info.backend_pid)
        started = time.perf_counter()
        with conn.cursor().copy(f"COPY memory ({_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy:
            for i in range(0, len(data), 1 << 20):
                copy.write(data[i : i + (1 << 20)])
        conn.commit()
        seconds = time.perf_counter() - started
        cpu = _backend_cpu(conn.info.backend_pid) - cpu
        rows = conn.execute("SELECT count(*) FROM memory").fetchone()
    return seconds, int(rows[0]) if rows else 0, cpu


_SECONDARY = (
    "memory_fts",
    "memory_user_active_time",
    "memory_user_time",
    "memory_user_turns",
    "memory_session",
    "memory_untagged",
    "memory_unembedded",
    "memory_d_tag",
    "memory_p_tag",
    "memory_pinned",
    "memory_embedding_hnsw",
)
"""Every index on ``memory`` but its primary key and the unique ``external_uuid``."""


def _drop_secondary(keep: str = "") -> tuple[str, ...]:
    return tuple(f"DROP INDEX IF EXISTS {i}" for i in _SECONDARY if i != keep)


_NO_FTS = "ALTER TABLE memory DROP COLUMN fts"
_VARIANTS = (
    ("the product's table (all indexes, generated tsvector)", ()),
    ("without the GIN index on fts", ("DROP INDEX memory_fts",)),
    ("without the fts column (and its GIN index)", (_NO_FTS,)),
    ("without fts and without the 10 other secondary indexes", (_NO_FTS, *_drop_secondary())),
)
_CORE = "core (heap, primary key, unique external_uuid, FK, checks, trigger, fts column)"
_PER_PART = (
    (_CORE, _drop_secondary()),
    *((f"core + {i}", _drop_secondary(keep=i)) for i in _SECONDARY),
    ("core without the fts column", (*_drop_secondary(), _NO_FTS)),
    (
        "core without the memory_normalize trigger",
        (*_drop_secondary(), "DROP TRIGGER memory_normalize ON memory"),
    ),
    (
        "core without the user_id foreign key",
        (*_drop_secondary(), "ALTER TABLE memory DROP CONSTRAINT memory_user_id_fkey"),
    ),
    (
        "core without the unique external_uuid",
        (*_drop_secondary(), "ALTER TABLE memory DROP CONSTRAINT memory_external_uuid_key"),
    ),
    ("the product's table (all indexes, generated tsvector)", ()),
)


def _decompose(
    db: common.BenchDB,
    source: str,
    variants: tuple[tuple[str, tuple[str, ...]], ...] = _VARIANTS,
    repeat: int = 1,
) -> str:
    """Where COPY's own time goes: the same rows into the table minus parts of its schema.
    Server CPU (the COPY backend's, best of ``repeat``) is steadier than wall time on a busy
    machine; the difference to the first variant is what that part costs per row."""
    best: dict[str, tuple[float, float, int, str]] = {}
    for _ in range(repeat):
        for label, drop in variants:
            seconds, n, cpu = _copy_baseline(db, source, "decompose", drop)
            old = best.get(label)
            if old is None or cpu < old[1]:
                best[label] = (seconds, cpu, n, common.load_avg())
            print(
                f"  COPY {label}: {n / seconds:,.0f} rows/s, {cpu / n * 1e6:.1f} us/row", flush=True
            )
    first = best[variants[0][0]]
    rows = [
        (label, n, n / seconds, cpu / n * 1e6, (cpu - first[1]) / n * 1e6, load)
        for label, (seconds, cpu, n, load) in best.items()
    ]
    headers = ("target table", "rows", "COPY rows/s", "server CPU us/row", "vs first", "load 1/5")
    return (
        f"Where the physical limit goes (binary COPY of {first[2]:,} rows; best of {repeat}):"
        "\n\n" + common.table(headers, rows)
    )


def _decompose_only(turns: int, repeat: int) -> None:
    start_header = common.header(common.command_line())
    with common.bench_db() as db:
        synth.write_platform(db.home, "claude-code", turns)
        _backfill(db, "source")
        body = _decompose(db, "source", _PER_PART, repeat)
    print(body)
    common.write_section("Ingest: where COPY's time goes", start_header + "\n" + body)


def _profile(db: common.BenchDB, turns: int) -> str:
    shutil.rmtree(db.home, ignore_errors=True)
    db.home.mkdir()
    synth.write_platform(db.home, "claude-code", turns, seed=99)
    settings = db.settings("profile", embedding_backend="none")
    db.create_database("profile")
    profiler = cProfile.Profile()
    profiler.enable()
    report = backfill(settings, Catalog(all_adapters(), db.home))
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    rows = []
    for (file, _line, name), (_cc, _nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((ct, tt, f"{module_path(file)}:{name}"))
    rows.sort(reverse=True)
    keep = [
        r
        for r in rows
        if any(
            k in r[2]
            for k in (
                "agents_memory/",
                "psycopg/cursor.py:execute",
                "json/",
                "{method 'execute'",
                "re.Pattern",
            )
        )
    ][:28]
    lines = [
        f"cProfile of one claude-code backfill of {report.stored:,} turns ({report.seconds:.1f} s"
        f" under the profiler; total own time {total:.1f} s). The main thread only (the"
        " read-ahead thread's parsing is the parse+redact column). Cumulative / own seconds:",
        "",
        common.table(("cum s", "own s", "function"), [(c, t, f"`{n}`") for c, t, n in keep]),
    ]
    tops = sorted(rows, key=lambda r: r[1], reverse=True)[:12]
    lines += [
        "",
        "Top own time:",
        "",
        common.table(("own s", "function"), [(t, f"`{n}`") for _c, t, n in tops]),
    ]
    return "\n".join(lines)


def module_path(file: str) -> str:
    """``file`` from its package on (``agents_memory/store/memories.py``, ``json/decoder.py``),
    never the checkout or the machine it ran on."""
    parts = file.replace("\\", "/").split("/")
    for root in ("agents_memory", "bench", "psycopg", "json", "re"):
        if root in parts:
            return "/".join(parts[len(parts) - 1 - parts[::-1].index(root) :])
    return file.rsplit("site-packages/", maxsplit=1)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description="backfill throughput vs binary COPY")
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--platforms", default=",".join(synth.PLATFORMS))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--profile-turns", type=int, default=20_000, help="0 = no profile")
    parser.add_argument(
        "--decompose-only",
        action="store_true",
        help="only the COPY decomposition, index by index, on --turns Claude Code turns"
        " (its own section; --repeat runs, best kept)",
    )
    args = parser.parse_args()
    if args.decompose_only:
        _decompose_only(args.turns, args.repeat)
        return
    platforms = [p for p in args.platforms.split(",") if p]
    start_header = common.header(common.command_line())
    rows = []
    with common.bench_db() as db:
        versions = common.pg_versions(db.create_database("probe"))
        for platform in platforms:
            shutil.rmtree(db.home, ignore_errors=True)
            db.home.mkdir()
            turns, size = synth.write_platform(db.home, platform, args.turns)
            parse_us = _parse_cost(db)
            runs, copies = [], []
            stored = 0
            load = common.load_avg()
            for r in range(args.repeat):
                seconds, stored = _backfill(db, f"ingest_{r}")
                runs.append(seconds)
                copy_s, copied, _cpu = _copy_baseline(db, f"ingest_{r}", f"copy_{r}")
                assert copied == stored, (copied, stored)
                copies.append(copy_s)
            bf, cp = statistics.median(runs), statistics.median(copies)
            row = (
                platform,
                stored,
                f"{size / 1e6:.0f} MB",
                bf,
                stored / bf,
                stored / cp,
                (stored / bf) / (stored / cp),
                parse_us,
                load,
            )
            print(
                f"{platform}: {stored:,} turns in {bf:.1f} s = {stored / bf:,.0f}/s;"
                f" COPY {stored / cp:,.0f}/s; ratio {cp / bf:.2f} (load {load})",
                flush=True,
            )
            if stored != turns:
                print(f"  note: {turns:,} turns written, {stored:,} stored")
            rows.append(row)
        decompose = _decompose(db, f"ingest_{args.repeat - 1}") if platforms else ""
        profile = _profile(db, args.profile_turns) if args.profile_turns else ""
    body = "\n".join(
        [
            start_header,
            versions + "; backfill in-process (`agents_memory.capture.backfill.backfill`),"
            " redaction on, no embeddings; medians of "
            f"{args.repeat} run(s). Bar: ≥ 20,000 turns/s and ≥ 0.5x COPY. parse+redact: process"
            " CPU per turn of the reading alone (no database), which the backfill does in a"
            " read-ahead thread while the server stores the region before.",
            "",
            common.table(
                (
                    "platform",
                    "turns stored",
                    "file size",
                    "backfill s",
                    "backfill turns/s",
                    "COPY turns/s (baseline)",
                    "ratio",
                    "parse+redact us/turn",
                    "load 1/5",
                ),
                rows,
            ),
            "",
            decompose,
            "",
            profile,
        ]
    )
    print(body)
    common.write_section("Ingest (backfill throughput)", body)


if __name__ == "__main__":
    main()
