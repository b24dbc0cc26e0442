"""``manage_project_tags`` through the real MCP client: every action and its errors."""

from __future__ import annotations

from typing import Any

from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from agents_memory.store import tags as tag_store
from agents_memory.store.coldpath import tag_suggestions as suggestion_store
from agents_memory.store.coldpath.tag_suggestions import AliasVerdict
from tests.server.mcpcall import call, error, ok


def _questions(state: ServerState) -> dict[str, int]:
    """Three new-tag suggestions (project, generic, unsure) and one alias suggestion."""
    with state.pool.connection() as conn:
        ids = {
            rec: suggestion_store.suggest_new_tag(
                conn, state.user_id, name, uses=12, recommendation=rec, members=[name]
            )
            for name, rec in (("orbit", "project"), ("refactor", "generic"), ("maybe", "unsure"))
        }
        source = tag_store.create_project_tag(conn, "mcp-memory")
        target = tag_store.create_project_tag(conn, "agents-memory")
        alias = suggestion_store.record_alias_verdict(
            conn,
            state.user_id,
            AliasVerdict(source, target, "rename", 0.9, [], [], [], {}, "renamed", None, False),
            "pending",
        )
    out: dict[str, int] = {k: v for k, v in ids.items() if v is not None}
    assert alias is not None
    out["alias"] = alias
    return out


def test_list_actions_show_the_pending_questions(
    state: ServerState, server_settings: Settings
) -> None:
    ids = _questions(state)
    server = create_server(server_settings, state)
    listed = ok(call(server, "manage_project_tags", {"action": "list_suggestions"}))
    assert {t["name"]: t["recommendation"] for t in listed["new_tags"]} == {
        "orbit": "project",
        "refactor": "generic",
        "maybe": "unsure",
    }
    assert [(a["id"], a["source"], a["target"]) for a in listed["aliases"]] == [
        (ids["alias"], "mcp-memory", "agents-memory")
    ]
    new_only = ok(call(server, "manage_project_tags", {"action": "list_new_tags"}))
    assert len(new_only["new_tags"]) == 3 and new_only["aliases"] is None


def test_apply_recommendations_confirms_project_rejects_generic_leaves_unsure(
    state: ServerState, server_settings: Settings
) -> None:
    ids = _questions(state)
    server = create_server(server_settings, state)
    shown = [ids["project"], ids["generic"], ids["unsure"], 999999]
    result = ok(
        call(
            server,
            "manage_project_tags",
            {"action": "apply_recommendations", "suggestion_ids": shown},
        )
    )
    outcomes = {d["id"]: d["outcome"] for d in result["decisions"]}
    assert outcomes == {
        ids["project"]: "confirmed",
        ids["generic"]: "rejected",
        ids["unsure"]: "left",
        999999: "failed",
    }
    assert result["ok"] is False
    failed = next(d for d in result["decisions"] if d["id"] == 999999)
    assert "list_new_tags" in failed["message"]
    with state.pool.connection() as conn:
        assert tag_store.tag_by_name(conn, "orbit") is not None
        statuses = dict(
            conn.execute("SELECT name, status FROM project_tag_new_suggestions").fetchall()
        )
    assert statuses == {"orbit": "confirmed", "refactor": "rejected", "maybe": "pending"}


def test_single_decisions_and_alias_edits(state: ServerState, server_settings: Settings) -> None:
    ids = _questions(state)
    server = create_server(server_settings, state)

    def act(**args: Any) -> Any:
        return ok(call(server, "manage_project_tags", args))

    assert (
        "created project tag 'maybe'"
        in act(action="confirm_new_tag", suggestion_id=ids["unsure"])["message"]
    )
    assert (
        "rejected"
        in act(action="reject_new_tag", suggestion_id=ids["generic"], reason="too generic")[
            "message"
        ]
    )
    assert (
        "alias of 'agents-memory'"
        in act(action="confirm_alias", suggestion_id=ids["alias"])["message"]
    )
    assert "no longer an alias" in act(action="unset_alias", source="mcp-memory")["message"]
    assert (
        "alias of 'maybe'"
        in act(action="set_alias", source="mcp-memory", target="maybe")["message"]
    )
    with state.pool.connection() as conn:
        tag = tag_store.tag_by_name(conn, "mcp-memory")
        maybe = tag_store.tag_by_name(conn, "maybe")
        reason = conn.execute(
            "SELECT decision_reason FROM project_tag_new_suggestions WHERE id = %s",
            (ids["generic"],),
        ).fetchone()
    assert tag is not None and maybe is not None and tag.alias_of == maybe.id
    assert reason == ("too generic",)


def test_reject_alias_records_the_answer(state: ServerState, server_settings: Settings) -> None:
    ids = _questions(state)
    server = create_server(server_settings, state)
    ok(
        call(
            server, "manage_project_tags", {"action": "reject_alias", "suggestion_id": ids["alias"]}
        )
    )
    again = call(
        server, "manage_project_tags", {"action": "confirm_alias", "suggestion_id": ids["alias"]}
    )
    assert "already rejected" in error(again)


def test_tag_errors_tell_the_model_what_to_do(
    state: ServerState, server_settings: Settings
) -> None:
    ids = _questions(state)
    server = create_server(server_settings, state)

    def fails(**args: Any) -> str:
        return error(call(server, "manage_project_tags", args))

    assert "suggestion_id" in fails(action="confirm_new_tag")
    assert "list_new_tags" in fails(action="confirm_new_tag", suggestion_id=424242)
    assert "list_suggestions" in fails(action="reject_alias", suggestion_id=424242)
    assert "suggestion_ids" in fails(action="apply_recommendations")
    assert "source" in fails(action="set_alias")
    assert "target" in fails(action="set_alias", source="mcp-memory")
    assert "no project tag 'nope'" in fails(action="set_alias", source="nope", target="x")
    assert "not an alias" in fails(action="unset_alias", source="agents-memory")
    assert "cycle" in fails(action="set_alias", source="agents-memory", target="agents-memory")
    assert "action" in fails(action="delete_everything")
    del ids


def test_set_registry_sets_kind_paused_and_description_of_a_project(
    state: ServerState, server_settings: Settings
) -> None:
    with state.pool.connection() as conn:
        shop = tag_store.create_project_tag(conn, "shop")
        old = tag_store.create_project_tag(conn, "shop-old")
        tag_store.set_alias(conn, old, shop)
    server = create_server(server_settings, state)
    args = {"action": "set_registry", "source": "shop", "kind": "project", "paused": True}
    set_ = ok(call(server, "manage_project_tags", {**args, "description": "The web shop"}))
    assert set_["message"] == "'shop': kind project, paused, described as 'The web shop'"
    with state.pool.connection() as conn:
        tag = tag_store.tag_by_name(conn, "shop")
        assert tag is not None and (tag.kind, tag.paused, tag.description) == (
            "project",
            True,
            "The web shop",
        )
        assert [t.name for t in tag_store.paused_project_tags(conn)] == ["shop", "shop-old"]
    # a field not given is left as it is; "none" takes the tag out of the registry
    again = {"action": "set_registry", "source": "shop", "kind": "none"}
    assert ok(call(server, "manage_project_tags", again))["message"] == (
        "'shop': kind none, paused, described as 'The web shop'"
    )
    alias = {"action": "set_registry", "source": "shop-old", "paused": False}
    assert "alias of 'shop'" in error(call(server, "manage_project_tags", alias))
    nothing = {"action": "set_registry", "source": "shop"}
    assert "say what to set" in error(call(server, "manage_project_tags", nothing))
    missing = {"action": "set_registry", "paused": True}
    assert "needs `source`" in error(call(server, "manage_project_tags", missing))
