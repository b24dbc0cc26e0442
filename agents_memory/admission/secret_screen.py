"""The redaction screen: which rules :mod:`agents_memory.admission.redact` runs on a text.

One regex over the text *reversed*. Almost every trigger (``sk-``, ``ghp_``, ``password=`` …)
*ends* in a separator (``-``, ``_``, ``.``, ``=``, ``:``), so reversed they start with one of a
few characters, and ``re`` skips to those in C and tries only the branches for that character
(the triggers are factored into a trie). A turn without a hit costs one scan.

Each character the screen stops at costs a call into the matcher, so the screen stops at as few
kinds of character as it can: separators, and a few rare capitals for the triggers made only of
letters and digits. A trigger that does not start (reversed) with one of them is *anchored* on
the first of its characters that is one: the screen stops there, checks the rest of the trigger
around it with a lookbehind and a lookahead and consumes only that one character, and the
trigger is then found by a substring test around every hit. The same anchors mark a few literals
the redactor needs to know about (``--``, ``" -u "``, ``</`` …) without a substring test over the
whole text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from agents_memory.admission.secret_formats import RULES as _RULES
from agents_memory.admission.secret_syntaxes import TRIGGERS as _SYNTAX_TRIGGERS

SYNTAXES: Final = -1  # the "rule" index that stands for secret_syntaxes.keyed_syntaxes

# The last word of a name that may hold a secret; reversed, each follows its separator.
_ASSIGN_WORDS: Final = (
    "password passwd passphrase pwd pass pw secret token key credentials credential authorization"
)
_ASSIGN_VARIANTS: Final = sorted(
    {v for w in _ASSIGN_WORDS.split() for v in (w, w.upper(), w.capitalize())},
    key=len,
    reverse=True,
)


def _alternation(words: list[str]) -> str:
    """``words`` as one alternation factored by prefix (none may be a prefix of another): ``re``
    tries the branches of one node one by one, so a trie tries far fewer than a flat list."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})

    def build(node: dict[str, Any]) -> str:
        alternatives = [re.escape(c) + build(child) for c, child in sorted(node.items())]
        if len(alternatives) < 2:
            return "".join(alternatives)
        return "(?:" + "|".join(alternatives) + ")"

    return build(trie)


# Case variants as plain literals: re skips non-matching literal branches much faster than (?i).
_ASSIGN_WORDS_REVERSED: Final = _alternation([v[::-1] for v in _ASSIGN_VARIANTS])
_ASSIGN_TAIL: Final = (
    r"[ \t]{0,4}+[\"'`\\]{0,3}+(?:"
    + _alternation([w[::-1] for w in ("_base", "_value", "_b64", "_BASE", "_VALUE", "_B64")])
    + ")?"
    + _ASSIGN_WORDS_REVERSED
)
# Extra alternatives by first character: name=, name:=, name=>, name:, and a discord-ish ".x.y".
_EXTRAS: Final = {
    # = := ::= :::= .= ?= +=, and Go's "var name string ="
    "=": (f"(?::{{1,3}}+|[.?+])?(?:[ \t]{{0,4}}+gnirts)?{_ASSIGN_TAIL}",),
    ",": (rf"[ \t]{{0,4}}+[\"']{_ASSIGN_TAIL}",),  # setProperty("password", "…")
    ">": (f"={_ASSIGN_TAIL}", rf"{_ASSIGN_WORDS_REVERSED}[\w.:-]{{0,60}}+/<"),  # </apiKey>
    ":": (_ASSIGN_TAIL,),
    # discord, airtable, a Vault "s.<24>" (the lookbehind reads the 24 characters before it)
    ".": (
        r"[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{20}",
        r"[A-Za-z0-9]{14}tap",
        r"s(?<=[A-Za-z0-9]{24}\.s)(?![\w.-])",
    ),
    "|": (r"[0-9]{15}",),  # a Facebook "app id|secret"
}

# Literals the redactor asks about, found by the screen instead of a substring test over the text
# (name -> literals). "--" is too common to be a hit: a substring test finds it faster.
MARKERS: Final = {
    "curl": (" -u ",),  # the curl -u rule
    "value=": ("value=",),  # an XML <add key="…" value="…"/> pair
    "</": ("</",),  # an XML element
    "-p": (" -p", "\t-p"),  # a mysql or docker login's password
}

# Printable ASCII, most common first in code, prose and transcripts: where the screen must not
# stop (the rarest character of an all-alphanumeric trigger anchors it).
_COMMON: Final = (
    " etiorasnldcufmhp-.gb_y,:\"w)(0vx/1'=k2`#TES*AI34C65ND9OR[]78LP>MFUj\\GBq<HzW;+V{}Y|Z$K%J@XQ"
    "!?&~^"
)


def _cost(char: str) -> int:
    return len(_COMMON) - _COMMON.index(char) if char in _COMMON else 1


def _stops(reversed_literals: list[str]) -> frozenset[str]:
    """The characters the screen stops at: separators that start a reversed trigger, and for
    the triggers made only of letters and digits a few rare ones that cover them all."""
    stops = set(_EXTRAS) | {r[0] for r in reversed_literals if not r[0].isalnum()}
    left = [r for r in reversed_literals if not stops.intersection(r)]
    while left:
        chars = sorted({c for r in left for c in r})
        best = max(chars, key=lambda c: sum(c in r for r in left) / _cost(c))
        stops.add(best)
        left = [r for r in left if best not in r]
    return frozenset(stops)


def _trie_regex(
    words: list[str], extras: Mapping[str, tuple[str, ...]], anchors: Mapping[str, list[str]]
) -> re.Pattern[str]:
    """One alternation of ``words`` factored by prefix, plus ``extras`` after their first char
    and, last of all, the zero-width ``anchors`` after theirs.

    Every top-level alternative starts with a literal character, so ``re`` skips in C to the
    positions holding one of those characters, and tries only the branches for that character.
    """
    trie: dict[str, dict[str, Any]] = {char: {} for char in (*extras, *anchors)}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, Any], more: tuple[str, ...] = (), last: tuple[str, ...] = ()) -> str:
        alternatives = [re.escape(c) + build(child) for c, child in sorted(node.items()) if c]
        # a longer shape (airtable's ".<14>tap") must not lose to a literal it contains (".kp")
        alternatives = (
            [*more, *alternatives] if more[:1] and more[0][:1] == "[" else alternatives + list(more)
        )
        alternatives += last
        if not alternatives:
            return ""
        body = "(?:" + "|".join(alternatives) + ")" if len(alternatives) > 1 else alternatives[0]
        return f"(?:{body})?" if "" in node else body

    top = (
        re.escape(c) + build(child, extras.get(c, ()), _guarded(c, anchors.get(c, [])))
        for c, child in sorted(trie.items())
    )
    return re.compile("|".join(top))


def _guarded(char: str, anchors: list[str]) -> tuple[str, ...]:
    """The anchors after ``char``; those that look behind it behind one lookbehind of the
    character before it, so that the screen tries one assertion, not all, at most positions."""
    behind = [a for a in anchors if a.startswith("(?<=")]
    if len(behind) < 2:
        return tuple(anchors)
    before = sorted({re.sub(r"\\(.)", r"\1", a[4:].split(")")[0])[-2] for a in behind})
    guard = f"(?<=[{''.join(re.escape(c) for c in before)}]{re.escape(char)})"
    rest = [a for a in anchors if a not in behind]
    return (guard + "(?:" + "|".join(behind) + ")", *rest)


# A whole hit: its rules, its markers, and the anchored literals that can overlap it.
Table = dict[str, tuple[frozenset[int], frozenset[str], "Anchored"]]


def _anchor(reversed_literal: str, at: int) -> str:
    """Zero-width after the character at ``at``: the rest of the literal around it."""
    before, after = reversed_literal[: at + 1], reversed_literal[at + 1 :]
    assert at or after, "a one-character anchor would stop the screen at every such character"
    return (f"(?<={re.escape(before)})" if at else "") + (
        f"(?={re.escape(after)})" if after else ""
    )


def _overlap(a: str, b: str) -> bool:
    """Whether an occurrence of ``a`` and one of ``b`` can share characters."""
    if a in b or b in a:
        return True
    return any(a.endswith(b[:i]) or b.endswith(a[:i]) for i in range(1, min(len(a), len(b))))


Anchored = tuple[tuple[str, frozenset[int], frozenset[str]], ...]


def _build() -> tuple[re.Pattern[str], Table, Anchored, dict[str, frozenset[int]]]:
    """The screen regex, its table of whole hits, the anchored literals and the named triggers."""
    by_trigger: dict[str, set[int]] = {}
    for index, rule in enumerate(_RULES):
        for trigger in rule.triggers:
            by_trigger.setdefault(trigger, set()).add(index)
    for literal in _SYNTAX_TRIGGERS:  # the keyed syntaxes run when the screen sees these
        by_trigger.setdefault(literal, set()).add(SYNTAXES)
    special = {t[1:]: frozenset(rules) for t, rules in by_trigger.items() if t[0] == "\0"}
    literals = {t for t in by_trigger if t[0] != "\0"}
    marked = {lit for lits in MARKERS.values() for lit in lits}

    def entry(t: str) -> tuple[frozenset[int], frozenset[str]]:
        # a hit on "gsk_" must also run the rules of "sk_": union every trigger contained in it
        rules = frozenset(i for u, r in by_trigger.items() if u[0] != "\0" and u in t for i in r)
        names = frozenset(n for n, lits in MARKERS.items() for lit in lits if lit in t)
        return rules, names

    stops = _stops([t[::-1] for t in literals])
    words: list[str] = []
    anchors: dict[str, list[str]] = {}
    anchored: list[tuple[str, frozenset[int], frozenset[str]]] = []
    for t in sorted(literals | marked):
        r = t[::-1]
        at = 0 if r[0] in stops else next(i for i, c in enumerate(r) if c in stops)
        if at == 0 and t in literals:
            words.append(r)
            if t in marked:  # found whole when it starts a hit; by its window when it is inside one
                anchored.append((r, *entry(t)))
        else:
            anchors.setdefault(r[at], []).append(_anchor(r, at))
            anchored.append((r, *entry(t)))
    table = {r: (*entry(r[::-1]), tuple(a for a in anchored if _overlap(r, a[0]))) for r in words}
    return _trie_regex(words, _EXTRAS, anchors), table, tuple(anchored), special


SCREEN, _TABLE, _ANCHORED, _NAMED = _build()
_REACH: Final = max(len(r) for r, _, _ in _ANCHORED) - 1
_ASSIGN_RULES: Final = _NAMED["assign"]
_AUTH_RULES: Final = _NAMED["auth"]
_DISCORD_RULES: Final = _NAMED["discord"]
_AIRTABLE_RULES: Final = _NAMED["airtable"]
_PIPE_RULES: Final = _NAMED["pipe"]
_VAULT_RULES: Final = _NAMED["vault"]
CURL_RULES: Final = _NAMED["curl"]
DAPI_RULES: Final = _NAMED["dapi"]


@dataclass(slots=True)
class Screened:
    """What the screen saw: the rules to run, the ``name=`` hits (start of the name's last word,
    end of the separator), where each trigger ends, and the :data:`MARKERS` present."""

    enabled: set[int] = field(default_factory=set)
    assign_hits: list[tuple[int, int]] = field(default_factory=list)
    trigger_ends: list[int] = field(default_factory=list)
    markers: set[str] = field(default_factory=set)


def screen(text: str, backwards: str = "", first: re.Match[str] | None = None) -> Screened | None:
    """What the screen sees in ``text``; ``None`` when it sees nothing (the hot path). A caller
    that searched ``backwards`` (``text`` reversed) already passes its ``first`` hit."""
    if first is None:
        backwards = text[::-1]
        first = SCREEN.search(backwards)
        if first is None:
            return None
    n = len(text)
    seen = Screened()
    for m in SCREEN.finditer(backwards, first.start()):
        start, end = m.span()
        hit = m.group()
        found = _TABLE.get(hit)
        if found is None:
            _anchored_near(backwards, start, end, seen, _ANCHORED)
        elif found[2]:
            _anchored_near(backwards, start, end, seen, found[2])
        if found is not None:
            seen.enabled |= found[0]
            seen.markers |= found[1]
            seen.trigger_ends.append(n - start)
        elif len(hit) == 1:  # an anchor: its literal was found by the window above
            continue
        elif hit[0] == ".":
            seen.enabled |= (
                _VAULT_RULES
                if hit == ".s"
                else _AIRTABLE_RULES
                if hit[-3:] == "tap"
                else _DISCORD_RULES
            )
        elif hit[-2:] == "/<":  # the closing tag of an element named like a secret
            seen.enabled.add(SYNTAXES)
        elif hit[0] == "|":
            seen.enabled |= _PIPE_RULES
        elif hit[-13:].lower() == "noitazirohtua":  # an Authorization header
            seen.enabled |= _AUTH_RULES
        else:
            seen.assign_hits.append((n - end, n - start))
            seen.enabled |= _ASSIGN_RULES
    seen.trigger_ends = sorted(set(seen.trigger_ends))
    return seen


def _anchored_near(
    backwards: str, start: int, end: int, seen: Screened, anchored: Anchored
) -> None:
    """The anchored literals that overlap the hit at ``start:end`` (every occurrence of one
    overlaps some hit: its anchor stops the screen on it unless another hit covers it)."""
    low = max(0, start - _REACH)
    window = backwards[low : end + _REACH]
    for literal, rules, names in anchored:
        at = window.find(literal)
        if at < 0:
            continue
        seen.markers |= names
        if rules:
            seen.enabled |= rules
            n = len(backwards)
            while at >= 0:
                seen.trigger_ends.append(n - low - at)
                at = window.find(literal, at + 1)
