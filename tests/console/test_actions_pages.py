"""The console shows actions: a search finds a turn through its action (the action's line
under the hit) and takes ``kind`` / ``file``; the session page lists each turn's actions
(tool, kind, targets, outcome, excerpt) folded under it; the timeline shows or hides actions
and keeps the turns that made an action of a kind. The real app over the pool captured from
the real fixtures (its Codex session has edits and a rejected patch)."""

from __future__ import annotations

import re
from typing import Any

from starlette.testclient import TestClient

from agents_memory.console.context import Console
from agents_memory.recall.actions import KINDS


def _codex_session(console: Console) -> tuple[str, str]:
    with console.state.pool.connection() as conn:
        row = conn.execute(
            "SELECT agent_platform, session_id FROM actions WHERE outcome = 'error' LIMIT 1"
        ).fetchone()
    assert row is not None
    return str(row[0]), str(row[1])


def _count(console: Console, sql: str) -> int:
    with console.state.pool.connection() as conn:
        row: Any = conn.execute(sql).fetchone()
    return int(row[0])


def _absent_kind(console: Console) -> str:
    with console.state.pool.connection() as conn:
        kinds = {str(r[0]) for r in conn.execute("SELECT DISTINCT kind FROM actions")}
    return next(k for k in KINDS if k not in kinds)


def test_search_finds_a_turn_through_its_action_and_takes_kind_and_file(
    client: TestClient, console: Console
) -> None:
    absent = _absent_kind(console)
    found = client.get("/search?q=patch+rejected")
    edits = client.get("/search?kind=edit&file=README")
    none = client.get(f"/search?q=patch&kind={absent}")
    bad = client.get("/search?q=x&kind=teleport")

    assert found.status_code == 200
    assert "shell `applypatch &lt;&lt; &#39;PATCH&#39;…` → error: patch rejected" in found.text
    assert "action #1" in found.text
    assert edits.status_code == 200
    lines = re.findall(r"<li>(edit [^<]*)</li>", edits.text)
    assert lines and all("README" in line for line in lines), lines
    assert "option selected>edit</option>" in edits.text and 'value="README"' in edits.text
    assert (
        none.status_code == 200 and f"no action in scope with kind &#39;{absent}&#39;" in none.text
    )
    assert bad.status_code == 400 and "kind must be one of" in bad.text


def test_the_session_page_lists_each_turns_actions_folded(
    client: TestClient, console: Console
) -> None:
    platform, session = _codex_session(console)
    stored = _count(
        console,
        f"SELECT count(*) FROM actions WHERE session_id = '{session}'",
    )

    html = client.get(f"/session?platform={platform}&id={session}").text

    assert f"<dd>{stored} tool call(s)" in html
    rows = re.findall(r'<tr class="action kind-(\w+) outcome-(\w+)">', html)
    assert len(rows) == stored
    assert ("shell", "error") in rows and ("edit", "ok") in rows
    assert '<details class="actions"><summary>' in html
    assert '<pre class="excerpt">patch rejected: empty patch</pre>' in html
    assert "README.zh-TW.md" in html


def test_the_timeline_shows_hides_and_filters_actions_by_kind(
    client: TestClient, console: Console
) -> None:
    hidden = client.get("/timeline").text
    shown = client.get("/timeline?actions=show").text
    edits = client.get("/timeline?kind=edit").text
    linked = _count(console, "SELECT count(DISTINCT memory_id) FROM actions WHERE kind = 'edit'")

    assert 'class="action ' not in hidden
    assert 'class="action kind-shell' in shown and 'class="action kind-edit' in shown
    kinds = set(re.findall(r'<tr class="action kind-(\w+)', edits))
    assert kinds == {"edit"}
    articles = edits.split('<article class="turn')[1:]
    assert len(articles) >= linked  # and a tool-only response's edit placed in its exchange
    assert all('<tr class="action kind-edit' in a for a in articles)
    assert client.get("/timeline?kind=teleport").status_code == 400


def test_a_kind_no_action_has_matches_no_turns(client: TestClient, console: Console) -> None:
    assert "No turns match." in client.get(f"/timeline?kind={_absent_kind(console)}").text
