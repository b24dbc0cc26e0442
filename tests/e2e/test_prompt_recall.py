"""Per-prompt recall in the real clients that have a per-prompt hook (Claude Code and Codex
``UserPromptSubmit``, Gemini CLI ``BeforeAgent``, OpenCode's and Hermes's plugins): after
``memory-capture install``, the model request of a prompt that an old memory answers carries
that memory; the request of an unrelated prompt carries nothing of it; and capture does not
store the added memory back as the user's words. Offline, with the fake model (it logs every
request). Hermes's uninstall leaves its plugin neither enabled nor on disk."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.adapters import get_adapter, hermes_plugin
from agents_memory.store.embedded import EmbeddedServer, ServerInfo
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.e2e.clis import CLIS, AgentCli
from tests.e2e.conftest import fresh_database, installed_cli
from tests.e2e.fake_model import text_of
from tests.e2e.harness import Ran, Workspace, model_server, priority, run
from tests.e2e.scenario import (
    USER,
    prepare_database,
    product_command,
    stored_rows,
    write_product_settings,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

ANSWER = "make vault-relogin-9931"
FACT = f"The nightly export job fails with error QX-4471 when the vault token expired; {ANSWER}."
WITH_HOOK = [p for p in CLIS if get_adapter(p).prompt_hook_event is not None]
STEP_TIMEOUT = 300.0
"""OpenCode with a plugin waits at every start for an npm install of its plugin package, which
fails only after about 70 s offline (adapters/opencode_plugin.py); the others need far less."""


def _word_nonce() -> str:
    """A nonce the fake model finds (``nonce-`` and eight of a-f) that reads as one plain word
    to the search: an ``E2E-<hex>`` nonce is a token written like code, which the gate rightly
    weighs heavily when no memory holds it (no real prompt carries a foreign identifier of ours)."""
    return "nonce-" + "".join("abcdef"[b % 6] for b in uuid.uuid4().bytes[:8])


@dataclass(slots=True)
class Recalled:
    platform: str
    related_nonce: str = field(default_factory=_word_nonce)
    unrelated_nonce: str = field(default_factory=_word_nonce)
    steps: dict[str, Ran] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    config_after: str | None = None
    """Hermes: ``config.yaml`` after uninstall."""
    plugin_left: bool = False
    """Hermes: whether our plugin's directory is still there after uninstall."""

    def about(self, nonce: str, *, not_about: str = "") -> list[str]:
        """The model requests of the prompt with ``nonce`` (and not of the one with
        ``not_about``: a later prompt's recall may quote an earlier turn)."""
        texts = [text_of(r.get("body")) for r in self.requests]
        return [t for t in texts if nonce in t and not (not_about and not_about in t)]

    def excerpt(self) -> str:
        return "\n".join(r.tail() for r in self.steps.values())


def _seed_old_fact(conninfo: str) -> None:
    """A turn from another session, two months old: no brief carries it, a search finds it."""
    with psycopg.connect(conninfo) as conn:
        user_id = ensure_user(conn, USER)
        old = datetime.now(UTC) - timedelta(days=60)
        fact = NewMemory(
            "codex-cli", "user", FACT, external_uuid="e2e-qx", message_at=old, session_id="old"
        )
        insert_memories(conn, user_id, [fact])


@pytest.fixture(scope="module", params=WITH_HOOK, ids=WITH_HOOK)
def recalled(
    request: pytest.FixtureRequest, e2e_machine: None, pg_server: tuple[EmbeddedServer, ServerInfo]
) -> Iterator[Recalled]:
    platform: str = request.param
    cli: AgentCli = CLIS[platform](installed_cli(platform))
    base = Path(tempfile.mkdtemp(prefix=f"am-e2e-recall-{platform}-"))
    ws = Workspace(
        home=base / "home",
        project=base / "project",
        bin_dirs=[cli.installed.bin_dir, product_command("memory-capture").parent],
        # the hook's 300 ms budget is for a machine at rest (bench/hook_latency.py times it);
        # a cold interpreter under this suite's load would fail open and make it flaky
        extra_env={"PROMPT_HOOK_TIMEOUT_MS": "30000"},
    )
    for directory in (ws.home / "tmp", ws.project, base / "logs"):
        directory.mkdir(parents=True)
    _server, info = pg_server
    outcome = Recalled(platform)
    with fresh_database(info, f"e2e_recall_{platform.replace('-', '_')}_{os.getpid()}") as db:
        prepare_database(db)
        _seed_old_fact(db)
        write_product_settings(ws.home, db)
        cli.prepare(ws)
        if platform == "opencode":  # install adds ours where the user has plugins already
            users_own = ws.home / ".config" / "opencode" / "plugins" / "users-own.js"
            users_own.parent.mkdir(parents=True)
            users_own.write_text("export {}\n", encoding="utf-8")
        env, cwd = ws.env(), ws.project
        capture = [*priority(), str(product_command("memory-capture"))]
        outcome.steps["install"] = run(
            [*capture, "install", "--platform", platform, "--yes"], env=env, cwd=cwd
        )
        cli.after_install(ws)
        with model_server(base / "logs" / "requests.jsonl", expect="", tool_args={}) as model:
            unrelated = f"Write a haiku about autumn leaves on a pond. {outcome.unrelated_nonce}"
            outcome.steps["unrelated"] = run(
                model.wrap(cli.headless(unrelated)), env=env, cwd=cwd, timeout=STEP_TIMEOUT
            )
            related = (
                "The nightly export job fails with error QX-4471 again, the vault token "
                f"expired; how do we fix it? {outcome.related_nonce}"
            )
            outcome.steps["related"] = run(
                model.wrap(cli.headless(related)), env=env, cwd=cwd, timeout=STEP_TIMEOUT
            )
            outcome.requests = model.requests()
        backfill = [*capture, "backfill", "--platform", platform, "--json"]
        outcome.steps["backfill"] = run(backfill, env=env, cwd=cwd)
        outcome.rows = stored_rows(db)
        outcome.steps["uninstall"] = run(
            [*capture, "uninstall", "--platform", platform, "--yes"], env=env, cwd=cwd
        )
        outcome.steps["stop daemon"] = run([*capture, "stop"], env=env, cwd=cwd)
        if platform == "hermes":
            config = ws.home / ".hermes" / "config.yaml"
            outcome.config_after = config.read_text("utf-8") if config.exists() else None
            outcome.plugin_left = hermes_plugin.plugin_dir(ws.home).exists()
        yield outcome
    if os.environ.get("E2E_KEEP") != "1":
        shutil.rmtree(base, ignore_errors=True)


def test_a_related_prompt_reaches_the_model_with_the_memory_it_needs(recalled: Recalled) -> None:
    assert recalled.steps["install"].returncode == 0, recalled.steps["install"].tail()
    assert recalled.steps["related"].returncode == 0, recalled.excerpt()
    requests = recalled.about(recalled.related_nonce)
    assert requests, f"the fake model saw no request for the prompt\n{recalled.excerpt()}"
    assert ANSWER in requests[0], f"the memory did not reach the model\n{recalled.excerpt()}"
    assert "hookSpecificOutput" not in requests[0], "the model got the hook's JSON"


def test_an_unrelated_prompt_reaches_the_model_with_nothing_of_ours(recalled: Recalled) -> None:
    assert recalled.steps["unrelated"].returncode == 0, recalled.excerpt()
    requests = recalled.about(recalled.unrelated_nonce, not_about=recalled.related_nonce)
    assert requests, f"the fake model saw no request for the prompt\n{recalled.excerpt()}"
    assert not any(ANSWER in text or "QX-4471" in text for text in requests), requests[0][-3000:]


def test_capture_does_not_store_the_added_memory_as_the_users_words(recalled: Recalled) -> None:
    assert recalled.steps["backfill"].returncode == 0, recalled.steps["backfill"].tail()
    captured = [r for r in recalled.rows if r["source"] == "capture" and r["session_id"] != "old"]
    asked = [r for r in captured if r["role"] == "user" and recalled.related_nonce in r["message"]]
    assert len(asked) == 1, captured
    assert ANSWER not in asked[0]["message"], asked[0]["message"]
    assert recalled.steps["uninstall"].returncode == 0, recalled.steps["uninstall"].tail()


def test_hermes_uninstall_disables_and_deletes_the_plugin(recalled: Recalled) -> None:
    if recalled.platform != "hermes":
        pytest.skip("Hermes's plugin only")
    assert recalled.steps["uninstall"].returncode == 0, recalled.steps["uninstall"].tail()
    assert not recalled.plugin_left, recalled.steps["uninstall"].tail()
    assert not hermes_plugin.is_enabled(recalled.config_after), recalled.config_after
    assert "entries" not in (recalled.config_after or ""), recalled.config_after
