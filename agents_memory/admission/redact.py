"""Secret redaction: replace API keys, tokens, passwords and private keys before anything is stored.

:func:`redact` returns the text with each secret *value* replaced by ``[redacted:<kind>]`` (the
``OPENAI_API_KEY=`` / ``Authorization: Bearer`` / ``password:`` around it stays readable) and the
kinds it found with their counts, never the values. :func:`scan` reports the kinds only (``doctor
--secrets``). Both are pure and safe to call from several threads.

It runs on every captured turn, so it is built in two stages:

1. A **screen** (:mod:`agents_memory.admission.secret_screen`): one regex over the text
   *reversed*, which stops only at separators and a few rare capitals and says which rules to
   run. A turn without a hit (and without ``--`` or ``dapi``) comes back unchanged after one
   scan.
2. **Rules** enabled by the hits run their own regex over the original text. Every repetition is
   bounded or possessive, so no input backtracks catastrophically. Overlapping finds are resolved
   by priority (provider formats before generic ones); a later find that strictly contains an
   earlier one replaces it, so ``password="sk-… extra"`` is redacted whole.

``key = value`` assignments are found from the screen's hit positions, then judged by the name (its
words must say password/secret/token/key) and the value (variable references, placeholders and
code such as ``request.form["password"]`` are left alone).

Secrets said in sentences ("my password is …", "use token … for the bot", "пароль — …",
"비밀번호는 …") are found by :mod:`agents_memory.admission.secret_prose`, behind a screen of
its own; they rank last, after every format and syntax.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator
from typing import Final, NamedTuple

from agents_memory.admission.secret_formats import PLACEHOLDER_PREFIX
from agents_memory.admission.secret_formats import RULES as _RULES
from agents_memory.admission.secret_formats import Rule as _Rule
from agents_memory.admission.secret_formats import is_placeholder as _is_placeholder
from agents_memory.admission.secret_formats import looks_random as _looks_random
from agents_memory.admission.secret_names import WORDS as _WORDS
from agents_memory.admission.secret_names import assignment_kind as _assignment_kind
from agents_memory.admission.secret_names import wordset as _wordset
from agents_memory.admission.secret_prose import SCREEN as _PROSE_SCREEN
from agents_memory.admission.secret_prose import prose_secrets as _prose_secrets
from agents_memory.admission.secret_screen import CURL_RULES as _CURL_RULES
from agents_memory.admission.secret_screen import DAPI_RULES as _DAPI_RULES
from agents_memory.admission.secret_screen import SCREEN as _SCREEN
from agents_memory.admission.secret_screen import SYNTAXES as _SYNTAXES
from agents_memory.admission.secret_screen import Screened as _Screened
from agents_memory.admission.secret_screen import screen as _screen
from agents_memory.admission.secret_syntaxes import is_code as _is_code
from agents_memory.admission.secret_syntaxes import keyed_syntaxes as _keyed_syntaxes

_TOKEN_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_NAME_CHARS: Final = _TOKEN_CHARS | {"."}


class RedactionResult(NamedTuple):
    """The redacted text and ``(kind, count)`` pairs, sorted by kind; never the secret values.

    A named tuple: built for every captured turn, it costs half of a frozen dataclass."""

    text: str
    counts: tuple[tuple[str, int], ...] = ()

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(kind for kind, _ in self.counts)


# --- assignments (name = value) ---------------------------------------------------------------


_VALUE: Final = re.compile(
    r"[ \t]*+(?:\*\*|__)?[ \t]*+(?:"
    r"(?P<esc>\\{1,3})(?P<eq>[\"'])(?P<ev>[^\"'\\\n]{1,1024}+)\\{1,3}(?P=eq)"
    r"|\"(?P<dq>(?:[^\"\\\n]|\\.){1,1024}+)\""
    r"|'(?P<sq>[^'\n]{1,1024}+)'"
    r"|`(?P<bq>[^`\n]{1,1024}+)`"
    r"|(?P<uv>(?:[^\s\"'`<>\\]|\\(?![nrt\"'\\])){1,1024}+))"  # stop at a JSON escape
)
_NAME_END: Final = re.compile(r"[\"'`\\ \t:=>]")
_QUERY_END: Final = re.compile(r"[&;,]")
_DOTTED: Final = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z_]*")
_TYPE_WORDS: Final = _wordset(
    "str string int integer bool boolean bytes float number any none null nil undefined true "
    "false optional secretstr secretbytes list dict object unknown void char text varchar uuid "
    "required optional default"
)


def _judge_value(
    text: str, value: str, *, sep: str, quoted: bool, name: str, strong: bool, end: int
) -> bool:
    """Whether ``value`` (assigned to ``name``) looks like a real secret and not code or prose."""
    if _is_placeholder(value) or value == name or (not quoted and _is_code(value)):
        return False
    if not quoted:
        if sep == ":" and value.lower() in _TYPE_WORDS:
            return False
        newline = text.find("\n", end, end + 200)
        rest = text[end : newline if newline >= 0 else end + 200].strip()
        if sep == ":" and rest[:1] not in ("", "#", ",", "}") and not _looks_random(value):
            return False  # "Password: required for login" is prose, not YAML
        if (
            _IDENT.fullmatch(value)
            and (
                (sep != ":" and not name.isupper())  # password = hunter: a variable
                or rest[:1] in (",", "}", ")")  # {token: csrfToken}: a JS/Python object
                or _WORDS.findall(name)[-1].lower() in value.lower()  # token: authToken
            )
        ):
            return False
    if not strong:
        return len(value) >= 16 and _looks_random(value)
    return len(value) >= 3


def _assignments(text: str, hits: list[tuple[int, int]]) -> Iterator[tuple[int, int, str]]:
    covered = 0  # end of the last value found: a "name=" inside it was judged with it
    for keyword_start, sep_end in sorted(hits):
        if keyword_start < covered:
            continue
        start = keyword_start
        while start > 0 and text[start - 1] in _NAME_CHARS and keyword_start - start < 64:
            start -= 1
        if text[max(0, start - 2) : start] == "${" or text[max(0, start - 3) : start] == "://":
            continue  # a ${VAR} reference, or a URL's user name (the URL rules judge it)
        name = (
            text[start:keyword_start] + _NAME_END.split(text[keyword_start:sep_end], maxsplit=1)[0]
        )
        judged = _assignment_kind(name.strip(".-"))
        if judged is None:
            continue
        kind, strong = judged
        m = _VALUE.match(text, sep_end)
        if m is None:
            continue
        group = m.lastgroup or "uv"  # the alternatives' value groups close last
        value_start, value_end = m.span(group)
        value = m.group(group)
        if len(value) < 3:
            continue
        if group == "uv":
            if text[sep_end - 1] != "=" or text[start - 1 : start] in ("?", "&", ";"):
                value = _QUERY_END.split(value, maxsplit=1)[0]  # a query or a connection string
                value_end = value_start + len(value)
            trimmed = value.rstrip(".,;:)]}")  # f(passwd=None): keeps its "):"
            value_end -= len(value) - len(trimmed)
            value = trimmed
        sep = text[sep_end - 1]
        quoted = group != "uv"
        if sep == "," and not (
            quoted
            and text[start - 1 : start] in ("'", '"')
            and text[max(0, start - 3) : start - 1].rstrip()[-1:] == "("
            and text[value_end + 1 : value_end + 3].lstrip()[:1] == ")"
        ):
            continue  # only a call's ("name", "value") pair, not a list or prose
        if _judge_value(
            text, value, sep=sep, quoted=quoted, name=name, strong=strong, end=value_end
        ):
            covered = value_end
            yield value_start, value_end, kind


# --- the engine -------------------------------------------------------------------------------


def _find(
    text: str,
    backwards: str = "",
    first: re.Match[str] | None = None,
    prose: re.Match[str] | None = None,
) -> list[tuple[int, int, str]]:
    """Non-overlapping ``(start, end, kind)`` spans of secret values, sorted by start (``first``:
    the screen's first hit in ``backwards``, ``text`` reversed, when the caller searched, which
    found nothing when ``backwards`` is given and ``first`` is ``None``; ``prose``: the prose
    screen's first hit in ``text``)."""
    screened_out = backwards and first is None and "--" not in text and "dapi" not in text
    found = [] if screened_out else _find_keyed(text, backwards, first)
    prose = prose or _PROSE_SCREEN.search(text)
    if prose is not None:
        found.extend(_prose_secrets(text, prose))
    if PLACEHOLDER_PREFIX in text:  # what was redacted before stays as it is
        found = _outside_placeholders(text, found)
    return _resolve(found)


def _find_keyed(
    text: str, backwards: str = "", first: re.Match[str] | None = None
) -> list[tuple[int, int, str]]:
    """The formats', assignments' and keyed syntaxes' finds, in priority order."""
    seen = _screen(text, backwards, first)
    dashes = "--" in text
    if seen is None:
        if not dashes and "dapi" not in text:
            return []  # the hot path
        seen = _Screened()
    enabled, markers = seen.enabled, seen.markers
    if "dapi" in text:
        enabled |= _DAPI_RULES
    syntaxes = _syntax_literals(text, markers, dashes, _SYNTAXES in enabled)
    enabled.discard(_SYNTAXES)
    if "curl" in markers or (dashes and "--user" in text):
        enabled |= _CURL_RULES
    if not enabled and syntaxes is None:
        return []
    found: list[tuple[int, int, str]] = []
    for index in sorted(enabled):
        found.extend(_apply(_RULES[index], text))
    found.extend(_assignments(text, seen.assign_hits))
    if syntaxes is not None:
        found.extend(_keyed_syntaxes(text, syntaxes))
    if seen.trigger_ends and "\n" in text:
        found.extend(_split_across_blocks(text, seen.trigger_ends))
    return found


def _syntax_literals(text: str, markers: set[str], dashes: bool, hit: bool) -> set[str] | None:
    """The literals of :func:`secret_syntaxes.keyed_syntaxes` to look for in ``text``, or ``None``
    when they need not run: they run when the text holds ``--``, ``mysql`` or ``login`` or the
    screen saw a keyed syntax (``hit``); ``mysql`` and ``login`` are looked for only when it
    decides that or when a ``-p`` follows."""
    found: set[str] = {literal for literal in ("value=", "</") if literal in markers}
    logins: set[str] = set()
    if "-p" in markers or (found and not dashes and not hit):
        logins = {word for word in ("mysql", "login") if word in text}
    if not (dashes or hit or logins):
        return None
    if dashes:
        found.add("--")
    if "-p" in markers:
        found |= logins
    return found


# Starts with its newline, so re skips to newlines in C.
_BLOCK_JOIN: Final = re.compile(r"\n(?<=[A-Za-z0-9_+/=.-]\n)\n?(?=[A-Za-z0-9_-])")
_TOKEN_RUN: Final = re.compile(r"[A-Za-z0-9_+/=.~-]*+")
_TOKEN_BEFORE: Final = re.compile(r"[A-Za-z0-9_+/=.~-]{1,256}+$")
_TOKEN_AFTER: Final = re.compile(r"[A-Za-z0-9_+/=.~-]{1,256}+")


def _split_across_blocks(text: str, trigger_ends: list[int]) -> Iterator[tuple[int, int, str]]:
    """A secret cut in two where an adapter joined two content blocks of one message ("sk-ant-…"
    at the end of one block, the rest at the start of the next): both pieces are replaced when
    the two glued back together hold a format, across the cut."""
    seen = -1
    for trigger_end in trigger_ends:  # ascending; a cut secret's first piece holds its trigger
        m = _BLOCK_JOIN.search(text, trigger_end, trigger_end + 256)
        if m is None or m.start() <= seen:
            continue
        cut, resume = m.span()
        seen = cut
        if _TOKEN_RUN.match(text, trigger_end, cut).end() != cut:  # type: ignore[union-attr]
            continue  # the trigger is not in the token the cut ends
        left = _TOKEN_BEFORE.search(text, max(0, cut - 256), cut)
        if left is None:
            continue
        right = _TOKEN_AFTER.match(text, resume)
        if right is None:
            continue
        glued = left.group() + right.group()
        width = cut - left.start()
        for start, end, kind in _find(glued):
            if start < width < end and not kind.startswith(_ASSIGNMENT_KINDS):
                yield left.start() + start, cut, kind
                yield resume, resume + end - width, kind


_ASSIGNMENT_KINDS: Final = ("password", "secret", "token", "api_key", "credentials")
_PLACEHOLDER: Final = re.compile(r"\[redacted:[a-z0-9_]{1,64}\]")


def _outside_placeholders(
    text: str, found: list[tuple[int, int, str]]
) -> list[tuple[int, int, str]]:
    spans = [m.span() for m in _PLACEHOLDER.finditer(text)]
    ends = [end for _, end in spans]
    kept = []
    for start, end, kind in found:
        i = bisect_right(ends, start)
        if i == len(spans) or spans[i][0] >= end:
            kept.append((start, end, kind))
    return kept


def _apply(rule: _Rule, text: str) -> Iterator[tuple[int, int, str]]:
    for m in rule.regex.finditer(text):
        start, end = m.span()
        if rule.bounded and (
            (start > 0 and text[start - 1] in _TOKEN_CHARS)
            or (end < len(text) and text[end] in _TOKEN_CHARS)
        ):
            continue
        if rule.check is not None and not rule.check(m):
            continue
        kind = rule.kind(m)
        yield (*m.span("v"), kind) if "v" in m.re.groupindex else (start, end, kind)


def _resolve(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Keep finds in priority order. A later find that strictly contains earlier ones replaces
    them (``password="sk-… tail"`` goes whole) but keeps the most specific kind among them."""
    starts: list[int] = []
    ends: list[int] = []
    kinds: list[str] = []
    for start, end, found_kind in found:
        if end <= start:
            continue
        kind = found_kind
        lo = bisect_right(ends, start)
        hi = bisect_left(starts, end)
        if lo < hi:  # overlaps accepted spans lo..hi-1
            if (
                start <= starts[lo]
                and ends[hi - 1] <= end
                and (end - start) > (ends[hi - 1] - starts[lo])
            ):
                kind = kinds[lo]
                del starts[lo:hi], ends[lo:hi], kinds[lo:hi]
            else:
                continue
        starts.insert(lo, start)
        ends.insert(lo, end)
        kinds.insert(lo, kind)
    return list(zip(starts, ends, kinds, strict=True))


_MAX_PASSES: Final = 4


def redact(text: str) -> RedactionResult:
    """Replace every secret value in ``text`` with ``[redacted:<kind>]``; idempotent.

    A replacement can change what is around it (``-----END …-----password x`` once the block is
    gone), so the text is scanned again until nothing more is found; that second scan only
    happens when the first one found something.
    """
    backwards = text[::-1]
    first = _SCREEN.search(backwards)
    prose = _PROSE_SCREEN.search(text)
    if first is None and prose is None and "--" not in text and "dapi" not in text:
        return RedactionResult(text)  # the hot path: the screens see nothing
    spans = _find(text, backwards, first, prose)
    if not spans:
        return RedactionResult(text)
    counts: Counter[str] = Counter()
    for _ in range(_MAX_PASSES):
        parts: list[str] = []
        last = 0
        for start, end, kind in spans:
            parts += (text[last:start], PLACEHOLDER_PREFIX, kind, "]")
            last = end
        parts.append(text[last:])
        text = "".join(parts)
        counts.update(kind for _, _, kind in spans)
        spans = _find(text)
        if not spans:
            break
    return RedactionResult(text, tuple(sorted(counts.items())))


def scan(text: str) -> tuple[str, ...]:
    """The distinct kinds of secret in ``text``, sorted; never the values."""
    return redact(text).kinds


# Every kind name redact() can report (for docs and ``doctor --secrets``).
KINDS: Final[tuple[str, ...]] = tuple(
    sorted(
        {kind for rule in _RULES for _, kind in rule.kinds}
        | {"password", "secret", "token", "api_key", "credentials", "aws_secret_access_key"}
    )
)
