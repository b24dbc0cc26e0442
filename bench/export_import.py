"""Export and import throughput on a large pool, against ``pg_dump`` / ``pg_restore`` of the
same tables in the same run (issue 19: a 100k-turn export and import are benchmarked).

    python -m bench.export_import --turns 100000

A fresh database gets ``--turns`` synthetic turns (``bench/synth.py``'s texts, 2 % with a
secret, in sessions of 40 turns over 4 platforms and 5 projects) by binary COPY. Then, timed:

* **export**: the product's ``export()`` to a bundle (no vectors);
* **import**: ``import_bundle()`` of that bundle into an empty database (admission and
  redaction of every turn, staging, id remapping);
* **import again**: the same bundle into the same database (everything already present);
* **baseline**: ``pg_dump -Fc --data-only`` of the same tables (memory, users, project_tags)
  and ``pg_restore --data-only`` into another empty database with the same schema — the
  server's own bulk path, no checks and no remapping.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from agents_memory.ops.export import ExportRequest, export
from agents_memory.ops.importer import import_bundle
from agents_memory.store.embedded import bin_dir
from bench import common, synth

_PLATFORMS = ("claude-code", "codex-cli", "gemini-cli", "grok")
_COLUMNS = (
    "user_id, agent_platform, role, message, external_uuid, device_name, session_id, cwd,"
    " git_root, p_tag_id, source, message_at, tag_processed"
)


def _populate(url: str, turns: int) -> None:
    rng = random.Random(19)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with psycopg.connect(url) as conn:
        user = conn.execute("INSERT INTO users (user_name) VALUES ('bench') RETURNING user_id")
        uid = user.fetchone()[0]  # type: ignore[index]
        tags = [
            conn.execute(
                "INSERT INTO project_tags (name, git_root) VALUES (%s, %s) RETURNING id",
                (f"proj-{i}", f"/work/proj-{i}"),
            ).fetchone()[0]  # type: ignore[index]
            for i in range(5)
        ]
        with conn.cursor().copy(f"COPY memory ({_COLUMNS}) FROM STDIN") as copy:
            for n in range(turns):
                session, project = n // 40, (n // 400) % 5
                platform = _PLATFORMS[session % len(_PLATFORMS)]
                copy.write_row(
                    (
                        uid,
                        platform,
                        "user" if n % 2 == 0 else "assistant",
                        synth.text(rng, n),
                        f"{platform}:s{session}:{n}",
                        "bench-device",
                        f"s{session}",
                        f"/work/proj-{project}",
                        f"/work/proj-{project}",
                        tags[project],
                        "capture",
                        start + timedelta(seconds=30 * n),
                        True,
                    )
                )
        conn.commit()


def _pg_baseline(db: common.BenchDB, source: str, target: str, dump: Path) -> tuple[float, float]:
    """Seconds of ``pg_dump`` and of ``pg_restore`` of the same tables."""
    tables = [a for t in ("users", "project_tags", "memory") for a in ("-t", t)]
    dumped, _ = common.timed(
        subprocess.run,
        [
            str(bin_dir() / "pg_dump"),
            "-Fc",
            "--data-only",
            *tables,
            "-f",
            str(dump),
            "-d",
            db.url(source),
        ],
        check=True,
        capture_output=True,
    )
    db.create_database(target)
    restored, _ = common.timed(
        subprocess.run,
        [str(bin_dir() / "pg_restore"), "--data-only", "-d", db.url(target), str(dump)],
        check=True,
    )
    return dumped, restored


def main() -> None:
    parser = argparse.ArgumentParser(description="export/import throughput vs pg_dump/pg_restore")
    parser.add_argument("--turns", type=int, default=100_000)
    args = parser.parse_args()
    start_header = common.header(common.command_line())
    with common.bench_db() as db:
        db.create_database("source")
        _populate(db.url("source"), args.turns)
        bundle = db.base / "pool.zip"
        now = datetime.now().astimezone()
        exp, exported = common.timed(export, db.settings("source"), ExportRequest(bundle), now=now)
        db.create_database("target")
        target = db.settings("target", embedding_backend="none")
        imp, first = common.timed(import_bundle, target, bundle, home=db.home)
        again, second = common.timed(import_bundle, target, bundle, home=db.home)
        dumped, restored = _pg_baseline(db, "source", "restored", db.base / "pool.dump")
        versions = common.pg_versions(db.url("source"))
        size = bundle.stat().st_size
    n = exported.counts["memory"]
    assert first.tables["memory"].new == n and second.tables["memory"].present == n
    rows = [
        ("export (bundle, no vectors)", n, exp, n / exp, f"{size / 1e6:.1f} MB"),
        ("import into an empty pool", n, imp, n / imp, f"{first.reembed:,} queued to embed"),
        ("import again (all present)", n, again, n / again, "0 new"),
        ("baseline: pg_dump -Fc --data-only", n, dumped, n / dumped, "memory, users, tags"),
        ("baseline: pg_restore --data-only", n, restored, n / restored, "same tables"),
    ]
    body = "\n".join(
        [
            start_header,
            f"{versions}. {n:,} synthetic turns (bench/synth.py texts), redaction on.",
            "",
            common.table(("step", "turns", "seconds", "turns/s", "note"), rows),
            "",
            f"Export is {dumped / exp:.2f}x pg_dump's speed, import {restored / imp:.2f}x"
            " pg_restore's (which checks nothing, remaps nothing and redacts nothing).",
        ]
    )
    print(body)
    common.write_section("Export and import", body)


if __name__ == "__main__":
    started = time.monotonic()
    main()
    print(f"done in {time.monotonic() - started:.0f} s")
