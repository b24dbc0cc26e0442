from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from agents_memory.daterange import DateRange, parse_date_range

KST = timezone(timedelta(hours=9))
NOW = datetime(2025, 3, 10, 15, 30, tzinfo=KST)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=KST)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("today", DateRange(day(2025, 3, 10), None)),
        ("yesterday", DateRange(day(2025, 3, 9), day(2025, 3, 10))),
        ("last_week", DateRange(day(2025, 3, 3), None)),
        ("last_month", DateRange(day(2025, 2, 8), None)),
        ("3_days_ago", DateRange(day(2025, 3, 7), None)),
        ("3days_ago", DateRange(day(2025, 3, 7), None)),
        ("1_day_ago", DateRange(day(2025, 3, 9), None)),
        ("2025-01-31", DateRange(day(2025, 1, 31), None)),
        ("  Last-Week ", DateRange(day(2025, 3, 3), None)),
    ],
)
def test_single_forms_are_lower_bounds_at_midnight(text: str, expected: DateRange) -> None:
    assert parse_date_range(text, NOW) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-01-01..2025-01-31", DateRange(day(2025, 1, 1), day(2025, 2, 1))),
        ("2025-03-01..yesterday", DateRange(day(2025, 3, 1), day(2025, 3, 10))),
        ("last_week..3_days_ago", DateRange(day(2025, 3, 3), day(2025, 3, 8))),
        ("yesterday..today", DateRange(day(2025, 3, 9), day(2025, 3, 11))),
        ("..2025-02-28", DateRange(None, day(2025, 3, 1))),
        ("2025-02-28..", DateRange(day(2025, 2, 28), None)),
        ("2025-03-05..2025-03-05", DateRange(day(2025, 3, 5), day(2025, 3, 6))),
    ],
)
def test_ranges_include_the_whole_end_day(text: str, expected: DateRange) -> None:
    assert parse_date_range(text, NOW) == expected


def test_midnights_follow_the_time_zone_of_now() -> None:
    utc_now = NOW.astimezone(UTC)  # 06:30 UTC, same calendar day
    assert parse_date_range("today", utc_now).start == datetime(2025, 3, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "last_year",
        "soon",
        "2025-13-01",
        "2025-02-30",
        "..",
        "a..b",
        "1..2..3",
        "days_ago",
        "2025/01/01",
        "today..yesterday",
        "2025-03-05..2025-03-01",
    ],
)
def test_bad_input_names_the_accepted_forms(text: str) -> None:
    with pytest.raises(ValueError, match="N_days_ago") as info:
        parse_date_range(text, NOW)
    assert "YYYY-MM-DD" in str(info.value)
    assert "A..B" in str(info.value)


def test_an_impossible_date_says_why() -> None:
    with pytest.raises(ValueError, match="not a real date"):
        parse_date_range("2025-02-30", NOW)


def _day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=KST)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("7d", _day(2025, 3, 3), None),
        ("2w", _day(2025, 2, 24), None),
        ("last week", _day(2025, 3, 3), None),
        ("2025-02", _day(2025, 2, 1), _day(2025, 3, 1)),
        ("2024-12", _day(2024, 12, 1), _day(2025, 1, 1)),
        ("2025-02-01..2025-02-15", _day(2025, 2, 1), _day(2025, 2, 16)),
        ("2025-01..2025-02", _day(2025, 1, 1), _day(2025, 3, 1)),
        ("2w..7d", _day(2025, 2, 24), _day(2025, 3, 4)),
    ],
)
def test_short_spans_months_and_their_ranges(
    text: str, start: datetime, end: datetime | None
) -> None:
    assert parse_date_range(text, NOW) == DateRange(start, end)


def test_an_impossible_month_says_why() -> None:
    with pytest.raises(ValueError, match=r"not a real month.*7d, 2w"):
        parse_date_range("2025-13", NOW)


def test_a_day_past_the_calendars_end_is_a_value_error_not_an_overflow() -> None:
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    for text in ("..9999-12-31", "9999-12-31..9999-12-31"):
        with pytest.raises(ValueError, match="past the last day"):
            parse_date_range(text, now)
