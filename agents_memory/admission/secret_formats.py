"""The secret-format catalogue behind :mod:`agents_memory.admission.redact`.

Each rule: a regex for one provider's format (or a family), the kind name(s) it reports, the
trigger substrings that make the cheap screen enable it, and an optional check on the match.
Every repetition is bounded so that no input backtracks catastrophically.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from agents_memory.admission.secret_formats_catalogue import FORMATS as _CATALOGUE_FORMATS

PLACEHOLDER_PREFIX: Final = "[redacted:"


def _split(words: str) -> list[str]:
    return words.split()


_PLACEHOLDER_WORDS: Final = frozenset(
    _split(
        "changeme change_me change-me password passwd secret token key apikey api_key bearer basic "
        "xxx todo tbd fixme redacted example placeholder dummy fake sample test none null nil "
        "undefined true false empty required optional string str hidden masked omitted | > - ~ "
        "... *** <redacted>"
    )
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


def is_placeholder(value: str) -> bool:
    v = value.strip()
    low = v.lower()
    if not v or PLACEHOLDER_PREFIX in v or low in _PLACEHOLDER_WORDS:
        return True
    if _PLACEHOLDER_PARTS.search(low):
        return True
    return _PLACEHOLDER_RE.fullmatch(v) is not None


Check = Callable[[re.Match[str]], bool]


@dataclass(frozen=True, slots=True)
class Rule:
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
) -> Rule:
    """``kinds``: ``"kind"`` or ``"prefix=kind … default"``; ``triggers``: ``|``-separated."""
    table = [k.split("=") if "=" in k else ("", k) for k in kinds.split()]
    for shorthand, expansion in _SHORTHANDS.items():
        pattern = pattern.replace(shorthand, expansion)
    return Rule(
        re.compile(pattern, flags),
        tuple((prefix, kind) for prefix, kind in table),
        tuple(t.replace("<pipe>", "|") for t in triggers.split("|")),
        check,
        bounded,
        key_group,
    )


def looks_random(value: str) -> bool:
    """Two of lower/upper/digit and a run of 10+ alphanumerics: keys, not kebab-case words."""
    classes = (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
    )
    if classes < 2 or _ALNUM10.search(value) is None:
        return False
    return classes == 3 or _CAMEL_WORDS.fullmatch(value) is None  # UserProfileHeader: a name


_ALNUM10: Final = re.compile(r"[A-Za-z0-9]{10}")
_CAMEL_WORDS: Final = re.compile(r"[a-z]{0,20}+(?:[A-Z][a-z]{2,20}+){1,8}+")


def _random_body(m: re.Match[str]) -> bool:
    return looks_random(m.group("body") if "body" in m.re.groupindex else m.group())


def _pem_complete(m: re.Match[str]) -> bool:
    body = re.sub(r"\s|\\[rn]", "", m.group("body"))
    return m.group("end") is not None or len(body) >= 64


def _value_ok(m: re.Match[str]) -> bool:
    return not is_placeholder(m.group("v"))


def _curl_user(m: re.Match[str]) -> bool:
    user, value = m.group("user"), m.group("v")
    return not (user.isdigit() and value.isdigit()) and not is_placeholder(value)


def _header_value(m: re.Match[str]) -> bool:
    value = m.group("v")
    if is_placeholder(value):
        return False
    return m.group("scheme") is not None or looks_random(value) or len(value) >= 20


def _bearer_value(m: re.Match[str]) -> bool:
    return looks_random(m.group("v")) and not is_placeholder(m.group("v"))


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
_GL_PREFIXES: Final = (
    "glpat-|glft-|gldt-|glrt-|glptt-|glcbt-|glimt-|glagent-|gloas-|glffct-|glsoat-"
)

# Shorthands in the patterns below: <w> is a base64url character, <a> alphanumeric, <h> hex.
_SHORTHANDS: Final = {"<w>": "[A-Za-z0-9_-]", "<a>": "[A-Za-z0-9]", "<h>": "[a-f0-9]"}
# Provider formats that stand alone: (kinds, pattern, triggers); the whole token is replaced.
_TOKENS: Final = (
    ("google_api_key", r"AIza<w>{35}", "AIz"),
    ("google_oauth_client_secret", r"GOCSPX-<w>{28}", "GOCSPX-"),
    ("google_oauth_token", r"ya29\.<w>{20,}+", "ya29."),
    ("google_refresh_token", r"1//0<w>{30,}+", "1//0"),
    (
        "aws_access_key_id",
        r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}",
        "AKIA|ASIA|ABIA|ACCA|A3",
    ),
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
        r"[sr]k_(?:live|test|prod)_<w>{10,247}+",
        "sk_live_|sk_test_|rk_live_|rk_test_|sk_prod_|rk_prod_",
    ),
    ("stripe_webhook_secret", r"whsec_[A-Za-z0-9+/=]{24,}+", "whsec_"),
    ("npm_token", r"npm_<a>{36}", "npm_"),
    ("pypi_token", r"pypi-Ag<w>{50,}+", "pypi-"),
    ("twilio_api_key", r"SK[0-9a-fA-F]{32}", "SK"),
    ("sendgrid_api_key", r"SG\.<w>{22}\.<w>{43}", "SG."),
    ("mailgun_api_key", r"key-[0-9a-z]{32}", "key-"),
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
    ("vault_token", r"hv[sb]\.[A-Za-z0-9_+/=-]{24,}+", "hvs.|hvb.|b.AAAAA"),
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
    ("jwt", r"eyJ<w>{10,}+\.(?:<w>{10,}+\.<w>*+|eyJ<w>{10,}+)={0,2}", "eyJ"),
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
        # "Key=" first: re skips to it in C (only the value is replaced)
        r"Key=(?:(?<=AccountKey=)|(?<=SharedAccessKey=))(?P<v>[A-Za-z0-9+/]{40,}+={0,2})",
        "\0assign",
    ),
    ("azure_sas_signature", r"[?&;]sig=(?P<v>[A-Za-z0-9%+/=_-]{30,}+)", "sig="),
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
    (
        "webhook_url",
        r"(?:hooks\.zapier\.com/hooks/catch|\.tines\.com/webhook|\.webhook\.office\.com/webhookb2"
        r"|\.logic\.azure\.com(?::443)?/workflows)/(?P<v>[^\s\"'<>`]{16,512}+)",
        "hooks.zapier.com/|.tines.com/|.webhook.office.com/|.logic.azure.com/workflows/"
        "|.logic.azure.com:443/workflows/",
    ),
)

# In priority order: earlier rules win ties and partial overlaps.
RULES: Final[tuple[Rule, ...]] = (
    _rule(
        "pem_private_key",
        _PEM,
        "KEY-|BLOCK-",  # in both labels; "-----" would make the screen descend every run of dashes
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
    *(
        _rule(
            kind,
            pattern,
            triggers,
            check=_random_body if random else None,
            bounded="(?P<v>" not in pattern,
        )
        for kind, pattern, triggers, random in _CATALOGUE_FORMATS
    ),
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
