"""The one date grammar of every option that takes a period (search ``--date-range``, backfill
``--since``, the MCP ``date_range``): the JS original's forms, short spans, months and closed ranges
``A..B``. Pure: no clock reads.

Forms (case-insensitive; ``-`` or a space may stand for ``_``):

* ``today`` — since today's midnight;
* ``yesterday`` — that day only (yesterday's midnight up to today's);
* ``last_week`` / ``last_month`` (``last week`` too) — since the midnight 7 / 30 days ago;
* ``N_days_ago`` / ``Ndays_ago`` (``1_day_ago`` too) — since the midnight N days ago;
* ``Nd`` / ``Nw`` (``7d``, ``2w``) — since the midnight N days / weeks ago;
* ``YYYY-MM-DD`` — since that day;
* ``YYYY-MM`` — that month only;
* ``A..B`` — from the start of A up to the end of B (B's day, or B's month), each side a form
  above; ``..B`` and ``A..`` leave one side open.

Midnights are taken in ``now``'s time zone. ``end`` is exclusive.

:func:`period_bound` is the rule of ``--since`` / ``--until`` filters: where the period named
starts, or (exclusive) where it ends.

Durations (``memory-capture pause --for``), :func:`parse_duration`: a number and a unit, or
several run together: ``90s``, ``30m``, ``2h``, ``1d``, ``1w``, ``1h30m``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

ACCEPTED_FORMS = (
    "today, yesterday, last week, last month, N_days_ago (e.g. 3_days_ago), 7d, 2w, "
    "YYYY-MM-DD (since that day), YYYY-MM (that month), or a range A..B of those "
    "(e.g. 2026-02-01..2026-02-15; open ends ..B and A.. allowed; B's whole day or month is "
    "included)"
)

DURATION_FORMS = "a number and a unit s, m, h, d or w (e.g. 30m, 2h, 1d, 1h30m)"

_DURATION_PART = re.compile(r"(\d{1,6})\s*([smhdw])")
_DURATION = re.compile(r"^(?:\d{1,6}\s*[smhdw]\s*)+$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

_DAYS_AGO = re.compile(r"^(\d{1,5})_?days?_ago$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_SHORT_SPAN = re.compile(r"^(\d{1,5})([dw])$")
_FIXED_OFFSETS = {"today": 0, "yesterday": 1, "last_week": 7, "last_month": 30}


@dataclass(frozen=True, slots=True)
class DateRange:
    """``start <= message_at < end``; ``None`` leaves that side open."""

    start: datetime | None
    end: datetime | None

    def __post_init__(self) -> None:
        if self.start is not None and self.end is not None and self.start >= self.end:
            raise ValueError(
                f"date range is empty: {self.start.isoformat()} is not before "
                f"{self.end.isoformat()}"
            )


def parse_date_range(text: str, now: datetime) -> DateRange:
    """Parse ``text`` relative to ``now`` (an aware datetime; a naive one is taken as local).

    Raises :class:`ValueError` naming the accepted forms when ``text`` is not one of them
    (a day past the calendar's end, such as the day after 9999-12-31, too).
    """
    try:
        return _parse_date_range(text, now)
    except OverflowError:
        raise _bad(text, "it reaches past the last day the calendar holds") from None


def _parse_date_range(text: str, now: datetime) -> DateRange:
    now = now if now.tzinfo is not None else now.astimezone()
    raw = text.strip()
    if ".." in raw:
        left, right = raw.split("..", 1)
        if ".." in right or (not left.strip() and not right.strip()):
            raise _bad(text)
        start = _midnight(_span(left, now, text)[0], now) if left.strip() else None
        end_day = _span(right, now, text)[1] + timedelta(days=1) if right.strip() else None
        end = _midnight(end_day, now) if end_day is not None else None
        if start is not None and end is not None and start >= end:
            raise ValueError(
                f"date_range {text!r} is empty: its start is after its end; accepted forms: "
                + ACCEPTED_FORMS
            )
        return DateRange(start, end)
    first, last = _span(raw, now, text)
    start = _midnight(first, now)
    if _normalise(raw) == "yesterday" or _ISO_MONTH.match(_normalise(raw)):
        return DateRange(start, _midnight(last + timedelta(days=1), now))
    return DateRange(start, None)


def period_bound(text: str, now: datetime, *, start: bool) -> datetime:
    """The one rule of ``--since`` / ``--until`` options (forget, export, the console's
    filters): ``--since X`` starts where period X starts, ``--until X`` ends (exclusive) where
    X ends, so ``--until 2026-02-15`` keeps that whole day. Raises :class:`ValueError` as
    :func:`parse_date_range` does."""
    bounds = parse_date_range(text if start else f"..{text}", now)
    edge = bounds.start if start else bounds.end
    if edge is None:  # a range open on the side asked for
        raise _bad(text, "give the " + ("start" if start else "end") + " of the period")
    return edge


def split_period(text: str) -> tuple[str | None, str | None]:
    """The ``--since`` / ``--until`` pair that names the same period as ``text`` read by
    :func:`parse_date_range` (the old search ``--date-range`` / MCP ``date_range``): ``A..B``
    is ``A`` and ``B``, ``yesterday`` and a month bound both sides, any other form only the
    start. Blank sides are ``None``; the forms themselves are checked where they are read."""
    raw = text.strip()
    if ".." in raw:
        left, _, right = raw.partition("..")
        return left.strip() or None, right.strip() or None
    if not raw:
        return None, None
    form = _normalise(raw)
    return raw, raw if form == "yesterday" or _ISO_MONTH.match(form) else None


def _span(part: str, now: datetime, whole: str) -> tuple[date, date]:
    """The first and last calendar day a single form names: one day, or a whole month."""
    match = _ISO_MONTH.match(_normalise(part))
    if match is None:
        day = _anchor_day(part, now, whole)
        return day, day
    year, month = int(match[1]), int(match[2])
    if not 1 <= month <= 12:
        raise _bad(whole, f"{part.strip()!r} is not a real month")
    following = date(year + month // 12, month % 12 + 1, 1)
    return date(year, month, 1), following - timedelta(days=1)


def _anchor_day(part: str, now: datetime, whole: str) -> date:
    """The calendar day a single form names (for ``N_days_ago``: the day N days back)."""
    token = _normalise(part)
    today = now.date()
    short = _SHORT_SPAN.match(token)
    if short:
        return today - timedelta(days=int(short[1]) * (7 if short[2] == "w" else 1))
    if token in _FIXED_OFFSETS:
        return today - timedelta(days=_FIXED_OFFSETS[token])
    match = _DAYS_AGO.match(token)
    if match:
        return today - timedelta(days=int(match[1]))
    if _ISO_DATE.match(token):
        try:
            return date.fromisoformat(token)
        except ValueError:
            raise _bad(whole, f"{part.strip()!r} is not a real date") from None
    raise _bad(whole)


def _normalise(part: str) -> str:
    token = part.strip().lower()
    if _ISO_DATE.match(token) or _ISO_MONTH.match(token):
        return token
    return re.sub(r"[\s-]+", "_", token)


def _midnight(day: date, now: datetime) -> datetime:
    return datetime.combine(day, time(), tzinfo=now.tzinfo)


def _bad(text: str, reason: str | None = None) -> ValueError:
    why = f" ({reason})" if reason else ""
    return ValueError(f"unrecognised date {text!r}{why}; accepted forms: {ACCEPTED_FORMS}")


def parse_duration(text: str) -> timedelta:
    """The length ``text`` names (see the module's docstring). Raises :class:`ValueError`
    naming the accepted forms for anything else, or for a length of zero."""
    token = text.strip().lower()
    if not _DURATION.match(token):
        raise ValueError(f"unrecognised duration {text!r}; accepted: {DURATION_FORMS}")
    seconds = sum(int(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(token))
    if seconds <= 0:
        raise ValueError(f"duration {text!r} is zero; accepted: {DURATION_FORMS}")
    return timedelta(seconds=seconds)
