"""Admission refuses tombstoned keys as ``forgotten`` (by key alone), and the duration
grammar ``pause --for`` reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agents_memory.adapters.base import Turn
from agents_memory.admission.admit import Admission, Admitted, Refused
from agents_memory.admission.filters import ExcludeMatcher
from agents_memory.daterange import parse_duration


def _turn(key: str, text: str) -> Turn:
    return Turn(
        platform="gemini-cli",
        role="user",
        text=text,
        external_uuid=key,
        session_id="s",
        message_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_a_tombstoned_key_is_refused_as_forgotten_even_with_new_text(tmp_path: Path) -> None:
    admission = Admission(ExcludeMatcher.compile((), home=str(tmp_path)), redacting=True)

    rewritten = admission.captured_turn(_turn("k1", "a new wording"), forgotten={"k1"})
    other = admission.captured_turn(_turn("k2", "a new wording"), forgotten={"k1"})

    assert isinstance(rewritten, Refused) and rewritten.reason == "forgotten"
    assert isinstance(other, Admitted)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1s", timedelta(seconds=1)),
        ("30m", timedelta(minutes=30)),
        ("2h", timedelta(hours=2)),
        ("1d", timedelta(days=1)),
        ("1w", timedelta(weeks=1)),
        ("1h30m", timedelta(minutes=90)),
        (" 2H ", timedelta(hours=2)),
    ],
)
def test_durations_read_as_number_and_unit(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "soon", "0m", "2", "h", "1.5h", "-1h"])
def test_a_bad_duration_names_the_accepted_forms(text: str) -> None:
    with pytest.raises(ValueError, match="accepted: a number and a unit"):
        parse_duration(text)
