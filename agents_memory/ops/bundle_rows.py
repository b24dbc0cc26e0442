"""One line of a bundle member read as a row, or refused in one line that names the member,
the line and what was expected there (instead of a bare ``JSONDecodeError``, ``KeyError`` or
``RecursionError`` from somewhere inside the import).

A row is a :class:`BundleRow`: a ``dict`` that knows where it came from. The import checks each
row's shape first and refuses a row it cannot take with its member, line and reason
(:mod:`agents_memory.ops.import_report`), so the rest of the bundle still comes in.
"""

from __future__ import annotations

import json
from typing import Any

from agents_memory.errors import BundleError

_NOTHING = "nothing was imported"


class BundleRow(dict[str, Any]):
    """A row of ``member`` from line ``line``; a missing field raises :class:`BundleError`."""

    __slots__ = ("line", "member")

    def __init__(self, data: dict[str, Any], member: str, line: int) -> None:
        super().__init__(data)
        self.member = member
        self.line = line

    def __missing__(self, key: str) -> Any:
        raise BundleError(
            f"bundle member {self.member} line {self.line}: the row has no {key!r} field, "
            f"which the import needs; {_NOTHING}"
        )


def parse_row(member: str, line: int, raw: bytes) -> BundleRow | Any:
    """Line ``line`` of ``member`` (its bytes) as a row; ``None`` for a blank line. Text that
    is not JSON stops the import (a bundle whose checksums hold was edited by hand); JSON of
    another shape (a list, a row without a field) is returned for the import to refuse that
    row with its reason and go on."""
    where = f"bundle member {member} line {line}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BundleError(
            f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start + 1}); {_NOTHING}"
        ) from None
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BundleError(
            f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); expected one JSON "
            f"object per line; {_NOTHING}"
        ) from None
    except RecursionError:
        raise BundleError(
            f"{where}: nested too deeply to read; expected one JSON object of plain fields "
            f"per line; {_NOTHING}"
        ) from None
    if not isinstance(data, dict):
        return data  # JSON of the wrong shape: the import refuses that row and says why
    return BundleRow(data, member, line)
