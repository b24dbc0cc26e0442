"""Per-prompt recall on a real database: silence by default (an acknowledgement, a weak best
hit, an excluded project, a paused client), the prompt's project first, no turn of the current
session and nothing the session already got (by an earlier prompt or its brief), the lines'
format and bounds, and the record (a hash of the prompt, never its text)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.recall.prompt_lines import HEADER, MAX_CHARS, excerpt
from agents_memory.recall.prompt_recall import PromptRecall, recall_for_prompt
from agents_memory.recall.search import QueryVector
from agents_memory.recall.session import hook_output
from agents_memory.store.capture.pause import set_pause
from agents_memory.store.knowledge import archive_memory
from agents_memory.store.memories import NewMemory, ensure_user
from agents_memory.store.search import SearchTuning
from agents_memory.store.search.words import content_words
from tests.search.helpers import add, mem

BAR = replace(SearchTuning(), speak_above=0.08)
"""Full text only, a hit holding every word of a three-word prompt has a confidence of 0.10
(of a four-word prompt in its project 0.18), one holding half of them 0.04 or less: a bar
between the two."""


def _no_vector(text: str) -> QueryVector:
    return QueryVector(None)


def _repo(tmp_path: Path, name: str) -> str:
    root = tmp_path / name
    (root / ".git").mkdir(parents=True)
    return str(root)


def _in(row: NewMemory, root: str, session: str | None = None) -> NewMemory:
    return replace(row, cwd=root, git_root=root, session_id=session or row.session_id)


def _ask(
    conn: psycopg.Connection[Any],
    settings: Settings,
    prompt: str,
    *,
    cwd: str | None = None,
    session: str = "new-session",
    tuning: SearchTuning | None = BAR,
    record: bool = True,
    vector: Any = _no_vector,
) -> PromptRecall:
    uid = ensure_user(conn, settings.user_name)
    event = {"prompt": prompt, "cwd": cwd, "session_id": session}
    return recall_for_prompt(
        conn, settings, uid, "claude-code", event, vector=vector, record=record, tuning=tuning
    )


def test_a_related_prompt_gets_its_memory_in_one_line(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    root = _repo(tmp_path, "payments")
    (mid,) = add(
        conn, [_in(mem("the staging database listens on port 5433", role="assistant"), root)]
    )
    add(conn, [mem("lunch order for friday")])
    got = _ask(conn, settings, "which port does the staging database listen on?", cwd=root)
    assert got.reason == "added" and got.memory_ids == (mid,) and got.scope == "project"
    header, line = got.text.splitlines()
    assert header == HEADER
    assert line.startswith("- 20") and " claude-code payments: " in line
    assert line.endswith(f"the staging database listens on port 5433 (id {mid})")
    assert got.best >= BAR.speak_above


def test_silence_for_an_acknowledgement_without_a_search(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    add(conn, [mem("ok so the staging port is 5433")])
    asked: list[str] = []

    def vector(text: str) -> QueryVector:
        asked.append(text)
        return QueryVector(None)

    for prompt in ("ok", "/clear", "continue", "merci", "继续"):
        got = _ask(conn, settings, prompt, vector=vector)
        assert (got.text, got.reason) == ("", "ack")
    assert asked == []


def test_silence_when_the_best_hit_is_weak(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    add(conn, [mem("the staging database listens on port 5433")])
    got = _ask(conn, settings, "how many moons does jupiter have?")
    assert (got.text, got.memory_ids) == ("", ())
    assert got.reason in ("weak", "none")
    half = _ask(conn, settings, "which port does the production cache use?")
    assert half.text == "" and half.best < BAR.speak_above
    shipped = _ask(conn, settings, "which port does jupiter's cache use?", tuning=None)
    assert shipped.text == "" and 0 < shipped.best < SearchTuning().speak_above
    held = _ask(conn, settings, "the staging database port?", tuning=None, session="s-2")
    assert held.reason == "added", "a hit holding every word clears the shipped bar"


def test_the_project_comes_first_then_everywhere(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    mine, other, third = (_repo(tmp_path, n) for n in ("mine", "other", "third"))
    a, b = add(
        conn,
        [
            _in(mem("deploys go to fly.io through make release", age_days=5), mine),
            _in(mem("deploys go to fly.io through make release", age_days=1), other),
        ],
    )
    here = _ask(conn, settings, "how do deploys go, make release to fly.io?", cwd=mine)
    assert here.memory_ids == (a,) and here.scope == "project"
    prompt = "how do deploys go, make release to fly.io?"
    elsewhere = _ask(conn, settings, prompt, cwd=third, session="s-2")
    assert elsewhere.scope == "everywhere" and set(elsewhere.memory_ids) == {a, b}


def test_no_turn_of_this_session_and_nothing_given_twice(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    first, second = add(
        conn,
        [
            mem("the retry budget of the tailer is five attempts", session="s-now"),
            mem("the retry budget of the tailer is five attempts", session="s-old", age_days=3),
        ],
    )
    prompt = "what is the retry budget of the tailer?"
    got = _ask(conn, settings, prompt, session="s-now")
    assert got.memory_ids == (second,), "the current session's own turn is not recalled"
    again = _ask(conn, settings, prompt, session="s-now")
    assert again.text == "" and again.memory_ids == ()
    other = _ask(conn, settings, prompt, session="s-other")
    assert set(other.memory_ids) == {first, second}


def test_a_turn_the_brief_showed_is_not_given_again(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    root = _repo(tmp_path, "briefed")
    (shown,) = add(conn, [_in(mem("the cache key includes the tenant id now"), root)])
    uid = ensure_user(conn, settings.user_name)
    event = {"session_id": "s-brief", "cwd": root}
    assert "tenant id" in hook_output(conn, settings, uid, "claude-code", event)
    prompt = "does the cache key include the tenant id?"
    assert _ask(conn, settings, prompt, cwd=root, session="s-brief").memory_ids == ()
    assert _ask(conn, settings, prompt, cwd=root, session="s-fresh").memory_ids == (shown,)


def test_an_excluded_project_or_a_paused_client_gets_nothing(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str, tmp_path: Path
) -> None:
    secret, open_ = _repo(tmp_path, "acme-private"), _repo(tmp_path, "public")
    (kept,) = add(conn, [_in(mem("the signing key rotates every ninety days"), open_)])
    add(conn, [_in(mem("the signing key rotates every ninety days"), secret)])
    settings = make_settings(database_url=db_url, capture_exclude="*-private")
    prompt = "does the signing key rotate every ninety days?"
    inside = _ask(conn, settings, prompt, cwd=secret)
    assert (inside.reason, inside.text) == ("excluded", "")
    outside = _ask(conn, settings, prompt, cwd=_repo(tmp_path, "third"))
    assert outside.memory_ids == (kept,), "the excluded project's turn is never shown"
    set_pause(conn, settings.device_name, "claude-code", None)
    conn.commit()
    assert _ask(conn, settings, prompt).reason == "paused"
    rows = conn.execute("SELECT outcome FROM prompt_recalls ORDER BY id").fetchall()
    assert [r[0] for r in rows] == ["added"], "nothing is recorded inside or while paused"


def test_an_archived_turn_is_never_recalled(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    (gone,) = add(conn, [mem("the flaky test polls with a deadline now")])
    archive_memory(conn, gone)
    conn.commit()
    assert _ask(conn, settings, "the flaky test polls with a deadline?").memory_ids == ()


def test_at_most_three_lines_within_the_budget(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    filler = "unrelated words about something else entirely " * 40
    add(
        conn,
        [mem(f"{filler} the gateway timeout is thirty seconds ({i}) {filler}") for i in range(6)],
    )
    got = _ask(conn, settings, "what is the gateway timeout in seconds?")
    assert got.reason == "added" and len(got.memory_ids) == 3
    lines = got.text.splitlines()
    assert len(lines) == 4 and len(got.text) <= MAX_CHARS
    for line in lines[1:]:
        assert "gateway timeout is thirty seconds" in line, "the excerpt is around the words"
        assert ": …" in line and "… (id " in line


def test_the_excerpt_is_around_the_matching_words() -> None:
    text = "start of the turn " * 30 + "the E4821 error came from the pool" + " tail" * 80
    cut = excerpt(text, content_words("what caused E4821?"), 120)
    assert "E4821" in cut and cut.startswith("…") and cut.endswith("…") and len(cut) <= 120
    assert excerpt("short turn", content_words("short"), 120) == "short turn"


def test_the_record_holds_a_hash_never_the_prompt(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    (mid,) = add(conn, [mem("the webhook secret lives in the vault under billing")])
    prompt = "webhook secret in the vault under billing? my token is swordfish"
    low = replace(BAR, speak_above=0.05)
    got = _ask(conn, settings, prompt, session="s-rec", tuning=low)
    preview = _ask(conn, settings, prompt, session="s-rec", record=False, tuning=low)
    assert got.memory_ids == (mid,) and preview.memory_ids == ()
    row = conn.execute(
        "SELECT kind, session_id, outcome, memory_ids, best, prompt_hash FROM prompt_recalls"
    ).fetchall()
    assert len(row) == 1
    kind, session, outcome, ids, best, digest = row[0]
    assert (kind, session, outcome, ids) == ("prompt", "s-rec", "added", [mid])
    assert best == pytest.approx(got.best, abs=1e-3) and len(digest) == 12
    dump = str(conn.execute("SELECT * FROM prompt_recalls").fetchall())
    assert "swordfish" not in dump and "webhook" not in dump


def test_a_word_written_like_code_weighs_more(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    (mid,) = add(conn, [mem("`loadTaxRates` lives in src/billing/tax.py", role="assistant")])
    prompt = "I want to refactor loadTaxRates, where is it?"
    shipped = _ask(conn, settings, prompt, tuning=None, record=False)
    assert shipped.memory_ids == (mid,)
    flat = replace(SearchTuning(), identifier_weight=1.0)
    assert _ask(conn, settings, prompt, tuning=flat, record=False).memory_ids == ()


def test_the_prompts_project_counts_as_a_word_each_of_its_hits_holds(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    mine, other = _repo(tmp_path, "mine"), _repo(tmp_path, "other")
    (mid,) = add(conn, [_in(mem("releases are tagged by the ship script"), mine)])
    prompt = "how do I cut a release?"  # two words; the turn holds one: confidence 0.013
    bar = replace(SearchTuning(), speak_above=0.02)  # with the project as a third word: 0.032
    here = _ask(conn, settings, prompt, cwd=mine, tuning=bar, record=False)
    there = _ask(conn, settings, prompt, cwd=other, tuning=bar, record=False)
    assert here.memory_ids == (mid,) and here.scope == "project"
    assert there.memory_ids == () and there.best < bar.speak_above < here.best
