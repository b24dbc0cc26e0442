"""Secret redaction: replace API keys, tokens, passwords and private keys before anything is stored.

:func:`redact` returns the text with each secret *value* replaced by ``[redacted:<kind>]`` (the
``OPENAI_API_KEY=`` / ``Authorization: Bearer`` / ``password:`` around it stays readable) and the
kinds it found with their counts, never the values. :func:`scan` reports the kinds only (``doctor
--secrets``). Both are pure and safe to call from several threads.

It runs on every captured turn, so it is built in two stages:

1. A **screen**: one regex over the text *reversed*. Almost every trigger (``sk-``, ``ghp_``,
   ``password=`` …) *ends* in a separator (``-``, ``_``, ``.``, ``=``, ``:``), so reversed they
   start with one of a few characters, and ``re`` skips to those in C and tries only the branches
   for that character (the triggers are factored into a trie). A turn without a hit comes back
   unchanged after a few microseconds.
2. **Rules** enabled by the hits run their own regex over the original text. Every repetition is
   bounded or possessive, so no input backtracks catastrophically. Overlapping finds are resolved
   by priority (provider formats before generic ones); a later find that strictly contains an
   earlier one replaces it, so ``password="sk-… extra"`` is redacted whole.

``key = value`` assignments are found from the screen's hit positions, then judged by the name (its
words must say password/secret/token/key) and the value (variable references, placeholders and
code such as ``request.form["password"]`` are left alone).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

PLACEHOLDER_PREFIX: Final = "[redacted:"

_TOKEN_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_NAME_CHARS: Final = _TOKEN_CHARS | {"."}


@dataclass(frozen=True, slots=True)
class RedactionResult:
    """The redacted text and ``(kind, count)`` pairs, sorted by kind; never the secret values."""

    text: str
    counts: tuple[tuple[str, int], ...] = ()

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(kind for kind, _ in self.counts)


Check = Callable[[re.Match[str]], bool]


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: re.Pattern[str]
    kinds: tuple[tuple[str, str], ...]  # (prefix, kind): the first prefix that starts the key wins
    triggers: tuple[str, ...]  # substrings of the original text that enable the rule
    check: Check | None = None
    bounded: bool = True  # the match must not touch other token characters
    key_group: str | None = None  # match the kind prefixes against this group, lower-cased

    def kind(self, m: re.Match[str]) -> str:
        key = (m.group(self.key_group) or "").lower() if self.key_group else m.group()
        return next(kind for prefix, kind in self.kinds if key.startswith(prefix))


def _rule(
    kinds: str,
    pattern: str,
    triggers: str,
    *,
    check: Check | None = None,
    flags: int = 0,
    bounded: bool = True,
    key_group: str | None = None,
) -> _Rule:
    """``kinds``: ``"kind"`` or ``"prefix=kind … default"``; ``triggers``: ``|``-separated."""
    table = [k.split("=") if "=" in k else ("", k) for k in kinds.split()]
    for shorthand, expansion in _SHORTHANDS.items():
        pattern = pattern.replace(shorthand, expansion)
    return _Rule(
        re.compile(pattern, flags),
        tuple((prefix, kind) for prefix, kind in table),
        tuple(triggers.split("|")),
        check,
        bounded,
        key_group,
    )


def _looks_random(value: str) -> bool:
    """Two of lower/upper/digit and a run of 10+ alphanumerics: keys, not kebab-case words."""
    classes = (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
    )
    return classes >= 2 and _ALNUM10.search(value) is not None


_ALNUM10: Final = re.compile(r"[A-Za-z0-9]{10}")


def _random_body(m: re.Match[str]) -> bool:
    return _looks_random(m.group("body") if "body" in m.re.groupindex else m.group())


def _pem_complete(m: re.Match[str]) -> bool:
    body = re.sub(r"\s|\\[rn]", "", m.group("body"))
    return m.group("end") is not None or len(body) >= 64


def _value_ok(m: re.Match[str]) -> bool:
    return not _is_placeholder(m.group("v"))


def _curl_user(m: re.Match[str]) -> bool:
    user, value = m.group("user"), m.group("v")
    return not (user.isdigit() and value.isdigit()) and not _is_placeholder(value)


def _header_value(m: re.Match[str]) -> bool:
    value = m.group("v")
    if _is_placeholder(value):
        return False
    return m.group("scheme") is not None or _looks_random(value) or len(value) >= 20


def _bearer_value(m: re.Match[str]) -> bool:
    return _looks_random(m.group("v")) and not _is_placeholder(m.group("v"))


_B64: Final = r"[A-Za-z0-9+/=]"
_PEM_LABEL: Final = r"-----{} (?:[A-Z0-9]{{1,12}} ){{0,2}}PRIVATE KEY(?: BLOCK)?-----"
_PEM_SEP: Final = r"(?:\r?\n|\\r\\n|\\n|[ \t])"
_PEM: Final = (
    _PEM_LABEL.format("BEGIN")
    + rf"(?P<body>(?:{_PEM_SEP}++(?:{_B64}++|(?:Proc-Type|DEK-Info|Comment|Version|Hash|Charset):"
    + r"[^\r\n\\]*+))*+)"
    + rf"(?P<end>{_PEM_SEP}*+{_PEM_LABEL.format('END')})?"
)
_SK_KINDS: Final = (
    "sk-ant-api=anthropic_api_key sk-ant-admin=anthropic_admin_key sk-ant-=anthropic_oauth_token "
    "sk-or-=openrouter_api_key sk-proj-=openai_project_key sk-svcacct-=openai_service_account_key "
    "sk-admin-=openai_admin_key openai_api_key"
)
_GH_KINDS: Final = (
    "ghp_=github_pat gho_=github_oauth_token ghu_=github_user_token ghs_=github_app_token "
    "github_refresh_token"
)
_GL_PREFIXES: Final = "glpat-|gldt-|glrt-|glptt-|glcbt-|glimt-|glagent-|gloas-|glffct-|glsoat-"

# Shorthands in the patterns below: <w> is a base64url character, <a> alphanumeric, <h> hex.
_SHORTHANDS: Final = {"<w>": "[A-Za-z0-9_-]", "<a>": "[A-Za-z0-9]", "<h>": "[a-f0-9]"}
# Provider formats that stand alone: (kinds, pattern, triggers); the whole token is replaced.
_TOKENS: Final = (
    ("google_api_key", r"AIza<w>{35}", "AIzaSy"),
    ("google_oauth_client_secret", r"GOCSPX-<w>{28}", "GOCSPX-"),
    ("google_oauth_token", r"ya29\.<w>{20,}+", "ya29."),
    ("google_refresh_token", r"1//0<w>{30,}+", "1//0"),
    ("aws_access_key_id", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}", "AKIA|ASIA|ABIA|ACCA"),
    (_GH_KINDS, r"gh[pousr]_<a>{36,251}+", "ghp_|gho_|ghu_|ghs_|ghr_"),
    ("github_fine_grained_pat", r"github_pat_[A-Za-z0-9_]{60,255}+", "github_pat_"),
    (
        "glpat-=gitlab_pat gitlab_token",
        rf"(?:{_GL_PREFIXES}|GR1348941)<w>{{20,}}+(?:\.<w>++)*+",
        f"{_GL_PREFIXES}|GR1348941",
    ),
    ("slack_app_token", r"xapp-\d-[A-Z0-9]{6,}+-\d{6,}+-<a>{20,}+", "xapp-"),
    (
        "rk_=stripe_restricted_key stripe_secret_key",
        r"[sr]k_(?:live|test)_<a>{10,247}+",
        "sk_live_|sk_test_|rk_live_|rk_test_",
    ),
    ("stripe_webhook_secret", r"whsec_[A-Za-z0-9+/=]{24,}+", "whsec_"),
    ("npm_token", r"npm_<a>{36}", "npm_"),
    ("pypi_token", r"pypi-Ag<w>{50,}+", "pypi-"),
    ("twilio_api_key", r"SK[0-9a-fA-F]{32}", "SK"),
    ("sendgrid_api_key", r"SG\.<w>{22}\.<w>{43}", "SG."),
    ("mailgun_api_key", r"key-[0-9a-f]{32}", "key-"),
    ("digitalocean_token", r"do[opr]_v1_<h>{64}", "_v1_"),
    ("doppler_token", r"dp\.(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?<a>{40,44}", "dp."),
    ("databricks_token", r"dapi[0-9a-f]{32}(?:-\d)?", "\0dapi"),
    ("heroku_api_key", r"HRKU-<w>{40,}+", "HRKU-"),
    (
        "shpss_=shopify_shared_secret shopify_access_token",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        "shpat_|shpca_|shppa_|shpss_",
    ),
    ("discord_bot_token", r"[MNO]<w>{23,27}+\.<w>{6}\.<w>{27,38}+", "\0discord"),
    ("groq_api_key", r"gsk_<a>{48,52}+", "gsk_"),
    ("replicate_api_token", r"r8_<a>{37}", "r8_"),
    ("perplexity_api_key", r"pplx-<a>{40,}+", "pplx-"),
    ("together_api_key", r"tgp_v1_<w>{40,}+", "_v1_"),
    ("tavily_api_key", r"tvly-(?:dev-|prod-)?<a>{32}", "tvly-"),
    ("langsmith_api_key", r"lsv2_(?:pt|sk)_<h>{32}_<h>{10}", "lsv2_"),
    ("linear_api_key", r"lin_api_<a>{40}", "lin_api_"),
    ("notion_token", r"ntn_[0-9]{11}<a>{35}|secret_<a>{43}", "ntn_|secret_"),
    ("atlassian_api_token", r"ATATT3[A-Za-z0-9_=-]{60,}+", "ATATT3"),
    ("supabase_key", r"sbp_<h>{40}|sb_secret_<w>{20,}+", "sbp_|sb_secret_"),
    ("postman_api_key", r"PMAK-<h>{24}-<h>{34}", "PMAK-"),
    ("figma_token", r"figd_<w>{40,}+", "figd_"),
    ("vault_token", r"hv[sb]\.<w>{24,}+", "hvs.|hvb."),
    ("terraform_token", r"<a>{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}+", ".atlasv1."),
    ("pulumi_token", r"pul-<h>{40}", "pul-"),
    ("newrelic_api_key", r"NRAK-[A-Z0-9]{27}", "NRAK-"),
    (
        "age_secret_key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        "AGE-SECRET-KEY-",
    ),
    (
        "sq0csp-=square_oauth_secret square_access_token",
        r"sq0(?:atp|csp)-<w>{22,43}+",
        "sq0atp-|sq0csp-",
    ),
    ("mapbox_secret_token", r"sk\.eyJ<w>{20,}+\.<w>{20,}+", "sk.eyJ"),
    ("onepassword_service_token", r"ops_eyJ[A-Za-z0-9+/_=-]{100,}+", "ops_eyJ"),
    ("jwt", r"eyJ<w>{10,}+\.<w>{10,}+\.<w>*+", "eyJ"),
)
# Formats found in context (a URL, a header, a connection string): only group "v" is replaced.
_IN_CONTEXT: Final = (
    (
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]{20,}+)",
        "hooks.slack.com/",
    ),
    (
        "azure_storage_key",
        r"(?:Account|SharedAccess)Key=(?P<v>[A-Za-z0-9+/]{40,}+={0,2})",
        "\0assign",
    ),
    ("azure_sas_signature", r"[?&;]sig=(?P<v>[A-Za-z0-9%+/=]{30,}+)", "sig="),
    (
        "azure_client_secret",
        r"(?<![A-Za-z0-9_~.])(?P<v>[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}+)(?![A-Za-z0-9_~.-])",
        "Q~",
    ),
    (
        "telegram_bot_token",
        r"(?:(?<=/bot)|(?<!<w>))(?P<v>[0-9]{5,16}+:AA<w>{32,34}+)(?![\w-])",
        ":AA",
    ),
    (
        "discord_webhook",
        r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/(?P<v><w>{60,68}+)",
        "/api/webhooks/",
    ),
)

# In priority order: earlier rules win ties and partial overlaps.
_RULES: Final[tuple[_Rule, ...]] = (
    _rule(
        "pem_private_key",
        _PEM,
        "PRIVATE KEY-----|PRIVATE KEY BLOCK-----",
        check=_pem_complete,
        bounded=False,
    ),
    _rule(
        _SK_KINDS,
        r"sk-(?:ant-[a-z]{3,5}\d{2}-|or-v1-|proj-|svcacct-|admin-)?(?P<body>[A-Za-z0-9_-]{20,}+)",
        "sk-",
        check=lambda m: len(m.group()) >= 35 and _random_body(m),
    ),
    _rule("xai_api_key", r"xai-(?P<body>[A-Za-z0-9]{40,}+)", "xai-", check=_random_body),
    _rule(
        "xoxb-=slack_bot_token xoxp-=slack_user_token slack_token",
        r"xox[abeoprs]-[0-9A-Za-z-]{10,}+",
        "xoxb-|xoxp-|xoxa-|xoxr-|xoxs-|xoxe-|xoxo-",
        check=lambda m: any(c.isdigit() for c in m.group()),
    ),
    _rule(
        "api_org_=huggingface_org_token huggingface_token",
        r"(?:hf|api_org)_[A-Za-z0-9]{30,40}+",
        "hf_|api_org_",
        check=_random_body,
    ),
    _rule("fireworks_api_key", r"fw_[A-Za-z0-9]{20,}+", "fw_", check=_random_body),
    *(_rule(kinds, pattern, triggers) for kinds, pattern, triggers in _TOKENS),
    *(_rule(kinds, pattern, triggers, bounded=False) for kinds, pattern, triggers in _IN_CONTEXT),
    _rule(
        "bearer=bearer_token basic=basic_auth authorization_header",
        r"authorization[\"']?[ \t]*+[:=][ \t]*+[\"']?(?:(?P<scheme>bearer|basic|token|digest"
        r"|apikey|api-key|sso-key|ssws|key)[ \t]++)?(?P<v>[A-Za-z0-9._~+/=:-]{6,}+)",
        "\0auth",
        check=_header_value,
        flags=re.IGNORECASE,
        bounded=False,
        key_group="scheme",
    ),
    _rule(
        "bearer_token",
        r"\bbearer[ \t]++(?P<v>[A-Za-z0-9._~+/=-]{16,}+)",
        "\0auth",
        check=_bearer_value,
        flags=re.IGNORECASE,
        bounded=False,
    ),
    _rule(
        "basic_auth",
        r"(?:^|[ \t])(?:-u|--user)[ \t]++[\"']?(?P<user>[\w.@-]{1,64}+):(?P<v>"
        r"(?:[^\s'\"\\]|\\(?![nrt\"'\\])){1,128}+)",
        "\0curl",
        check=_curl_user,
        flags=re.MULTILINE,
        bounded=False,
    ),
    _rule(
        "url_password",
        r"://[^\s:/?#@'\"<>\[\]]{0,128}+:(?P<v>[^\s/?@'\"<>]{1,256}+)@(?=[^\s@/?#])",
        "://",
        check=_value_ok,
        bounded=False,
    ),
)

# --- the screen ---------------------------------------------------------------------------------

# The last word of a name that may hold a secret; reversed, each follows its separator.
_ASSIGN_WORDS: Final = (
    "password passwd passphrase pwd pass pw secret token key credentials credential authorization"
)
_ASSIGN_VARIANTS: Final = sorted(
    {v for w in _ASSIGN_WORDS.split() for v in (w, w.upper(), w.capitalize())},
    key=len,
    reverse=True,
)
# Case variants as plain literals: re skips non-matching literal branches much faster than (?i).
_ASSIGN_TAIL: Final = (
    r"[ \t]{0,4}+[\"'`\\]{0,3}+(?:(?:esab|eulav|46b|ESAB|EULAV|46B)_)?(?:"
    + "|".join(v[::-1] for v in _ASSIGN_VARIANTS)
    + ")"
)
# Extra alternatives by first character: name=, name:=, name=>, name:, and a discord-ish ".x.y".
_SCREEN_EXTRAS: Final = {
    "=": (f":?{_ASSIGN_TAIL}",),
    ">": (f"={_ASSIGN_TAIL}",),
    ":": (_ASSIGN_TAIL,),
    ".": (r"[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{20}",),
}


def _trie_regex(words: list[str], extras: Mapping[str, tuple[str, ...]]) -> re.Pattern[str]:
    """One alternation of ``words`` factored by prefix, plus ``extras`` after their first char.

    Every top-level alternative starts with a literal character, so ``re`` skips in C to the
    positions holding one of those characters, and tries only the branches for that character.
    """
    trie: dict[str, dict[str, Any]] = {char: {} for char in extras}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, Any], more: tuple[str, ...] = ()) -> str:
        alternatives = [re.escape(c) + build(child) for c, child in sorted(node.items()) if c]
        alternatives += more
        if not alternatives:
            return ""
        body = "(?:" + "|".join(alternatives) + ")" if len(alternatives) > 1 else alternatives[0]
        return f"(?:{body})?" if "" in node else body

    top = (re.escape(c) + build(child, extras.get(c, ())) for c, child in sorted(trie.items()))
    return re.compile("|".join(top))


_Table = dict[str, frozenset[int]]


def _build_screen() -> tuple[re.Pattern[str], _Table, _Table]:
    by_trigger: dict[str, set[int]] = {}
    for index, rule in enumerate(_RULES):
        for trigger in rule.triggers:
            by_trigger.setdefault(trigger, set()).add(index)
    literals = [t for t in by_trigger if not t.startswith("\0")]
    # A hit on "gsk_" must also run the rules of "sk_": union every trigger contained in it.
    table = {
        t[::-1]: frozenset(i for u, rules in by_trigger.items() if u in t for i in rules)
        for t in literals
    }
    special = {t[1:]: frozenset(rules) for t, rules in by_trigger.items() if t.startswith("\0")}
    return _trie_regex([t[::-1] for t in literals], _SCREEN_EXTRAS), table, special


_SCREEN, _TRIGGER_RULES, _SPECIAL_RULES = _build_screen()
_ASSIGN_RULES: Final = _SPECIAL_RULES["assign"]
_AUTH_RULES: Final = _SPECIAL_RULES["auth"]
_DISCORD_RULES: Final = _SPECIAL_RULES["discord"]
_CURL_RULES: Final = _SPECIAL_RULES["curl"]
_DAPI_RULES: Final = _SPECIAL_RULES["dapi"]


# --- assignments (name = value) ---------------------------------------------------------------


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SUFFIX_WORDS: Final = frozenset({"base", "value", "b64"})
_NOT_SECRET_WORDS: Final = _wordset(
    "max min num count limit limits length len size type types url uri endpoint path file dir "
    "name names id ids expiry expires expiration ttl timeout field label prompt placeholder hint "
    "policy required enabled regex pattern header param env var ref arn budget usage per total "
    "mode kind format store manager provider version reset rotation lifetime rate cost price "
    "window next page continuation sync cursor input output completion eos bos pad unk sep cls "
    "mask special start end stop hash salt length strength validation validator forgot confirm "
    "primary foreign sort partition cache lookup map dict object idempotency i18n translation "
    "public pub ssh_public"
)
_KEY_QUALIFIERS: Final = _wordset(
    "api access secret private client auth signing sign encryption encrypt master session license "
    "licence account app application service admin write read deploy root sas storage shared "
    "subscription consumer cloud developer dev integration webhook bot user project org personal "
    "hmac jwt crypto cipher aes"
)
_PASSWORD_WORDS: Final = _wordset("password passwd passphrase pwd pass pw")
_COMPOUND_KEYS: Final = ("apikey", "accesskey", "secretkey", "privatekey", "signingkey", "authkey")
_COMPOUND_TOKENS: Final = ("token", "secret", "password", "passwd", "passphrase")


@lru_cache(maxsize=4096)
def _assignment_kind(name: str) -> tuple[str, bool] | None:
    """``(kind, strong)`` when the name says it holds a secret; weak names need a random value."""
    words = [w.lower() for w in _WORDS.findall(name)]
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
_PLACEHOLDER_WORDS: Final = _wordset(
    "changeme change_me change-me password passwd secret token key apikey api_key bearer basic "
    "xxx todo tbd fixme redacted example placeholder dummy fake sample test none null nil "
    "undefined true false empty required optional string str hidden masked omitted | > - ~ "
    "... *** <redacted>"
)
_PLACEHOLDER_RE: Final = re.compile(
    r"[xX]+|\*+|\.+|-+|_+|#+|•+|0+|\?+|<[^<>\n]*>|\$\{?[A-Za-z_][\w.]*\}?|\$\(.*\)|\{\{.*\}\}"
    r"|%[A-Za-z_]\w*%|\{[^{}]*\}"
    r"|(?i:my|example|dummy|fake|sample|placeholder|insert|replace|enter|put)[_-].*"
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:KEY|TOKEN|SECRET|PASSWORD|HERE)"
)
_PLACEHOLDER_PARTS: Final = re.compile(
    r"\.\.\.|…|your|[_-]here|process\.env|os\.environ|getenv\(|env[(\[]|!ref|\$\{\{"
)


def _is_placeholder(value: str) -> bool:
    v = value.strip()
    low = v.lower()
    if not v or PLACEHOLDER_PREFIX in v or low in _PLACEHOLDER_WORDS:
        return True
    if _PLACEHOLDER_PARTS.search(low):
        return True
    return _PLACEHOLDER_RE.fullmatch(v) is not None


def _is_code(value: str) -> bool:
    return any(c in value for c in "([{") or _DOTTED.fullmatch(value) is not None


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
        if text[max(0, start - 2) : start] == "${":
            continue
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
            trimmed = value.rstrip(".,;)]}")
            value_end -= len(value) - len(trimmed)
            value = trimmed
        sep = text[sep_end - 1]
        quoted = group != "uv"
        if _judge_value(
            text, value, sep=sep, quoted=quoted, name=name, strong=strong, end=value_end
        ):
            covered = value_end
            yield value_start, value_end, kind


# --- the engine -------------------------------------------------------------------------------


def _find(text: str) -> list[tuple[int, int, str]]:
    """Non-overlapping ``(start, end, kind)`` spans of secret values, sorted by start."""
    n = len(text)
    enabled: set[int] = set()
    assign_hits: list[tuple[int, int]] = []
    for m in _SCREEN.finditer(text[::-1]):
        hit = m.group()
        rules = _TRIGGER_RULES.get(hit)
        if rules is not None:
            enabled |= rules
        elif hit[0] == ".":
            enabled |= _DISCORD_RULES
        elif hit[-13:].lower() == "noitazirohtua":  # an Authorization header
            enabled |= _AUTH_RULES
        else:
            assign_hits.append((n - m.end(), n - m.start()))
            enabled |= _ASSIGN_RULES
    flags = "--" in text
    if " -u " in text or (flags and "--user" in text):
        enabled |= _CURL_RULES
    if "dapi" in text:
        enabled |= _DAPI_RULES
    if not enabled and not flags:
        return []
    found: list[tuple[int, int, str]] = []
    for index in sorted(enabled):
        found.extend(_apply(_RULES[index], text))
    found.extend(_assignments(text, assign_hits))
    if flags:
        found.extend(_flags(text))
    if PLACEHOLDER_PREFIX in text:  # what was redacted before stays as it is
        found = _outside_placeholders(text, found)
    return _resolve(found)


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


_FLAG: Final = re.compile(
    r"--(?<![\w-]--)(?P<name>password|passwd|pass|token|secret|api-key|api_key|apikey"
    r"|[a-z]+-token|[a-z]+-secret|[a-z]+-password)(?:=|[ \t]++)"
    r"(?:\"(?P<dq>[^\"\n]{1,1024}+)\"|'(?P<sq>[^'\n]{1,1024}+)'|(?P<uv>(?:[^\s\"'`;&|<>\\]|\\(?![nrt\"'\\])){1,1024}+))"
)


def _flags(text: str) -> Iterator[tuple[int, int, str]]:
    for m in _FLAG.finditer(text):
        group = next(g for g in ("dq", "sq", "uv") if m.group(g) is not None)
        value = m.group(group)
        judged = _assignment_kind(m.group("name"))
        if judged is None or _is_placeholder(value) or value.startswith("-"):
            continue
        if group == "uv" and _is_code(value):
            continue
        yield (*m.span(group), judged[0])


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
    spans = _find(text)
    if not spans:
        return RedactionResult(text)  # the hot path: no allocation beyond the result
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
