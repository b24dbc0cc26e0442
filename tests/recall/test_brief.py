from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agents_memory.admission.echo import BRIEF_MARKER
from agents_memory.config import Settings
from agents_memory.recall.brief import BriefRequest, Section, build_brief, fit
from agents_memory.store.knowledge import set_profile
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _turn(
    i: int,
    platform: str,
    role: str,
    text: str,
    *,
    hours_ago: float,
    model: str | None = None,
    root: str | None = None,
    pinned: bool = False,
) -> NewMemory:
    return NewMemory(
        platform,
        role,
        text,
        external_uuid=f"b:{i}",  # type: ignore[arg-type]
        message_at=NOW - timedelta(hours=hours_ago),
        agent_model=model,
        git_root=root,
        is_pinned=pinned,
        device_name="dev",
    )


def _seed(conn: psycopg.Connection[Any]) -> int:
    uid = ensure_user(conn, "tester")
    set_profile(conn, uid, "core_profile", "Prefers Python and terse answers.", changed_by="test")
    set_profile(conn, uid, "sub_profile", "Working on the capture daemon.", changed_by="test")
    insert_memories(
        conn,
        uid,
        [
            _turn(1, "claude-code", "user", "How do cursors work?", hours_ago=5, root="/w/mem"),
            _turn(
                2,
                "claude-code",
                "assistant",
                "They advance in one transaction.",
                hours_ago=4.9,
                model="claude-opus-4-6",
                root="/w/mem",
            ),
            _turn(3, "codex-cli", "user", "Add a retry to the watcher", hours_ago=3, root="/w/mem"),
            _turn(
                4,
                "codex-cli",
                "assistant",
                "Retry added with backoff.",
                hours_ago=2.9,
                model="gpt-5",
                root="/w/mem",
            ),
            _turn(
                5,
                "claude-code",
                "user",
                "Deploy steps for the other project",
                hours_ago=2,
                root="/w/other",
            ),
            _turn(6, "claude-code", "user", "Old discussion", hours_ago=24 * 10, root="/w/mem"),
            _turn(
                7,
                "gemini-cli",
                "user",
                "Remember: staging DB is on port 5433",
                hours_ago=48,
                pinned=True,
            ),
        ],
    )
    conn.commit()
    return uid


def test_brief_is_deterministic_marked_and_in_seed_order(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    uid = _seed(conn)
    request = BriefRequest(platform="claude-code", model="claude-opus-4-6", device="dev")
    text = build_brief(conn, settings, uid, request, now=NOW)
    assert text == build_brief(conn, settings, uid, request, now=NOW)
    assert text.startswith(BRIEF_MARKER)
    order = [
        "# Memory Briefing",
        "## Core Profile",
        "## Pinned",
        "## Sub Profile",
        "## Active Projects",
        "## Recent on claude-code",
    ]
    positions = [text.index(h) for h in order]
    assert positions == sorted(positions)
    assert "staging DB is on port 5433" in text
    assert "They advance in one transaction." in text
    assert "Old discussion" not in text  # outside the 3-day window
    # Same platform by default: codex's turns are not in "Recent on claude-code" ...
    recent = text.split("## Recent on claude-code")[1]
    assert "Retry added" not in recent.split("##")[0]


def test_other_agents_in_the_same_project_are_shown(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Any
) -> None:
    uid = _seed(conn)
    repo = tmp_path / "mem"
    (repo / ".git").mkdir(parents=True)
    conn.execute("UPDATE memory SET git_root = %s WHERE git_root = '/w/mem'", (str(repo),))
    conn.commit()
    text = build_brief(
        conn,
        settings,
        uid,
        BriefRequest(platform="claude-code", model=None, device="dev", cwd=str(repo)),
        now=NOW,
    )
    assert "## Same project, other agents" in text
    section = text.split("## Same project, other agents")[1].split("\n## ")[0]
    assert "Retry added with backoff." in section
    assert "Deploy steps" not in section


def test_a_projects_brief_puts_its_own_turns_first_and_other_projects_after(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Any
) -> None:
    from agents_memory.store.summaries import NO_PROJECT

    uid = _seed(conn)
    repo = tmp_path / "mem"
    (repo / ".git").mkdir(parents=True)
    conn.execute("UPDATE memory SET git_root = %s WHERE git_root = '/w/mem'", (str(repo),))
    conn.execute(
        "INSERT INTO tag_summaries (user_id, d_tag, period_start, period_end, summary)"
        " VALUES (%s, %s, %s, %s, 'loose notes from nowhere')",
        (uid, NO_PROJECT, NOW - timedelta(days=20), NOW - timedelta(days=19)),
    )
    conn.commit()
    request = BriefRequest(platform="claude-code", model=None, device="dev", cwd=str(repo))
    text = build_brief(conn, settings, uid, request, now=NOW)
    order = [
        "# Memory Briefing",
        "## Recent in mem on claude-code",
        "## Same project, other agents",
        "## Core Profile",
        "## Recent elsewhere on claude-code",
    ]
    positions = [text.index(h) for h in order]
    assert positions == sorted(positions)
    mine = text.split("## Recent in mem on claude-code")[1].split("\n## ")[0]
    assert "How do cursors work?" in mine and "Deploy steps" not in mine
    assert "Deploy steps" in text.split("## Recent elsewhere on claude-code")[1]
    assert "loose notes from nowhere" not in text
    outside = build_brief(
        conn, settings, uid, BriefRequest(platform="claude-code", model=None, device="dev"), now=NOW
    )
    assert "loose notes from nowhere" in outside


def test_compact_brief_fits_its_budget(conn: psycopg.Connection[Any], settings: Settings) -> None:
    uid = _seed(conn)
    insert_memories(
        conn,
        uid,
        [
            _turn(100 + i, "claude-code", "user", "long " * 200, hours_ago=1 + i / 100)
            for i in range(50)
        ],
    )
    for budget in (400, 1000, 1900):
        text = build_brief(
            conn,
            settings,
            uid,
            BriefRequest(
                platform="claude-code", model=None, device="dev", mode="compact", max_chars=budget
            ),
            now=NOW,
        )
        assert len(text) <= budget
        assert text.startswith(BRIEF_MARKER)
        assert "memory_startup" in text


def test_recent_window_honours_the_token_limit(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    settings = make_settings(database_url=db_url, short_term_token_limit=100)
    uid = _seed(conn)
    insert_memories(
        conn,
        uid,
        [
            _turn(
                200 + i,
                "claude-code",
                "user",
                f"message number {i} " + "x" * 40,
                hours_ago=1 - i / 100,
            )
            for i in range(30)
        ],
    )
    text = build_brief(
        conn, settings, uid, BriefRequest(platform="claude-code", model=None, device="dev"), now=NOW
    )
    recent = text.split("## Recent on claude-code")[1].split("\n## ")[0]
    assert len(recent) <= 100 * 1.7 + 80
    assert "message number 29" in recent  # the newest survive


def test_empty_memory_still_gives_a_useful_brief(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    uid = ensure_user(conn, "nobody")
    text = build_brief(
        conn, settings, uid, BriefRequest(platform=None, model=None, device="dev"), now=NOW
    )
    assert text.startswith(BRIEF_MARKER) and "search_memory" in text


section_lines = st.lists(st.text(min_size=0, max_size=400), max_size=30)


@hsettings(max_examples=200, deadline=None)
@given(
    bodies=st.lists(section_lines, max_size=8),
    budget=st.integers(min_value=350, max_value=12_000),
)
def test_fitted_brief_never_exceeds_its_budget(bodies: list[list[str]], budget: int) -> None:
    sections = [Section(None, [BRIEF_MARKER, "# Memory Briefing (user: u)"], required=True)]
    sections += [Section(f"## Section {i}", lines) for i, lines in enumerate(bodies)]
    sections.append(Section("## Memory tools", ["- Call `memory_startup`."], required=True))
    text = fit(sections, budget)
    assert len(text) <= budget
    assert text.startswith(BRIEF_MARKER)
    assert "memory_startup" in text


@hsettings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
            min_size=1,
            max_size=600,
        ),
        min_size=1,
        max_size=40,
    ),
    budget=st.integers(min_value=400, max_value=3000),
)
def test_brief_over_random_pools_stays_in_budget_without_repeats(
    conn: psycopg.Connection[Any], settings: Settings, texts: list[str], budget: int
) -> None:
    uid = ensure_user(conn, "prop")
    conn.execute("DELETE FROM memory")
    insert_memories(
        conn,
        uid,
        [
            _turn(
                1000 + i,
                "claude-code",
                "user" if i % 2 else "assistant",
                text,
                hours_ago=i / 10,
                pinned=i % 7 == 0,
            )
            for i, text in enumerate(texts)
        ],
    )
    text = build_brief(
        conn,
        settings,
        uid,
        BriefRequest(
            platform="claude-code", model=None, device="dev", mode="compact", max_chars=budget
        ),
        now=NOW,
    )
    conn.rollback()
    assert len(text) <= budget and text.startswith(BRIEF_MARKER)
    turn_lines = [line for line in text.splitlines() if line.startswith(("[", "- ["))]
    bodies = [line.split("] ", 1)[1] for line in turn_lines if "] " in line]
    assert len(bodies) == len(set(bodies))
