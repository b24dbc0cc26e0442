"""A second opinion on secrets: random-looking tokens, judged by entropy, not by format.

:mod:`agents_memory.admission.redact` knows providers' formats and ``name = value`` shapes; what
it does not know it lets through. This detector shares none of its rules: it looks at every
token of base64/hex-like characters and asks whether it looks *random*, the one property every
credential has whatever its format. ``doctor --secrets`` runs both, so a leak the redactor's
catalogue misses still shows (and ``--fix`` replaces the token with
``[redacted:high_entropy]`` or ``[redacted:keyword_entropy]``).

Two rules, kinds reported without values:

``keyword_entropy``
    A token of 20+ characters, with a keyword (key, token, secret, password, credential, auth,
    bearer …) shortly before it on the same line, whose Shannon entropy is at least 3.5 bits per
    character and which looks random (mixed character classes that switch often) — or is 32+
    hex digits.
``high_entropy``
    A token of 24+ characters anywhere, with at least 4.3 bits per character, lower and upper
    case letters and digits, that switches character class on at least 40 % of its characters:
    random base64, not CamelCase identifiers, paths, git hashes or UUIDs.

Tokens longer than 256 characters are data (an inline image, a minified bundle), not
credentials, and are left alone; so is anything already inside a ``[redacted:…]`` placeholder.
Pure and thread-safe.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Final

KINDS: Final = ("high_entropy", "keyword_entropy")

_TOKEN: Final = re.compile(
    r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,256}+={0,2}(?![A-Za-z0-9+/_=-])"
)
"""base64 (standard and URL-safe, with its padding) and hex characters, ``_`` and ``-``: a
credential's alphabet (``NAME=value`` is two tokens)."""
# A keyword ending a name, then what separates a name from its value (``token: "``,
# ``API_KEY=``, ``Bearer ``), right before the token.
_KEYWORD: Final = re.compile(
    r"(?i:key|token|secret|passw(?:or)?d|passphrase|pwd|credentials?|auth|bearer|signature|sig)"
    r"[A-Za-z_-]{0,3}[\"'`]?[ \t]{0,3}(?:[:=]>?|[ \t])[ \t]{0,3}[\"'`]?$"
)
_KEYWORD_WINDOW: Final = 48
"""How much of the line before a token the keyword look-up reads."""
_OBJECT_ID: Final = re.compile(
    r"(?:[a-z]{1,12}_){0,2}(?:call|msg|toolu|srvtoolu|req|resp|chatcmpl|fc|rs|run|thread|asst"
    r"|file|batch|ws|step|ses|prt|evt)[_-]"
)
"""Object ids the agents' APIs hand out (``toolu_01…``, ``agent_msg_01…``, ``call_…``; OpenCode's
session, part and event ids ``ses_…``, ``prt_…``, ``evt_…``): random by design, public by
design, and in every transcript."""
_PATH_SEGMENT: Final = re.compile(r"(?:^|/)(?:[a-z]{3,}|[0-9]{1,4})(?:/|$)")
_HEX: Final = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_UUID: Final = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_PLACEHOLDER: Final = re.compile(r"\[redacted:[a-z0-9_]{1,64}\]")


@dataclass(frozen=True, slots=True)
class Finding:
    """Where a token is (``start``, ``end``) and which rule flagged it; never its value."""

    start: int
    end: int
    kind: str


def entropy(token: str) -> float:
    """Shannon entropy of ``token`` in bits per character."""
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in Counter(token).values())


def _class(char: str) -> int:
    return 0 if char.islower() else 1 if char.isupper() else 2 if char.isdigit() else 3


def switch_rate(token: str) -> float:
    """The share of neighbouring characters of different classes (lower, upper, digit, other)."""
    if len(token) < 2:
        return 0.0
    classes = [_class(c) for c in token]
    return sum(a != b for a, b in itertools.pairwise(classes)) / (len(token) - 1)


def _mixed(token: str) -> bool:
    return (
        any(c.islower() for c in token)
        and any(c.isupper() for c in token)
        and any(c.isdigit() for c in token)
    )


def _keyword_before(text: str, start: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    window = text[max(line_start, start - _KEYWORD_WINDOW) : start].replace("\\", "")
    return _KEYWORD.search(window) is not None


def _judge(token: str, *, keyword: bool) -> str | None:
    if "/" in token and _PATH_SEGMENT.search(token):  # a path: judge its parts
        parts = (_judge(part, keyword=keyword) for part in token.split("/") if len(part) >= 20)
        return next((kind for kind in parts if kind is not None), None)
    if _UUID.fullmatch(token) or _OBJECT_ID.match(token):
        return None
    bits = entropy(token)
    if keyword:
        if _HEX.fullmatch(token):
            return "keyword_entropy" if len(token) >= 32 and bits >= 3.0 else None
        random_looking = _mixed(token) or (len(token) >= 32 and switch_rate(token) >= 0.3)
        if bits >= 3.5 and random_looking and switch_rate(token) >= 0.35:
            return "keyword_entropy"
    if (
        len(token) >= 24
        and bits >= min(4.3, math.log2(len(token)) - 0.6)
        and _mixed(token)
        and switch_rate(token) >= 0.4
    ):
        return "high_entropy"
    return None


def find(text: str) -> list[Finding]:
    """Tokens in ``text`` that look like credentials, in order."""
    found: list[Finding] = []
    placeholders = [m.span() for m in _PLACEHOLDER.finditer(text)]
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        token = m.group().strip("=-_")  # padding and separators are not part of the judgement
        if len(token) < 20 or any(s <= start < e for s, e in placeholders):
            continue
        kind = _judge(token, keyword=_keyword_before(text, start))
        if kind is not None:
            found.append(Finding(start, end, kind))
    return found


def scan(text: str) -> tuple[str, ...]:
    """The distinct kinds found in ``text``, sorted; never the values."""
    return tuple(sorted({f.kind for f in find(text)}))


def replace(text: str) -> str:
    """``text`` with every flagged token replaced by ``[redacted:<kind>]``; idempotent."""
    found = find(text)
    if not found:
        return text
    parts: list[str] = []
    last = 0
    for f in found:
        parts += (text[last : f.start], f"[redacted:{f.kind}]")
        last = f.end
    parts.append(text[last:])
    return "".join(parts)
