"""Which names hold secrets: the judge behind ``name = value`` redaction in every syntax.

:func:`assignment_kind` reads the words of a name (``DB_PASSWORD``, ``apiToken``,
``client-secret``) and says which kind of secret it holds, and whether the name alone is enough
(``password``) or the value must also look random (a bare ``key``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final


def wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SUFFIX_WORDS: Final = frozenset({"base", "value", "b64"})
_NOT_SECRET_WORDS: Final = wordset(
    "max min num count limit limits length len size type types url uri endpoint path file dir "
    "name names id ids expiry expires expiration ttl timeout field label prompt placeholder hint "
    "policy required enabled regex pattern header param env var ref arn budget usage per total "
    "mode kind format store manager provider version reset rotation lifetime rate cost price "
    "window next page continuation sync cursor input output completion eos bos pad unk sep cls "
    "mask special start end stop hash salt length strength validation validator forgot confirm "
    "primary foreign sort partition cache lookup map dict object idempotency i18n translation "
    "public pub ssh_public lock"
)
_KEY_QUALIFIERS: Final = wordset(
    "api access secret private client auth signing sign encryption encrypt master session license "
    "licence account app application service admin write read deploy root sas storage shared "
    "subscription consumer cloud developer dev integration webhook bot user project org personal "
    "hmac jwt crypto cipher aes"
)
_PASSWORD_WORDS: Final = wordset("password passwd passphrase pwd pass pw")
_COMPOUND_KEYS: Final = ("apikey", "accesskey", "secretkey", "privatekey", "signingkey", "authkey")
_COMPOUND_TOKENS: Final = ("token", "secret", "password", "passwd", "passphrase")


@lru_cache(maxsize=4096)
def assignment_kind(name: str) -> tuple[str, bool] | None:
    """``(kind, strong)`` when the name says it holds a secret; weak names need a random value."""
    words = [w.lower() for w in WORDS.findall(name)]
    while len(words) > 1 and words[-1] in _SUFFIX_WORDS:
        words.pop()
    if not words or any(w in _NOT_SECRET_WORDS for w in words):
        return None
    last, before = words[-1], words[:-1]
    kind: tuple[str, bool] | None = None
    if "aws" in words and ("secret" in words or last.endswith("secretaccesskey")):
        kind = "aws_secret_access_key", True
    elif last in _PASSWORD_WORDS or last.endswith(("password", "passwd", "passphrase")):
        kind = "password", True
    elif last in ("credentials", "credential"):
        kind = "credentials", False
    elif last.endswith(_COMPOUND_TOKENS):
        kind = ("secret" if last.endswith("secret") else "token"), True
    elif last == "key":
        kind = "api_key", bool(before) and before[-1] in _KEY_QUALIFIERS
    elif last.endswith(_COMPOUND_KEYS):
        kind = "api_key", True
    return kind
