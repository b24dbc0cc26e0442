"""The one rule for what a console request may carry, checked before any page reads it.

Every query string (:func:`agents_memory.console.context.console_from`, which every page calls
first) and every change form (:func:`agents_memory.console.forms.change_form`) goes through
:func:`check_fields`:

=================  =============================================================
a NUL byte         refused: PostgreSQL text cannot hold it
not UTF-8          refused: bytes that do not decode (a lone surrogate's encoding)
too long           refused past :data:`LONGEST` characters (``content``: a saved
                   memory's own limit)
=================  =============================================================

A refusal is a :class:`BadInput` naming the field and what is wrong with it (never its
value); the app answers it with the form's page and that message (HTTP 400).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final
from urllib.parse import parse_qsl

from agents_memory.admission.admit import MAX_SAVED_CHARS
from agents_memory.errors import OwnerRequestError

LONGEST: Final = 4096
"""The longest value a field may carry, in characters (what a person types in a filter)."""
_LONGER: Final = {"content": MAX_SAVED_CHARS}
"""Fields that carry a text to save, not a filter."""


class BadInput(OwnerRequestError):
    """A request field the console cannot take; the message names the field."""


def check_fields(pairs: Iterable[tuple[str, str]]) -> None:
    """Raise :class:`BadInput` for the first field (or field name) the rule refuses."""
    for name, value in pairs:
        _check(name, "a field name", 100)
        _check(value, name, _LONGER.get(name, LONGEST))


def _check(value: str, label: str, longest: int) -> None:
    if "\x00" in value:
        raise BadInput(f"{label} holds a NUL byte (\\x00); remove it and try again")
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        raise BadInput(f"{label} holds bytes that are not UTF-8 text; retype it")
    if len(value) > longest:
        raise BadInput(
            f"{label} is {len(value):,} characters long; the longest it may be is {longest:,}"
        )


def check_encoded(raw: bytes | str) -> None:
    """Check an ``application/x-www-form-urlencoded`` string (a query string or a form body)
    as sent: bytes that are not UTF-8 are caught here, before a parser replaces them."""
    text = raw.decode("latin-1") if isinstance(raw, bytes) else raw
    check_fields(
        parse_qsl(text, keep_blank_values=True, encoding="utf-8", errors="surrogateescape")
    )
