"""The admission rules on their own: pure, no database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents_memory.adapters.base import Turn
from agents_memory.admission.admit import (
    MAX_SAVED_CHARS,
    Admission,
    Admitted,
    Refused,
    create_admission,
)
from agents_memory.admission.echo import BRIEF_MARKER

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
HOME = Path("/home/u")


def _admission(make_settings: Any, **overrides: Any) -> Admission:
    return create_admission(make_settings(**overrides), home=HOME)


def _turn(text: str, *, raw: str | None = None, cwd: str | None = "/work/proj") -> Turn:
    return Turn("t:1", "claude-code", "user", text, cwd=cwd, raw_text=raw)


def _admitted(result: Admitted | Refused) -> Admitted:
    assert isinstance(result, Admitted), result
    return result


def _reason(result: Admitted | Refused) -> str:
    assert isinstance(result, Refused), result
    return result.reason


def test_a_turn_is_admitted_redacted_and_without_its_private_spans(make_settings: Any) -> None:
    admission = _admission(make_settings)
    admitted = _admitted(
        admission.captured_turn(
            _turn(
                f"use {SECRET} <private>pin 4471</private> now",
                raw=f"<env>{SECRET}</env> <private>pin 4471</private>",
            )
        )
    )
    assert SECRET not in admitted.text and "[redacted:" in admitted.text
    assert "4471" not in admitted.text and admitted.text.startswith("use ")
    assert admitted.raw is not None and SECRET not in admitted.raw and "4471" not in admitted.raw


def test_brief_echo_is_refused_in_the_text_or_in_the_raw_text(make_settings: Any) -> None:
    admission = _admission(make_settings)
    assert _reason(admission.captured_turn(_turn(f"{BRIEF_MARKER}\n# brief"))) == "echo"
    assert _reason(admission.captured_turn(_turn("hook context", raw=BRIEF_MARKER))) == "echo"
    assert _reason(admission.saved_message(f"x {BRIEF_MARKER}", cwd=None)) == "echo"
    assert _reason(admission.pinned_fact(f"x {BRIEF_MARKER}", cwd=None)) == "echo"
    assert _reason(admission.edited_text(f"x {BRIEF_MARKER}")) == "echo"


def test_a_brief_marker_inside_a_private_span_is_still_an_echo(make_settings: Any) -> None:
    admission = _admission(make_settings)
    assert _reason(admission.captured_turn(_turn(f"ok <private>{BRIEF_MARKER}</private>"))) == (
        "echo"
    )


def test_text_that_is_all_private_is_refused_and_blank_text_is_empty(
    make_settings: Any,
) -> None:
    admission = _admission(make_settings)
    assert _reason(admission.captured_turn(_turn("<private>all</private>"))) == "private-only"
    assert _reason(admission.saved_message(" <private>all</private>\n", cwd=None)) == (
        "private-only"
    )
    assert _reason(admission.captured_turn(_turn("  \n"))) == "empty"
    assert _reason(admission.pinned_fact("", cwd=None)) == "empty"


def test_excluded_projects_are_refused_where_the_text_has_a_project(make_settings: Any) -> None:
    admission = _admission(make_settings, capture_exclude=("~/secret*", "*-private"))
    assert _reason(admission.captured_turn(_turn("hi", cwd="/home/u/secret-x/a"))) == "excluded"
    assert _reason(admission.saved_message("hi", cwd="/w/acme-private")) == "excluded"
    assert _reason(admission.pinned_fact("hi", cwd="/home/u/secret")) == "excluded"
    assert _admitted(admission.pinned_fact("hi", cwd="/home/u/open")).text == "hi"
    assert _admitted(admission.captured_turn(_turn("hi", cwd=None))).text == "hi"
    # An edit has no project of its own: the row (or the profile) is already the user's.
    assert _admitted(admission.edited_text("hi")).text == "hi"


def test_a_project_s_committed_opt_out_refuses_its_text(make_settings: Any, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    admission = _admission(make_settings)
    cwd = str(repo / "src")
    assert _admitted(admission.captured_turn(_turn("hi", cwd=cwd))).text == "hi"
    marker = repo / ".agents-memory" / "no-memory"
    marker.parent.mkdir()
    marker.write_text("off\n", encoding="utf-8")
    assert _reason(admission.captured_turn(_turn("hi", cwd=cwd))) == "opted-out"
    assert _reason(admission.saved_message("hi", cwd=str(repo))) == "opted-out"
    assert _reason(admission.pinned_fact("hi", cwd=cwd)) == "opted-out"
    assert _admitted(admission.captured_turn(_turn("hi", cwd=str(tmp_path)))).text == "hi"


def test_redaction_is_skipped_only_when_disabled(make_settings: Any) -> None:
    off = _admission(make_settings, redact_enabled=False)
    assert SECRET in _admitted(off.saved_message(f"key {SECRET}", cwd=None)).text
    on = _admission(make_settings)
    assert SECRET not in _admitted(on.saved_message(f"key {SECRET}", cwd=None)).text


def test_deliberate_saves_have_a_size_limit_and_captured_turns_do_not(
    make_settings: Any,
) -> None:
    admission = _admission(make_settings)
    long = "a" * (MAX_SAVED_CHARS + 1)
    assert _reason(admission.saved_message(long, cwd=None)) == "too-long"
    assert _reason(admission.pinned_fact(long, cwd=None)) == "too-long"
    assert _reason(admission.edited_text(long)) == "too-long"
    # Counted on what came in: private spans do not sneak a huge text under the limit.
    hidden = "ok <private>" + long + "</private>"
    assert _reason(admission.edited_text(hidden)) == "too-long"
    assert _admitted(admission.captured_turn(_turn(long))).text == long


def test_deliberate_saves_are_trimmed_and_captured_turns_kept_as_written(
    make_settings: Any,
) -> None:
    admission = _admission(make_settings)
    assert _admitted(admission.saved_message("  fact \n", cwd=None)).text == "fact"
    assert _admitted(admission.captured_turn(_turn("  turn \n"))).text == "  turn \n"


def test_text_postgresql_cannot_hold_is_made_storable(make_settings: Any) -> None:
    admission = _admission(make_settings)
    admitted = _admitted(admission.captured_turn(_turn("a\x00b \ud800c", raw="r\x00")))
    assert admitted.text == "ab \ufffdc" and admitted.raw == "r"
    assert _reason(admission.captured_turn(_turn("\x00"))) == "empty"


def test_a_refusal_says_why_in_words(make_settings: Any) -> None:
    refused = _admission(make_settings).saved_message("<private>x</private>", cwd=None)
    assert isinstance(refused, Refused)
    assert refused.detail == "nothing left after removing private spans"
