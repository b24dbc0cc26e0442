"""Every bundle row is imported, already present or refused with its reason, and the counts add
up per member; new users, devices and profile fields filled are listed in the dry run and the
import; a key that holds another session's turn here is imported under a scoped key and never
replaces it. Crafted bundles, through the real console script (``--json`` and text)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.ops import bundle_format as fmt
from agents_memory.ops.import_memories import scoped_key
from agents_memory.ops.importer import import_bundle
from agents_memory.store import migrate
from tests.conftest import TEST_DIM, TEST_MODEL
from tests.data.pool import machine_env, run

T0 = "2026-01-01T00:00:00+00:00"


def user(name: str, core: str | None = None, sub: str | None = None) -> dict[str, Any]:
    return {
        "user_name": name,
        "core_profile": core,
        "sub_profile": sub,
        "librarian_last_run_at": None,
        "librarian_msg_count_at_run": None,
    }


def turn(
    key: str, text: str, *, session: str = "s1", who: str = "tester", **extra: Any
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "external_uuid": key,
        "user_name": who,
        "agent_platform": "claude-code",
        "agent_model": None,
        "subagent": False,
        "subagent_model": None,
        "subagent_role": None,
        "role": "assistant",
        "message": text,
        "raw_message": None,
        "p_tag": None,
        "d_tag": [],
        "is_active": True,
        "archived_at": None,
        "is_pinned": False,
        "tag_processed": False,
        "device_name": "laptop",
        "session_id": session,
        "cwd": None,
        "git_root": None,
        "git_remote": None,
        "source": "capture",
        "message_at": T0,
        "created_at": T0,
        "updated_at": T0,
    }
    row.update(extra)
    return row


def edit(key: str, old: str) -> dict[str, Any]:
    return {"memory": key, "old_message": old, "changed_by": "manage_knowledge", "created_at": T0}


def make_bundle(
    path: Path, manifest_extra: dict[str, Any] | None = None, **members: list[dict[str, Any]]
) -> Path:
    """A bundle holding ``members`` (table -> rows; the other tables empty), checksummed.
    Lines are ASCII JSON, so a row may carry a lone surrogate (as a ``\\ud800`` escape)."""
    tables = [*fmt.TABLES, *([fmt.VECTORS] if fmt.VECTORS in members else [])]
    data = {
        fmt.member(t): b"".join(json.dumps(r).encode() + b"\n" for r in members.get(t, []))
        for t in tables
    }
    manifest = {
        "product": fmt.PRODUCT,
        "format": fmt.FORMAT,
        "schema_version": migrate.latest_version(),
        "counts": {t: len(members.get(t, [])) for t in fmt.TABLES},
        "sha256": {n: hashlib.sha256(b).hexdigest() for n, b in data.items()},
        **(manifest_extra or {}),
    }
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(fmt.MANIFEST, fmt.manifest_bytes(manifest))
        for name, body in data.items():
            archive.writestr(name, body)
    return path


def import_json(env: dict[str, str], bundle: Path, *flags: str) -> dict[str, Any]:
    done = run(env, "import", "--json", *flags, str(bundle))
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    for table, tally in report["tables"].items():
        refused = sum(tally["refused"].values())
        assert tally["new"] + tally["present"] + refused == tally["rows"], (table, tally)
    return report


def _memories(url: str) -> dict[str, tuple[str, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT external_uuid, session_id, message FROM memory").fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def test_a_row_of_an_unknown_user_is_refused_by_name_and_the_counts_add_up(
    empty_db_url: str, tmp_path: Path
) -> None:
    bundle = make_bundle(
        tmp_path / "b.zip",
        users=[user("tester")],
        memory=[turn("k1", "kept"), turn("k2", "whose?", who="ghost")],
    )

    report = import_json(machine_env(tmp_path / "h", empty_db_url), bundle)

    assert report["tables"]["memory"] == {
        "rows": 2,
        "new": 1,
        "present": 0,
        "refused": {"unknown user": 1},
    }
    assert report["refusals"] == ["memory.jsonl line 2: unknown user 'ghost' (key 'k2')"]
    assert set(_memories(empty_db_url)) == {"k1"}


def test_the_second_row_with_one_key_and_other_text_is_refused_naming_the_first(
    empty_db_url: str, tmp_path: Path
) -> None:
    bundle = make_bundle(
        tmp_path / "b.zip",
        users=[user("tester")],
        memory=[turn("k1", "first"), turn("k1", "first"), turn("k1", "second")],
    )
    env = machine_env(tmp_path / "h", empty_db_url)

    report = import_json(env, bundle)

    assert report["tables"]["memory"] == {
        "rows": 3,
        "new": 1,
        "present": 1,
        "refused": {"same key, other text": 1},
    }
    assert report["refusals"] == [
        "memory.jsonl line 3: same key 'k1' as line 1 of this bundle, with different text"
        " (the first is kept)"
    ]
    assert _memories(empty_db_url) == {"k1": ("s1", "first")}
    text = run(env, "import", str(bundle))
    assert "memory               3 rows: 0 new, 2 already present, 1 refused" in text.stdout


def test_a_key_of_another_sessions_stored_turn_is_imported_under_a_scoped_key(
    empty_db_url: str, tmp_path: Path
) -> None:
    env = machine_env(tmp_path / "h", empty_db_url)
    first = make_bundle(tmp_path / "a.zip", users=[user("tester")], memory=[turn("msg_1", "A")])
    import_json(env, first)
    other = make_bundle(
        tmp_path / "b.zip",
        users=[user("tester")],
        memory=[turn("msg_1", "B", session="s2"), turn("msg_1", "A")],
        memory_history=[edit("msg_1", "A before")],
    )

    report = import_json(env, other)
    again = import_json(env, other)

    scoped = scoped_key("msg_1", "claude-code", "s2", "assistant")
    assert _memories(empty_db_url) == {"msg_1": ("s1", "A"), scoped: ("s2", "B")}
    assert report["tables"]["memory"] == {"rows": 2, "new": 1, "present": 1, "refused": {}}
    assert report["notes"] == [
        "memory.jsonl line 1: key 'msg_1' holds a turn of another session, role or client"
        f" stored here; imported under {scoped!r} (neither row replaced)"
    ]
    assert again["tables"]["memory"] == {"rows": 2, "new": 0, "present": 2, "refused": {}}
    # the bundle's first row with the key is the scoped one: its edit goes to that row
    with psycopg.connect(empty_db_url) as conn:
        history = conn.execute(
            "SELECT m.external_uuid FROM memory_history h JOIN memory m ON m.id = h.memory_id"
        ).fetchall()
    assert history == [(scoped,)]


def test_a_stored_row_of_the_same_session_with_other_text_is_a_conflict_and_kept(
    empty_db_url: str, tmp_path: Path
) -> None:
    env = machine_env(tmp_path / "h", empty_db_url)
    import_json(
        env, make_bundle(tmp_path / "a.zip", users=[user("tester")], memory=[turn("k", "here")])
    )
    theirs = make_bundle(tmp_path / "b.zip", users=[user("tester")], memory=[turn("k", "there")])

    report = import_json(env, theirs)

    assert report["tables"]["memory"]["refused"] == {"conflict": 1}
    assert report["refusals"] == [
        "memory.jsonl line 1: same key 'k' as a stored row with different text (this pool's"
        " text kept)"
    ]
    assert _memories(empty_db_url) == {"k": ("s1", "here")}


def test_new_users_devices_and_filled_profiles_are_listed_in_the_dry_run_and_the_import(
    empty_db_url: str, tmp_path: Path
) -> None:
    env = machine_env(tmp_path / "h", empty_db_url)
    import_json(
        env, make_bundle(tmp_path / "a.zip", users=[user("tester")], memory=[turn("k0", "x")])
    )
    bundle = make_bundle(
        tmp_path / "b.zip",
        users=[user("tester", core="Likes tests."), user("alice", sub="Writes Go.")],
        memory=[
            turn("k1", "one", device_name="desk"),
            turn("k2", "two", device_name="desk", who="alice"),
            turn("k3", "three"),
        ],
    )

    dry = import_json(env, bundle, "--dry-run")
    text = run(env, "import", "--dry-run", str(bundle)).stdout
    real = import_json(env, bundle)

    for report in (dry, real):
        assert report["new_users"] == ["'alice' (with sub_profile)"]
        assert report["new_devices"] == {"desk": 2}
        assert report["profile_changes"] == [
            "user 'tester': core_profile filled from the bundle (it was empty here)"
        ]
        assert report["tables"]["users"] == {"rows": 2, "new": 1, "present": 1, "refused": {}}
    assert "  new user: 'alice' (with sub_profile)" in text
    assert "  new device: desk (2 memories)" in text
    assert "  profile: user 'tester': core_profile filled from the bundle" in text
    assert real["tables"]["memory"]["new"] == 3 and dry["tables"]["memory"]["new"] == 3


def test_an_edit_of_a_memory_nowhere_is_refused_not_counted_present(
    empty_db_url: str, tmp_path: Path
) -> None:
    bundle = make_bundle(
        tmp_path / "b.zip",
        users=[user("tester")],
        memory=[turn("k1", "now")],
        memory_history=[edit("k1", "before"), edit("nowhere", "lost"), edit("k1", "before")],
        profile_history=[
            {
                "user_name": "ghost",
                "field": "core_profile",
                "old_value": None,
                "new_value": "x",
                "changed_by": "librarian",
                "created_at": T0,
            }
        ],
    )

    report = import_json(machine_env(tmp_path / "h", empty_db_url), bundle)

    assert report["tables"]["memory_history"] == {
        "rows": 3,
        "new": 1,
        "present": 1,
        "refused": {"unknown memory": 1},
    }
    assert report["tables"]["profile_history"]["refused"] == {"unknown user": 1}
    assert "memory_history.jsonl line 2: an edit of memory 'nowhere'" in " ".join(
        report["refusals"]
    )


def test_rows_of_the_wrong_shape_are_refused_each_with_what_was_expected(
    empty_db_url: str, tmp_path: Path
) -> None:
    bundle = make_bundle(
        tmp_path / "b.zip",
        users=[user("tester"), {"user_name": 7}, {**user("bob"), "core_profile": "a\x00b"}],
        project_tags=[{"name": None}],
        memory=[
            turn("k1", "fine"),
            turn("k2", "who?", role="system"),
            turn("k3", 5),
            turn("k4", "nul", session_id="s\x00"),
            turn("k5", "flag", subagent="yes"),
            [1, 2],
            turn("k6", "when?", message_at="yesterday"),
            turn("", "no key"),
        ],
        profile_history=[
            {
                "user_name": "tester",
                "field": "bogus",
                "old_value": None,
                "new_value": "x",
                "changed_by": "librarian",
                "created_at": T0,
            }
        ],
        memory_history=[{"memory": "k1", "old_message": 5, "changed_by": "x", "created_at": T0}],
    )

    report = import_json(machine_env(tmp_path / "h", empty_db_url), bundle)

    tables = report["tables"]
    assert tables["memory"] == {"rows": 8, "new": 1, "present": 0, "refused": {"malformed": 7}}
    assert tables["users"] == {"rows": 3, "new": 1, "present": 0, "refused": {"malformed": 2}}
    for member in ("project_tags", "profile_history", "memory_history"):
        assert tables[member]["refused"] == {"malformed": 1}, member
    refusals = "\n".join(report["refusals"])
    for expected in (
        "memory.jsonl line 2: role 'system' is not user or assistant",
        "memory.jsonl line 3: message is not a non-empty text",
        "memory.jsonl line 4: session_id holds a NUL character",
        "memory.jsonl line 5: subagent is not true or false",
        "memory.jsonl line 6: the line is not a JSON object",
        "memory.jsonl line 7: message_at 'yesterday' is not an ISO 8601 time",
        "memory.jsonl line 8: external_uuid is not a non-empty text",
        "users.jsonl line 2: no user_name text",
        "users.jsonl line 3: user 'bob': ",
        "profile_history.jsonl line 1: ",
        "memory_history.jsonl line 1: memory and old_message are not texts",
    ):
        assert expected in refusals, expected
    assert set(_memories(empty_db_url)) == {"k1"}


def test_a_vector_that_does_not_fit_this_pool_is_left_out_and_the_turn_embedded_again(
    make_settings: Any, db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(
        database_url=db_url,
        embedding_backend="openai",
        embedding_model=TEST_MODEL,
        embedding_dim=TEST_DIM,
        embedding_base_url="http://127.0.0.1:9/v1",
    )
    good = "[" + ",".join(["0.5"] * TEST_DIM) + "]"
    bundle = make_bundle(
        tmp_path / "v.zip",
        {"vectors": True, "embedding": {"model": TEST_MODEL, "dim": TEST_DIM}},
        users=[user("tester")],
        memory=[turn("v1", "one"), turn("v2", "two"), turn("v3", "three")],
        vectors=[
            {"external_uuid": "v1", "model": TEST_MODEL, "embedding": good},
            {"external_uuid": "v2", "model": TEST_MODEL, "embedding": "[1,2]"},
            {"external_uuid": "v3", "model": TEST_MODEL, "embedding": good.replace("0.5", "1e9")},
        ],
    )

    report = import_bundle(settings, bundle, home=tmp_path)

    assert report.vectors_kept and report.tables["memory"].new == 3 and report.reembed == 2
    assert report.notes == [
        "memory.jsonl line 2: the vector of 'v2' is left out (its embedding has 2 dimensions,"
        f" not {TEST_DIM}); the Cold Path embeds the turn",
        "memory.jsonl line 3: the vector of 'v3' is left out (its embedding holds a value out"
        " of range); the Cold Path embeds the turn",
    ]
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT external_uuid FROM memory WHERE embedding IS NOT NULL"
        ).fetchall()
    assert rows == [("v1",)]
