"""The one rule for the text arguments of every tool: :data:`Text` instead of ``str``.

A NUL byte cannot be stored in PostgreSQL text, and a lone surrogate (JSON allows ``\\ud800``)
cannot be encoded as UTF-8: either used to end the call as a bare "Error executing tool" deep
in the database driver. Here it is refused while the arguments are validated, and the model
reads which argument is wrong and why.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator

T = TypeVar("T")


def _problem(value: str) -> str | None:
    if "\x00" in value:
        return f"holds a NUL byte (\\u0000) at character {value.index(chr(0)) + 1}"
    for at, char in enumerate(value, 1):
        if "\ud800" <= char <= "\udfff":
            return f"holds a lone surrogate (\\u{ord(char):04x}) at character {at}"
    return None


def checked_text(value: T) -> T:
    """``value`` as it is when every string in it (nested in lists and objects too) can be
    stored; a ``ValueError`` naming the problem otherwise."""
    strings: list[Any] = [value]
    while strings:
        item = strings.pop()
        if isinstance(item, str):
            problem = _problem(item)
            if problem is not None:
                raise ValueError(f"{problem}: text cannot hold it; remove it and call again")
        elif isinstance(item, dict):
            strings.extend(item.keys())
            strings.extend(item.values())
        elif isinstance(item, list | tuple):
            strings.extend(item)
    return value


Text = Annotated[str, AfterValidator(checked_text)]
"""A tool's text argument: any string that PostgreSQL can store."""
