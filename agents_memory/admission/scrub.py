"""Two opinions on secrets in stored text, and the text with both applied.

``doctor --secrets`` asks the redactor (:mod:`agents_memory.admission.redact`, the formats it
knows) and an independent second opinion (:mod:`agents_memory.admission.entropy`, random-looking
tokens) about each stored text; ``--fix`` rewrites the text with :func:`scrub` (through
:func:`agents_memory.admission.admit.rescrubbed`, which makes it storable), which replaces
what either flags, so the next scan comes back clean.
"""

from __future__ import annotations

from typing import Final

from agents_memory.admission import entropy
from agents_memory.admission.redact import redact

REDACTOR: Final = "redactor"
SECOND_OPINION: Final = "entropy"
_MAX_PASSES: Final = 4


def findings(text: str) -> tuple[str, ...]:
    """``detector:kind`` for every kind either detector finds in ``text``; never the values."""
    return tuple(f"{REDACTOR}:{kind}" for kind in redact(text).kinds) + tuple(
        f"{SECOND_OPINION}:{kind}" for kind in entropy.scan(text)
    )


def scrub(text: str) -> str:
    """``text`` with what the redactor flags redacted, then each token the second opinion
    flags replaced by ``[redacted:<kind>]``; idempotent (a replacement can reveal more, so it
    goes again until nothing changes)."""
    for _ in range(_MAX_PASSES):
        new = entropy.replace(redact(text).text)
        if new == text:
            break
        text = new
    return text
