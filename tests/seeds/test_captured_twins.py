"""Seed A after capture: the turns capture already stored from the same transcripts are not
imported a second time (seed A keyed them by line, we by the transcript's time and text).
The real transcript captured by the product's backfill, a seed A database built from its
schema, the real ``mcp-agents-memory import --from seed-a``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.config import Settings
from tests.owner.helpers import (
    SPOTTER_SESSION,
    count,
    env_for,
    place_spotter,
    run,
    run_backfill,
    session_rows,
)

MakeSeed = Callable[[int], tuple[str, dict[str, int]]]
NEW_TURN = "A turn seed A caught that the transcript on this disk no longer holds"


def test_seed_a_turns_capture_already_holds_are_counted_not_imported_again(
    settings: Settings,
    db_url: str,
    tmp_path: Path,
    conn: psycopg.Connection[Any],
    make_seed_a: MakeSeed,
) -> None:
    place_spotter(tmp_path)
    run_backfill(settings, tmp_path)
    captured = conn.execute(
        "SELECT role, message FROM memory WHERE session_id = %s ORDER BY message_at, id",
        (SPOTTER_SESSION,),
    ).fetchall()
    conn.commit()
    assert len(captured) == 3
    url, ids = make_seed_a(3072)
    with psycopg.connect(url) as seed:
        for n, (role, message) in enumerate([*captured, ("user", NEW_TURN)]):
            seed.execute(
                "INSERT INTO memory (user_id, agent_platform, role, message, external_uuid,"
                " venue, created_at) VALUES (%s, 'claude-code', %s, %s, %s, 'terminal', now())",
                (
                    ids["user"],
                    role,
                    f"  {message}\n" if n == 0 else message,  # seed A's own trimming
                    f"claude-code:{SPOTTER_SESSION}:line-{n}",
                ),
            )
    before = session_rows(conn, SPOTTER_SESSION)

    done = run(
        "mcp-agents-memory", "import", "--from", "seed-a", url, env=env_for(db_url, tmp_path)
    )

    assert done.returncode == 0, done.stderr
    assert (
        "3 memories already captured from their transcripts (same session, role and text)"
        in done.stdout
    )
    assert session_rows(conn, SPOTTER_SESSION) == before + 1  # only the turn capture lacks
    assert (
        count(
            conn, "SELECT count(*) FROM memory WHERE message = %s AND source = 'import'", NEW_TURN
        )
        == 1
    )
    again = run(
        "mcp-agents-memory", "import", "--from", "seed-a", url, env=env_for(db_url, tmp_path)
    )
    assert again.returncode == 0, again.stderr
    assert session_rows(conn, SPOTTER_SESSION) == before + 1


def test_a_backfill_after_seed_a_skips_the_turns_the_import_brought(
    settings: Settings,
    db_url: str,
    tmp_path: Path,
    conn: psycopg.Connection[Any],
    make_seed_a: MakeSeed,
) -> None:
    """The other order: seed A imported first, then the same transcript backfilled through
    the real ``memory-capture backfill``: each turn is stored once (the imported row)."""
    place_spotter(tmp_path)
    run_backfill(settings, tmp_path)  # only to learn the turns' admitted texts
    captured = conn.execute(
        "SELECT role, message FROM memory WHERE session_id = %s ORDER BY message_at, id",
        (SPOTTER_SESSION,),
    ).fetchall()
    conn.execute("DELETE FROM memory")
    conn.execute("DELETE FROM capture_cursors")
    conn.commit()
    assert len(captured) == 3
    url, ids = make_seed_a(3072)
    with psycopg.connect(url) as seed:
        for n, (role, message) in enumerate(captured):
            seed.execute(
                "INSERT INTO memory (user_id, agent_platform, role, message, external_uuid,"
                " venue, created_at) VALUES (%s, 'claude-code', %s, %s, %s, 'terminal', now())",
                (ids["user"], role, f"{message}\n\n", f"claude-code:{SPOTTER_SESSION}:line-{n}"),
            )
    env = env_for(db_url, tmp_path)
    imported = run("mcp-agents-memory", "import", "--from", "seed-a", url, env=env)
    assert imported.returncode == 0, imported.stderr
    assert session_rows(conn, SPOTTER_SESSION) == 3

    done = run("memory-capture", "backfill", env=env)

    assert done.returncode == 0, done.stderr
    assert session_rows(conn, SPOTTER_SESSION) == 3, done.stdout
    assert count(conn, "SELECT count(*) FROM memory WHERE source = 'capture'") == 0
