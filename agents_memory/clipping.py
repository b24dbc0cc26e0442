"""The one rule for cutting a stored text to a character budget before it leaves the product
(MCP replies, the command line, the console): whole when it fits, else its start and ``…``,
never fewer than :data:`MIN_SHOWN` characters. The caller says where the rest can be read
(the row's id)."""

from __future__ import annotations

from typing import Final

MIN_SHOWN: Final = 200
"""A clipped text keeps at least this many characters."""
MARK: Final = "…"


def clip(text: str, room: int) -> tuple[str, bool]:
    """``text`` within ``room`` characters, and whether it was cut."""
    if len(text) <= room:
        return text, False
    return text[: max(room, MIN_SHOWN) - len(MARK)] + MARK, True
