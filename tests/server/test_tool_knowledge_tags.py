"""``manage_knowledge`` tags what it stores in the same call (the tagger's heuristic: the
project of the repository it was said in, keyword d_tags), leaves the row to the Cold Path's
model when a tagger model is configured, and keeps seed A's platform and subagent fields.
Through the real MCP client."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from agents_memory.recall.state import open_state
from agents_memory.server.app import create_server
from tests.server.mcpcall import call, ok


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    for args in (["init", "-q"], ["remote", "add", "origin", "git@example.org:acme/shop.git"]):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return path


def _row(state: Any, memory_id: int) -> tuple[Any, ...]:
    with state.pool.connection() as conn:
        row = conn.execute(
            "SELECT t.name, m.d_tag, m.tag_processed, m.agent_platform, m.subagent,"
            " m.subagent_model, m.subagent_role FROM memory m"
            " LEFT JOIN project_tags t ON t.id = m.p_tag_id WHERE m.id = %s",
            (memory_id,),
        ).fetchone()
    assert row is not None
    return tuple(row)


FACT = "The shop's checkout service retries payments three times before failing"


def test_a_fact_is_tagged_in_the_same_call_with_its_repository_project(
    make_settings: Any, db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(database_url=db_url, embedding_backend="none")
    state = open_state(settings)
    try:
        state.cwd = str(_repo(tmp_path / "src" / "shop"))
        server = create_server(settings, state)
        args = {"action": "add", "content": FACT, "agent_platform": "codex", "subagent": True}
        args.update(subagent_model="gpt-5-mini", subagent_role=" Reviewer ")
        added = ok(call(server, "manage_knowledge", args))
        assert added["tagged"] == "ok"
        project, d_tags, done, platform, *speaker = _row(state, added["id"])
        assert project == "shop" and d_tags and done  # no tagger model: nothing more to do
        assert (platform, *speaker) == ("codex-cli", True, "gpt-5-mini", "reviewer")
    finally:
        state.close()


def test_with_a_tagger_model_the_cold_path_still_refines_the_row(
    make_settings: Any, db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(
        database_url=db_url, embedding_backend="none", llm_base_url="http://127.0.0.1:9/v1"
    )
    state = open_state(settings)
    try:
        state.cwd = str(_repo(tmp_path / "src" / "shop"))
        server = create_server(settings, state)
        added = ok(call(server, "manage_knowledge", {"action": "add", "content": FACT}))
        assert added["tagged"] == "ok"
        project, d_tags, done, _platform, subagent, *_ = _row(state, added["id"])
        assert project == "shop" and d_tags and not done  # queued for the model
        assert subagent is False
    finally:
        state.close()
