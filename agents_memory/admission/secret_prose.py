"""Secrets said in sentences: "my password is Tr0ub4dor&3", "the staging API key is …".

People paste credentials to agents in prose, where no ``name = value`` syntax marks them. A
value is redacted when a secret's *name* introduces it in a sentence, in the languages the
product handles (English, Russian, Korean):

* the name, then a link: ``the DB password was changed to X``, ``the token for the bot is X``,
  ``пароль от базы — X``, ``токен теперь X``, ``비밀번호는 X입니다``, ``토큰을 X로 바꿨어요``;
* a verb, then the name: ``use token X for the bot``, ``log in with password X``,
  ``используй токен X``, ``вот пароль: X``.

The names are those :func:`secret_names.assignment_kind` knows (password, passphrase, token,
secret, credentials, an API/access/secret/private… key; a bare "key" only with a random-looking
value), plus "connection string". The value must look like a secret and not like a word, a
number, a version, a path, an identifier, a placeholder or code, so "the password field is
required", "the key is None" and ``password = get_password()`` stay as they are. A value with
no name and no known format (a bare hex string in a log line) is not touched here: it cannot be
told from a hash.

:data:`SCREEN` is a cheap test a text must pass before :func:`prose_secrets` looks closer: a
regex whose every branch starts with one literal character, mostly rare ones (``w`` of
"password", ``k`` of "token"/"key", ``c`` of "secret"/"credential"/"connection"), so ``re``
skips through the text in C.
"""

# ruff: noqa: RUF001  (Russian names and links, dashes and quotes of prose)
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from agents_memory.admission.secret_formats import is_placeholder, looks_random
from agents_memory.admission.secret_names import assignment_kind, wordset
from agents_memory.admission.secret_syntaxes import is_code


def _both(char: str, rest: str) -> str:
    return "|".join(c + rest for c in sorted({char.lower(), char.upper()}))


# Korean names: the screen's literals ("인증" and "연결" need their second word, "키" a qualifier).
_KO_KINDS: Final = {
    "비밀번호": "password",
    "비번": "password",
    "패스워드": "password",
    "암호": "password",
    "토큰": "token",
    "시크릿": "secret",
    "인증": "credentials",
    "연결": "credentials",
    "키": "api_key",
}
SCREEN: Final = re.compile(
    "|".join(
        (
            _both("w", r"(?<=[pP][aA][sS][sS][wW])"),  # password, passwd
            _both("w", r"(?<=[pP][wW])(?=[dD])"),  # pwd
            _both("p", r"(?<=[sS][sS][pP])(?=[hH][rR])"),  # passphrase
            _both("k", r"(?<=[tT][oO][kK])(?=[eE][nN])"),  # token
            _both("k", r"(?=[eE][yY][sS]?+(?![A-Za-z]))"),  # key, not keyword
            _both("c", r"(?<=[sS][eE][cC])(?=[rR][eE][tT])"),  # secret
            _both("c", r"(?=[rR][eE][dD](?:[eE][nN][tT]|[sS](?![A-Za-z])))"),  # credential, creds
            _both("c", r"(?=[oO][nN][nN][eE][cC][tT][iI][oO][nN][ \t]++[sS][tT][rR])"),
            _both("л", r"(?<=[пП][аА][рР][оО][лЛ])"),  # пароль
            _both("к", r"(?<=[тТ][оО][кК])(?=[еЕ][нН])"),  # токен
            _both("к", r"(?=[лЛ][юЮ][чЧ])"),  # ключ, подключения
            _both("к", r"(?<=[сС][еЕ][кК])(?=[рР][еЕ][тТ])"),  # секрет
            *sorted(_KO_KINDS, key=len, reverse=True),
        )
    )
)

# --- the value --------------------------------------------------------------------------------

_VALUE: Final = re.compile(
    r"(?:\"(?P<dq>[^\"\n]{4,200}+)\"|'(?P<sq>[^'\n]{4,200}+)'|`(?P<bq>[^`\n]{4,200}+)`"
    r"|“(?P<cq>[^”\n]{4,200}+)”|«(?P<gq>[^»\n]{4,200}+)»"
    r"|\\{1,3}\"(?P<ev>[^\"\\\n]{4,200}+)\\{1,3}\""  # quoted inside a JSON string
    r"|(?P<uv>(?:[^\s\"'`«»“”<>\\]|\\(?![nrt\"'\\])){4,200}+))"  # stops at a JSON escape
)
_TRAILING: Final = re.compile(r"(?:[.,;:!?)\]}]|[\uac00-\ud7a3]){1,8}$")
_WORDISH: Final = re.compile(r"[^\W\d_]+(?:['’_-][^\W\d_]+)*+")
_ENV_NAME: Final = re.compile(r"_?[A-Z][A-Z0-9]*+(?:_[A-Z0-9]++)++")
_IDENTIFIER: Final = re.compile(r"_\w*+|[a-z][a-z0-9]*+(?:[_-][a-z0-9]++)++")
_NUMBERISH: Final = re.compile(r"[vV]?[0-9]++(?:[.,:/x-][0-9]++)*+[a-zA-Z%]{0,3}+")
_FILE: Final = re.compile(
    r"(?i).*\.(?:pem|key|json|ya?ml|env|txt|p12|pfx|crt|cer|der|jks|kdbx|gpg|asc|pub|toml|ini|cfg|"
    r"conf|py|js|ts|sh|md|log)"
)
_EMAIL: Final = re.compile(r"[\w.+-]++@[\w-]++(?:\.[\w-]++)+")


def _classes(value: str) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def secret_like(value: str, *, strong: bool) -> bool:
    """Whether ``value``, introduced by a secret's name, is the secret itself (``strong``:
    the name alone says so; a weak name, a bare "key", needs a random-looking value)."""
    if len(value) < 6 or is_placeholder(value) or is_code(value) or _elsewhere(value):
        return False
    if (
        _WORDISH.fullmatch(value)
        or _ENV_NAME.fullmatch(value)
        or _IDENTIFIER.fullmatch(value)
        or _FILE.fullmatch(value)
        or _EMAIL.fullmatch(value)
    ):
        return looks_random(value) and len(value) >= 16  # a word, a name, a file, an address
    if _NUMBERISH.fullmatch(value):
        return value.isdigit() and len(value) >= 6 and strong  # not a version, date or size
    if strong:
        return _classes(value) >= 2
    return (len(value) >= 16 and looks_random(value)) or (len(value) >= 10 and _mixed(value))


def _mixed(value: str) -> bool:
    """Lower case, upper case and digits: "HomeNet2026!xyz", not "Ctrl+Shift+P"."""
    return (
        any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and any(c.isdigit() for c in value)
    )


def _elsewhere(value: str) -> bool:
    """A word of Russian or Korean prose, a path, a variable, a flag; or a URL or a
    ``NAME=value`` assignment, which the URL and assignment rules redact, keeping their
    readable parts."""
    return (
        any(c.isalpha() and not c.isascii() for c in value)
        or value[0] in "/~.$%@#&*-"
        or "://" in value
        or _ASSIGNED.match(value) is not None
    )


_ASSIGNED: Final = re.compile(r"[A-Za-z_][\w.-]{0,64}+=(?=[^=\s])")


def _value_at(text: str, pos: int, *, spaces: bool) -> tuple[int, int] | None:
    """The span of the value that starts at ``pos`` (quotes and trailing punctuation off)."""
    m = _VALUE.match(text, pos)
    if m is None:
        return None
    group = m.lastgroup or "uv"
    start, end = m.span(group)
    value = m.group(group)
    if group == "uv":
        trail = _TRAILING.search(value)
        if trail is not None:
            end -= len(trail.group())
    elif not spaces and any(c.isspace() for c in value):
        return None
    return start, end


# --- English ---------------------------------------------------------------------------------

_EN_QUALIFIER: Final = r"(?:[ \t]++(?:for|of|on|at|from|in|to)(?:[ \t]++[^\s,;:!?]{1,40}+){1,4}?)?"
_EN_COPULA: Final = (
    r"(?:is|was|are|were|will[ \t]++be|should[ \t]++be|must[ \t]++be|has[ \t]++been"
    r"|have[ \t]++been|had[ \t]++been|got|gets)"
)
_EN_ADVERB: Final = r"(?:now|still|currently|actually|just|simply|literally|temporarily|also)"
_EN_CHANGED: Final = r"(?:changed|updated|reset|rotated|set|switched|changing)[ \t]++(?:to|as|into)"
_EN_LINK: Final = re.compile(
    _EN_QUALIFIER + r"(?:'s)?[ \t]++(?:"
    rf"{_EN_COPULA}(?:[ \t]*+:)?(?:[ \t]++{_EN_ADVERB})?(?:[ \t]++{_EN_CHANGED})?"
    rf"|(?:now[ \t]++)?{_EN_CHANGED}"
    r"|[—–])[ \t]++",
    re.IGNORECASE,
)
_EN_QUALIFIED_COLON: Final = re.compile(_EN_QUALIFIER[:-1] + r"[ \t]*+:[ \t]++")  # "X for Y: v"
_EN_VERBS: Final = wordset(
    "use using try with enter type paste pass here's heres it's gave give got sent send my our your"
)
_EN_SET_VERBS: Final = wordset("set change changed reset update updated rotate rotated")
_EN_NAME_WORDS: Final = wordset(
    "password passwords passwd pwd passphrase passphrases token tokens key keys secret secrets "
    "credential credentials creds apikey"
)
_CONNECTION: Final = re.compile(r"(?i)connection[ \t]++string")
_TO_LINK: Final = re.compile(r"[ \t]++(?:to|as)[ \t]++")
_VERB_LINK: Final = re.compile(r"[ \t]*+:?[ \t]*+")


def _english(text: str, start: int) -> Iterator[tuple[int, int, str]]:
    """The value a name (around ``start``) introduces, if any. The link and the value are
    looked at first (most names in code have neither), the words before the name last."""
    lo = start
    while lo > 0 and (text[lo - 1].isalpha() and text[lo - 1].isascii()):
        lo -= 1
    hi = start
    while hi < len(text) and text[hi].isalpha() and text[hi].isascii():
        hi += 1
    word = text[lo:hi].lower()
    connection = _CONNECTION.match(text, lo)
    if connection is not None:
        hi = connection.end()
    elif word not in _EN_NAME_WORDS:
        return
    verbs: frozenset[str] | None = None
    link = _EN_LINK.match(text, hi) or _EN_QUALIFIED_COLON.match(text, hi)
    if link is None:
        link, verbs = _TO_LINK.match(text, hi), _EN_SET_VERBS  # "I set the Redis password to X"
    if link is None:
        link, verbs = _VERB_LINK.match(text, hi), _EN_VERBS  # "use token X for the bot"
        if link is None or link.end() == hi:
            return
    span = _value_at(text, link.end(), spaces=word.startswith("passphrase"))
    if span is None:
        return
    judged = ("credentials", True) if connection is not None else _en_kind(word, text, lo)
    if judged is None or not secret_like(text[span[0] : span[1]], strong=judged[1]):
        return
    if verbs is None or _verb_before(text, lo, verbs):
        yield span[0], span[1], judged[0]


def _verb_before(text: str, lo: int, verbs: frozenset[str]) -> bool:
    """Whether one of ``verbs`` stands at most four words before the name at ``lo`` ("use the
    staging API token", "here is the token")."""
    if lo == 0 or not text[lo - 1].isspace():
        return False
    words = text[max(0, lo - 60) : lo].lower().split()[-5:]
    for i, word in enumerate(reversed(words)):
        if word.strip(",;:") in verbs or (word == "is" and words[-i - 2 :][:1] == ["here"]):
            return True
        if i and word[-1:] in ",.;:!?":
            break
    return False


def _en_kind(word: str, text: str, lo: int) -> tuple[str, bool] | None:
    """The kind the name ``word`` (at ``lo``) says, read with the word before it ("API key",
    "public key", "max tokens"), and whether the name alone is enough."""
    if word.startswith("cred"):
        return "credentials", True
    words = text[max(0, lo - 32) : lo].split() if lo and text[lo - 1] in " \t" else []
    before = words[-1] if words and words[-1][:1].isalpha() else ""
    singular = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
    judged = assignment_kind(f"{before} {singular}".strip())
    if judged is None and before:
        return None  # "public key", "max tokens", "reset password": not the secret
    return judged or assignment_kind(singular)


# --- Russian ---------------------------------------------------------------------------------

_RU_QUALIFIER: Final = r"(?:[ \t]++(?:от|для|к|на|в|из)[ \t]++[^\s,;!?:—–-]{1,40}+)?"
_RU_WORDS: Final = r"(?:[ \t]++[^\s,;!?:—–-]{1,40}+){0,3}?"  # "секрет вебхука — X"
_RU_LINK: Final = re.compile(
    _RU_QUALIFIER + _RU_WORDS + r"(?:[ \t]*+[:=—–][ \t]*+|[ \t]++-[ \t]++"
    r"|[ \t]++(?:(?:теперь|уже|был|была|было|были)[ \t]++)?(?:поменял[аи]?|поменян[аоы]?"
    r"|изменил[аи]?|изменён[аоы]?|изменен[аоы]?|сменил[аи]?|сменён[аоы]?|сменен[аоы]?"
    r"|обновил[аи]?|обновлён[аоы]?|обновлен[аоы]?)[ \t]++на[ \t]++"
    r"|[ \t]++(?:это|будет|теперь|сейчас|стал|стала|был|была|всё[ \t]++ещё|все[ \t]++еще)"
    r"(?:[ \t]*+[:—–])?[ \t]++)",
    re.IGNORECASE,
)
_RU_BARE: Final = re.compile(_RU_QUALIFIER + r"[ \t]++")
_RU_VERB: Final = re.compile(
    r"(?i:(?:используй(?:те)?|возьми(?:те)?|вот|держи(?:те)?|введи(?:те)?|с|мой|моя|наш|новый"
    r"|новая)[ \t]++(?:(?:мой|наш|этот|новый|старый|временный)[ \t]++)?)$"
)
_RU_KINDS: Final = (
    ("парол", "password", True),
    ("токен", "token", True),
    ("секрет", "secret", True),
    ("ключ", "api_key", False),
)
_RU_KEY_QUALIFIERS: Final = wordset("api апи секретный приватный закрытый доступа")
_RU_NEXT: Final = re.compile(r"[ \t]++([\w-]{1,20}+)")


def _russian(text: str, start: int) -> Iterator[tuple[int, int, str]]:
    lo = start
    while lo > 0 and text[lo - 1].isalpha():
        lo -= 1
    hi = start
    while hi < len(text) and text[hi].isalpha():
        hi += 1
    word = text[lo:hi].lower()
    found = next(((k, s) for stem, k, s in _RU_KINDS if word.startswith(stem)), None)
    before = text[max(0, lo - 24) : lo].split()
    previous = before[-1].lower().strip("-") if before else ""
    if word.startswith("подключ") and previous.startswith("строк"):
        found = ("credentials", True)
    if found is None:
        return
    kind, strong = found
    if kind == "api_key":
        after = _RU_NEXT.match(text, hi)
        following = after.group(1).lower() if after else ""
        strong = previous in _RU_KEY_QUALIFIERS or following in _RU_KEY_QUALIFIERS
    link = _RU_LINK.match(text, hi) or _RU_BARE.match(text, hi)
    if link is None:
        return
    span = _value_at(text, link.end(), spaces=False)
    if span is None:
        return
    value = text[span[0] : span[1]]
    # Russian drops "is" ("мой пароль X"): with no link word and no verb, only a value of
    # three kinds of character is taken
    bare = link.re is _RU_BARE and _RU_VERB.search(text, max(0, lo - 40), lo) is None
    if secret_like(value, strong=strong) and (not bare or _classes(value) >= 3):
        yield span[0], span[1], kind


# --- Korean ----------------------------------------------------------------------------------

_KO_PARTICLE: Final = re.compile(r"(?:은|는|이|가|을|를|도|:|=|—)?[ \t]*+(?::[ \t]*+)?")
_KO_TAILS: Final = {"인증": ("정보", " 정보"), "연결": ("문자열", " 문자열")}
_KO_KEY_QUALIFIERS: Final = ("api", "API", "시크릿", "액세스", "비밀", "접근", "개인")


def _korean(text: str, start: int, name: str) -> Iterator[tuple[int, int, str]]:
    if start > 0 and "\uac00" <= text[start - 1] <= "\ud7a3":
        return  # inside a longer word: 패키지 holds 키
    hi = start + len(name)
    tails = _KO_TAILS.get(name)
    if tails is not None:
        tail = next((t for t in tails if text.startswith(t, hi)), None)
        if tail is None:
            return
        hi += len(tail)
    kind, strong = _KO_KINDS[name], True
    if name == "키":
        before = text[max(0, start - 8) : start].split()
        strong = bool(before) and before[-1].endswith(_KO_KEY_QUALIFIERS)
    m = _KO_PARTICLE.match(text, hi)
    assert m is not None  # every part is optional
    if m.end() == hi and hi < len(text) and not text[hi].isspace():
        return  # 키보드: a longer word
    span = _value_at(text, m.end(), spaces=False)
    if span is not None and secret_like(text[span[0] : span[1]], strong=strong):
        yield span[0], span[1], kind


# --- the rule --------------------------------------------------------------------------------


def prose_secrets(text: str, first: re.Match[str] | None = None) -> Iterator[tuple[int, int, str]]:
    """``(start, end, kind)`` of each value a secret's name introduces in a sentence of
    ``text`` (``first``: :data:`SCREEN`'s first hit, when the caller searched)."""
    m = first or SCREEN.search(text)
    covered = 0
    while m is not None:
        char = m.group()
        if m.start() >= covered:
            if char.isascii():
                found = _english(text, m.start())
            elif len(char) == 1 and char.lower() in "лк":
                found = _russian(text, m.start())
            else:
                found = _korean(text, m.start(), char)
            for start, end, kind in found:
                covered = end
                yield start, end, kind
        m = SCREEN.search(text, max(m.end(), covered))
