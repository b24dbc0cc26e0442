"""Keyed secrets in syntaxes the ``name = value`` screen does not see.

CLI flags (``--api-token VALUE``), the XML element ``<apiKey>…</apiKey>``, the XML
``<add key="Password" value="…"/>`` pair, the ``mysql -p…`` and ``docker login -p …`` command
lines. :func:`keyed_syntaxes` is called only when
the text holds one of the literals in :data:`TRIGGERS`, with the literals of ``_SYNTAXES`` the text
holds (the redaction screen finds most of them); it yields ``(start, end, kind)`` of the
values whose name says they are secrets (judged by :func:`secret_names.assignment_kind`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from typing import Final

from agents_memory.admission.secret_formats import is_placeholder, looks_random
from agents_memory.admission.secret_names import assignment_kind, wordset

_DOTTED: Final = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")


def is_code(value: str) -> bool:
    """A call, an index or a dotted name: code that computes a secret, not the secret."""
    return any(c in value for c in "([{") or _DOTTED.fullmatch(value) is not None


_UNQUOTED: Final = r"(?:[^\s\"'`;&|<>\\]|\\(?![nrt\"'\\])){1,1024}+"
_QUOTED: Final = r"\"(?P<dq>[^\"\n]{1,1024}+)\"|'(?P<sq>[^'\n]{1,1024}+)'"
_FLAG: Final = re.compile(
    r"--(?<![\w-]--)(?P<name>[a-z][a-z0-9_-]{0,40}+)(?:(?<=pass)|(?<=word)|(?<=sswd)|(?<=oken)|(?<=cret)|(?<=key))"
    rf"(?:=|[ \t]++)(?:{_QUOTED}|(?P<uv>{_UNQUOTED}))"
)
_XML_PAIR: Final = re.compile(
    r"\b(?:key|name)=(?P<q>[\"'])(?P<name>[\w.:-]{1,64}+)(?P=q)[ \t]++value="
    r"(?:\"(?P<dq>[^\"\n]{1,1024}+)\"|'(?P<sq>[^'\n]{1,1024}+)')"
)
_XML_ELEMENT: Final = re.compile(
    r"<(?P<name>[A-Za-z_][\w.:-]{0,63}+)>(?P<uv>[^<>\s]{3,1024}+)</(?P=name)>"
)
_MYSQL: Final = re.compile(
    r"\bmysql(?:dump|admin|sh)?[ \t][^\n|;&]{0,200}?[ \t]-p(?P<uv>[^\s'\"-][^\s'\"]{2,127}+)"
)
_LOGIN: Final = re.compile(
    r"\b(?:docker|podman|buildah|skopeo|nerdctl|helm[ \t]+registry)[ \t]+login\b[^\n|;&]{0,200}?"
    rf"[ \t]-p[ \t]++(?:{_QUOTED}|(?P<uv>{_UNQUOTED}))"
)

# (literal that must be in the text, regex, fixed kind or None to judge the name)
_SYNTAXES: Final = (
    ("--", _FLAG, None),
    ("value=", _XML_PAIR, None),
    ("</", _XML_ELEMENT, None),
    ("mysql", _MYSQL, "password"),
    ("login", _LOGIN, "password"),
)
# The redaction screen looks for these ("--", "mysql" and "login" are tested as substrings, an
# element's closing tag by the screen's own pattern).
TRIGGERS: Final = ("value=",)


_PROSE_WORDS: Final = wordset(
    "a an and or the to for with is are in of on as if then than but not nor so this that these "
    "option options flag flags argument arguments parameter parameters"
)


def _matches(text: str, literal: str, regex: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """``regex``'s matches on the lines that hold ``literal`` (a regex that cannot start with a
    literal would otherwise try every position of a long text)."""
    if literal in ("--", "</"):  # these regexes start with their literal: re skips to it in C
        yield from regex.finditer(text)
        return
    pos = text.find(literal)
    while pos >= 0:
        lo = text.rfind("\n", 0, pos) + 1
        hi = text.find("\n", pos)
        hi = len(text) if hi < 0 else hi
        yield from regex.finditer(text, lo, hi)
        pos = text.find(literal, hi)


def keyed_syntaxes(text: str, literals: Collection[str]) -> Iterator[tuple[int, int, str]]:
    """The keyed values of the syntaxes whose literal is among ``literals`` (those in ``text``)."""
    for literal, regex, fixed in _SYNTAXES:
        if literal not in literals:
            continue
        for m in _matches(text, literal, regex):
            group = next(g for g in ("dq", "sq", "uv") if m.groupdict().get(g) is not None)
            value = m.group(group)
            if fixed is None:
                judged = assignment_kind(m.group("name").strip(".-"))
                if judged is None:
                    continue
                kind, strong = judged
                if not strong and (len(value) < 16 or not looks_random(value)):
                    continue
            else:
                kind = fixed
            if is_placeholder(value) or value.startswith("-") or len(value) < 3:
                continue
            if group == "uv" and (is_code(value) or value.lower() in _PROSE_WORDS):
                continue  # --disabled-password and --disabled-login: prose about flags
            yield (*m.span(group), kind)
