"""Redaction: every catalogue format is caught in realistic text, ordinary text is left alone,
redaction is idempotent, and no input makes it backtrack catastrophically."""

from __future__ import annotations

import base64
import random
import string
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents_memory.admission.redact import KINDS, PLACEHOLDER_PREFIX, redact, scan
from tests.admission.test_redact_catalogue import FORMAT_SAMPLES

AN = string.ascii_letters + string.digits
AN_ = AN + "_-"
HEX = "0123456789abcdef"
UP = string.ascii_uppercase + string.digits
DIG = string.digits
B64 = AN + "+/"
LETTERS = string.ascii_letters
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"

Part = str | tuple[str, int]

# kind -> (context with "{}" where the secret goes, the secret's parts: literal or (charset, n))
CATALOGUE: dict[str, tuple[str, tuple[Part, ...]]] = {
    "openai_api_key": ("OPENAI_API_KEY={}", ("sk-", (AN, 48))),
    "openai_project_key": ("export OPENAI_API_KEY={}", ("sk-proj-", (AN_, 156))),
    "openai_service_account_key": ("key: {}", ("sk-svcacct-", (AN_, 120))),
    "openai_admin_key": ('"{}"', ("sk-admin-", (AN_, 120))),
    "anthropic_api_key": ("ANTHROPIC_API_KEY={}", ("sk-ant-api03-", (AN_, 93), "AA")),
    "anthropic_admin_key": ("use {} here", ("sk-ant-admin01-", (AN_, 93), "AA")),
    "anthropic_oauth_token": ("token {}", ("sk-ant-oat01-", (AN_, 93), "AA")),
    "openrouter_api_key": ("{}", ("sk-or-v1-", (HEX, 64))),
    "xai_api_key": ("XAI_API_KEY={}", ("xai-", (AN, 80))),
    "google_api_key": ("?key={}&q=1", ("AIzaSy", (AN_, 33))),
    "google_oauth_client_secret": ('"client_secret":"{}"', ("GOCSPX-", (AN_, 28))),
    "google_oauth_token": ("access {}", ("ya29.", (AN_, 150))),
    "google_refresh_token": ("refresh={}", ("1//0", (AN_, 100))),
    "aws_access_key_id": ("aws_access_key_id = {}", ("AKIA", (UP, 16))),
    "aws_secret_access_key": ("aws_secret_access_key = {}", ((B64, 40),)),
    "github_pat": ("git clone https://{}@github.com/o/r", ("ghp_", (AN, 36))),
    "github_oauth_token": ("{}", ("gho_", (AN, 36))),
    "github_user_token": ("{}", ("ghu_", (AN, 36))),
    "github_app_token": ("{}", ("ghs_", (AN, 36))),
    "github_refresh_token": ("{}", ("ghr_", (AN, 76))),
    "github_fine_grained_pat": ("GH={}", ("github_pat_", (AN, 22), "_", (AN, 59))),
    "gitlab_pat": ("PRIVATE-TOKEN: {}", ("glpat-", (AN_, 20))),
    "gitlab_token": ("deploy {}", ("gldt-", (AN_, 20))),
    "slack_bot_token": ("{}", ("xoxb-", (DIG, 12), "-", (DIG, 13), "-", (AN, 24))),
    "slack_user_token": (
        "{}",
        ("xoxp-", (DIG, 12), "-", (DIG, 12), "-", (DIG, 13), "-", (HEX, 32)),
    ),
    "slack_token": ("{}", ("xoxe-1-", (DIG, 12), "-", (AN, 40))),
    "slack_app_token": ("{}", ("xapp-1-A", (UP, 10), "-", (DIG, 13), "-", (HEX, 64))),
    "slack_webhook": (
        "curl -X POST https://hooks.slack.com/services/{}",
        ("T", (UP, 10), "/B", (UP, 10), "/", (AN, 24)),
    ),
    "stripe_secret_key": ("stripe.api_key = '{}'", ("sk_live_", (AN, 99))),
    "stripe_restricted_key": ("{}", ("rk_live_", (AN, 99))),
    "stripe_webhook_secret": ("{}", ("whsec_", (AN, 32))),
    "huggingface_token": ("HF_TOKEN={}", ("hf_", (LETTERS, 34))),
    "huggingface_org_token": ("{}", ("api_org_", (LETTERS, 34))),
    "npm_token": ("//registry.npmjs.org/:_authToken={}", ("npm_", (AN, 36))),
    "pypi_token": ("password = {}", ("pypi-AgEIcHlwaS5vcmc", (AN_, 120))),
    "twilio_api_key": ("{}", ("SK", (HEX, 32))),
    "sendgrid_api_key": ("{}", ("SG.", (AN_, 22), ".", (AN_, 43))),
    "mailgun_api_key": ("api:{}", ("key-", (HEX, 32))),
    "digitalocean_token": ("{}", ("dop_v1_", (HEX, 64))),
    "doppler_token": ("{}", ("dp.pt.", (AN, 43))),
    "databricks_token": ("{}", ("dapi", (HEX, 32))),
    "azure_storage_key": (
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};EndpointSuffix=core.windows.net",
        ((B64, 86), "=="),
    ),
    "azure_sas_signature": (
        "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig={}",
        ((AN, 43), "%3D"),
    ),
    "azure_client_secret": ("{}", ((AN, 3), (DIG, 1), "Q~", (AN, 34))),
    "heroku_api_key": ("{}", ("HRKU-AA", (AN_, 58))),
    "shopify_access_token": ("{}", ("shpat_", (HEX, 32))),
    "shopify_shared_secret": ("{}", ("shpss_", (HEX, 32))),
    "telegram_bot_token": ("https://api.telegram.org/bot{}/getMe", ((DIG, 10), ":AA", (AN_, 33))),
    "discord_bot_token": ("{}", ("MT", (AN, 24), ".", (AN_, 6), ".", (AN_, 38))),
    "discord_webhook": ("https://discord.com/api/webhooks/1234567890123456789/{}", ((AN_, 68),)),
    "groq_api_key": ("{}", ("gsk_", (AN, 52))),
    "replicate_api_token": ("{}", ("r8_", (AN, 37))),
    "perplexity_api_key": ("{}", ("pplx-", (AN, 48))),
    "fireworks_api_key": ("{}", ("fw_", (AN, 24))),
    "together_api_key": ("{}", ("tgp_v1_", (AN_, 43))),
    "tavily_api_key": ("{}", ("tvly-dev-", (AN, 32))),
    "langsmith_api_key": ("{}", ("lsv2_pt_", (HEX, 32), "_", (HEX, 10))),
    "linear_api_key": ("{}", ("lin_api_", (AN, 40))),
    "notion_token": ("{}", ("ntn_", (DIG, 11), (AN, 35))),
    "atlassian_api_token": ("{}", ("ATATT3xFfGF0", (AN_, 180), "=", (HEX, 8))),
    "supabase_key": ("{}", ("sbp_", (HEX, 40))),
    "postman_api_key": ("{}", ("PMAK-", (HEX, 24), "-", (HEX, 34))),
    "figma_token": ("{}", ("figd_", (AN_, 40))),
    "vault_token": ("VAULT_TOKEN={}", ("hvs.", (AN_, 90))),
    "terraform_token": ("{}", ((AN, 14), ".atlasv1.", (AN_, 67))),
    "pulumi_token": ("{}", ("pul-", (HEX, 40))),
    "newrelic_api_key": ("{}", ("NRAK-", (UP, 27))),
    "age_secret_key": ("{}", ("AGE-SECRET-KEY-1", (BECH32, 58))),
    "square_access_token": ("{}", ("sq0atp-", (AN_, 22))),
    "square_oauth_secret": ("{}", ("sq0csp-", (AN_, 43))),
    "mapbox_secret_token": ("{}", ("sk.eyJ1Ijoi", (AN_, 50), ".", (AN_, 22))),
    "onepassword_service_token": ("{}", ("ops_eyJ", (AN, 200))),
    "jwt": ("{}", ("eyJhbGciOiJIUzI1NiJ9.eyJ", (AN_, 60), ".", (AN_, 43))),
    "bearer_token": ('curl -H "Authorization: Bearer {}" https://api.example.com', ((AN, 40),)),
    "basic_auth": ("Authorization: Basic {}", ((B64, 30), "==")),
    "authorization_header": ("Authorization: token {}", ((HEX, 40),)),
    "url_password": ("postgres://app:{}@db.internal:5432/app", ((AN, 20),)),
    "password": ("DB_PASSWORD={}", ((AN + "!@#%^&*", 18),)),
    "secret": ('client_secret: "{}"', ((AN_, 32),)),
    "token": ("ACCESS_TOKEN={}", ((AN, 40),)),
    "api_key": ('{{"apiKey": "{}"}}', ((AN, 32),)),
    "credentials": ("credentials: {}", ((AN, 40),)),
    "pem_private_key": (
        "```\n-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n```",
        ((B64, 70), "\n", (B64, 70), "\n", (B64, 20), "=="),
    ),
}


def make(parts: tuple[Part, ...], rng: random.Random) -> str:
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        else:
            charset, n = part
            out.append("".join(rng.choice(charset) for _ in range(n)))
    return "".join(out)


def example(kind: str, seed: int = 0) -> tuple[str, str]:
    """(text in its context, the secret) for ``kind``."""
    context, parts = CATALOGUE[kind]
    secret = make(parts, random.Random(f"{kind}:{seed}"))
    return context.format(secret), secret


def secret_pieces(secret: str) -> list[str]:
    """The parts of a secret that must not survive (a PEM body is checked line by line)."""
    return [line for line in secret.splitlines() if len(line) >= 8] or [secret]


def test_catalogue_has_at_least_forty_formats_and_tests_every_kind() -> None:
    assert len(KINDS) >= 40
    assert set(CATALOGUE) | set(FORMAT_SAMPLES) == set(KINDS)  # the catalogues' formats there


@pytest.mark.parametrize("kind", sorted(CATALOGUE))
def test_each_format_is_redacted_with_its_kind(kind: str) -> None:
    for seed in range(5):
        text, secret = example(kind, seed)
        result = redact(text)
        for piece in secret_pieces(secret):
            assert piece not in result.text, (kind, result.text)
        assert kind in result.kinds, (kind, result.counts, result.text)
        assert f"{PLACEHOLDER_PREFIX}{kind}]" in result.text


# --- a corpus of realistic transcript text ----------------------------------------------------


def _corpus() -> list[tuple[str, list[str], set[str]]]:
    """(text, secrets that must vanish, kinds that must be reported)."""
    oa, _ = example("openai_project_key")
    oa = oa.split("=", 1)[1]
    gh = example("github_pat")[1]
    aws_id = example("aws_access_key_id")[1]
    aws_secret = example("aws_secret_access_key")[1]
    jwt = example("jwt")[1]
    stripe = example("stripe_secret_key")[1]
    pem_text, pem_body = example("pem_private_key")
    slack = example("slack_bot_token")[1]
    ant = example("anthropic_api_key")[1]
    basic = base64.b64encode(b"deploy:S3cure-Passw0rd").decode()
    return [
        (
            "Here is my .env, can you see why the app can't connect?\n\n"
            f"OPENAI_API_KEY={oa}\nDB_HOST=localhost\nDB_PASS=pa55-w0rd-xyz\n"
            f"AWS_ACCESS_KEY_ID={aws_id}\nAWS_SECRET_ACCESS_KEY={aws_secret}\n"
            "DEBUG=true\nSECRET_KEY_BASE=9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddccbbaa\n",
            [
                oa,
                "pa55-w0rd-xyz",
                aws_id,
                aws_secret,
                "9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddccbbaa",
            ],
            {"openai_project_key", "password", "aws_access_key_id", "aws_secret_access_key"},
        ),
        (
            "Traceback (most recent call last):\n"
            '  File "/app/db.py", line 12, in connect\n'
            "    engine = create_engine(url)\n"
            "sqlalchemy.exc.OperationalError: (psycopg.OperationalError) connection failed: "
            "postgresql+psycopg://svc_app:Xk9#mP2vL8q@10.0.3.7:5432/prod\n"
            "Also tried mongodb+srv://admin:M0ng0-S3cret@cluster0.ab1cd.mongodb.net/test and "
            "redis://:r3d1s-pa55@cache:6379/0",
            ["Xk9#mP2vL8q", "M0ng0-S3cret", "r3d1s-pa55"],
            {"url_password"},
        ),
        (
            f"$ curl -s https://api.github.com/user -H 'Authorization: token {gh}'\n"
            f'$ curl -H "Authorization: Bearer {jwt}" https://api.internal/v1/me\n'
            f"$ curl -u deploy:S3cure-Passw0rd https://ci.example.com/api\n"
            f"$ curl -H 'Authorization: Basic {basic}' https://ci.example.com/api",
            [gh, jwt, "S3cure-Passw0rd", basic],
            {"github_pat", "jwt", "basic_auth"},
        ),
        (
            "```json\n{\n"
            f'  "stripe": {{"secret_key": "{stripe}"}},\n'
            '  "database": {"user": "app", "password": "correct-horse-battery"},\n'
            f'  "slack": {{"bot_token": "{slack}"}},\n'
            '  "anthropic": {"apiKey": "' + ant + '"}\n}\n```',
            [stripe, "correct-horse-battery", slack, ant],
            {"stripe_secret_key", "password", "slack_bot_token", "anthropic_api_key"},
        ),
        (
            "I generated a deploy key, here it is:\n" + pem_text + "\nAdd it to the server.",
            secret_pieces(pem_body),
            {"pem_private_key"},
        ),
        (
            "config.yaml:\n\ndatabase:\n  host: db\n  username: app\n  password: hunter2-Y7\n"
            "smtp:\n  pass: mail-Pa55\napi:\n  token: 'tok_9c1f0e2d3b4a5968'\n",
            ["hunter2-Y7", "mail-Pa55", "tok_9c1f0e2d3b4a5968"],
            {"password", "token"},
        ),
        (
            # a JSON transcript line with an escaped JSON string inside
            '{"type":"tool_result","content":"{\\"password\\": \\"Zx8-qwerty-77\\", '
            '\\"user\\": \\"root\\"}"}',
            ["Zx8-qwerty-77"],
            {"password"},
        ),
        (
            "Run `mysql --user=root --password=Sup3rS3cret db` or "
            "`docker login --username bob --password dckr-P4ss-word registry`",
            ["Sup3rS3cret", "dckr-P4ss-word"],
            {"password"},
        ),
        (
            'service account JSON: {"type": "service_account", "private_key": "-----BEGIN PRIVATE '
            "KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\\nabcDEF123ghiJKL456"
            'mnoPQR789stuVWX012yzABC\\n-----END PRIVATE KEY-----\\n", "client_email": "a@b.iam"}',
            ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "abcDEF123ghiJKL456"],
            {"pem_private_key"},
        ),
        (
            "Server=tcp:acme.database.windows.net,1433;Database=app;User ID=admin;"
            "Password=Az-Pa55w0rd!;Encrypt=True;",
            ["Az-Pa55w0rd!"],
            {"password"},
        ),
    ]


@pytest.mark.parametrize("case", range(len(_corpus())))
def test_corpus_secrets_do_not_survive_and_kinds_are_reported(case: int) -> None:
    text, secrets, kinds = _corpus()[case]
    result = redact(text)
    for secret in secrets:
        assert secret not in result.text, (secret, result.text)
    assert kinds <= set(result.kinds), (result.counts, result.text)
    assert redact(result.text) == type(result)(result.text)


def test_readable_prefixes_are_kept() -> None:
    token = example("openai_api_key")[1]
    assert redact(f"OPENAI_API_KEY={token}").text == "OPENAI_API_KEY=[redacted:openai_api_key]"
    assert redact("Authorization: Bearer abcdef0123456789ABCDEF").text == (
        "Authorization: Bearer [redacted:bearer_token]"
    )
    assert redact("password: hunter2x").text == "password: [redacted:password]"
    assert redact("postgres://u:p4ss@h/db").text == "postgres://u:[redacted:url_password]@h/db"


def test_counts_report_kinds_and_numbers_never_values() -> None:
    a, b = example("github_pat", 1)[1], example("github_pat", 2)[1]
    result = redact(f"{a} and {b} and password=xyz123")
    assert result.counts == (("github_pat", 2), ("password", 1))
    assert scan(f"{a} and password=xyz123") == ("github_pat", "password")
    assert all(a not in str(item) for item in result.counts)


# --- must not redact ------------------------------------------------------------------------

UNCHANGED = [
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixes the cursor; see a1b2c3d and 3f4e5d6",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "digest sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "[image] and data:image/png;base64,iVBORw0KGgo= were attached",
    'password = request.form["password"]',
    "token = get_token()",
    "if api_key is None:\n    raise ValueError('missing key')",
    "api_key = os.environ['API_KEY']\ntoken = os.getenv('GITHUB_TOKEN')",
    'headers = {"Authorization": f"Bearer {token}"}',
    'curl -H "Authorization: Bearer $OPENAI_API_KEY" https://api.openai.com/v1/models',
    "export OPENAI_API_KEY=$OPENAI_API_KEY\nTOKEN=${TOKEN}\npassword: ${{ secrets.DB_PASSWORD }}",
    'OPENAI_API_KEY="sk-..."\nANTHROPIC_API_KEY=<your-key>\napi_key: YOUR_API_KEY',
    "password: xxx\nsecret: changeme\ntoken: ''\napi_key: null\npassword=********",
    "def login(username: str, password: str, token: Optional[str] = None) -> None:",
    "const apiKey = process.env.API_KEY;\nconst { password } = req.body;",
    "password: string;\ntoken: Token;\napiKey?: string;",
    "connect(password=password, token=token)",
    "params: { _csrf_token: csrfToken, api_key: apiKey },\nsecret: clientSecret",
    "Password: required for login. Token: the one from settings.",
    "max_tokens: 4096\ntoken_count = 12\neos_token: '</s>'\ntoken_type: bearer",
    "/home/user/.config/mcp-agents-memory/.env and ~/.ssh/id_ed25519.pub",
    "version 1.2.3-rc.4, python3.11, node v20.11.1, pip 24.0",
    "Please check the primary_key and sort_key: created_at on the table.",
    "The private key file lives in ~/.ssh; never paste -----BEGIN OPENSSH PRIVATE KEY----- here.",
    "The task: ask for a risky skip of the sk-learn docs; scikit-learn is imported as sklearn.",
    "Мы обновили конфигурацию: пароль хранится в менеджере секретов, токен — в окружении.",
    "설정을 업데이트했습니다. 비밀번호는 비밀 관리자에 저장되고 토큰은 환경 변수에 있습니다.",
    "Refactor: the capture pipeline reads only complete records past the cursor, then commits.",
    "git@github.com:org/repo.git and https://github.com/org/repo/pull/12#issuecomment-1",
    "docker run -u 1000:1000 image && git push -u origin main && date -u +%Y-%m-%dT%H:%M:%SZ",
    '{"content": "[tool.logfire]\\ntoken = false\\nproject_name = \\"bot\\"\\n"}',
    "See https://user@example.com/path and ssh://git@host:22/repo",
    "Bearer tokens are sent in the Authorization header.",
    "[redacted:openai_api_key] and password: [redacted:password]",
]


@pytest.mark.parametrize("text", UNCHANGED)
def test_ordinary_text_is_left_unchanged(text: str) -> None:
    result = redact(text)
    assert result.text == text, result.counts
    assert result.counts == ()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_placeholders_never_match_any_pattern(kind: str) -> None:
    placeholder = f"{PLACEHOLDER_PREFIX}{kind}]"
    for context in ("{}", "password={}", 'token: "{}"', "Authorization: Bearer {}", "x://u:{}@h"):
        text = context.format(placeholder)
        assert redact(text).text == text


# --- properties -----------------------------------------------------------------------------

FRAGMENTS = [
    "password", "PASSWORD", "token", "api_key", "secret", "key", "=", ":", ": ", " = ", '"', "'",
    "\\", "\n", " ", "sk-", "sk-proj-", "AKIA", "ghp_", "eyJ", ".", "Authorization: ", "Bearer ",
    "Basic ", "://", "@", "u:", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
    "abc123XYZ", "Q~", ":AA", "$", "{", "}", "[redacted:token]", "--password ", " -u ", "a:b@",
    "0123456789abcdef" * 2, "AbCdEfGh12345678" * 3, "&", ";", "#", "**",
]  # fmt: skip

fragment_text = st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join)
PROPERTY = settings(
    max_examples=150, deadline=500, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


@PROPERTY
@given(st.one_of(st.text(max_size=300), fragment_text))
def test_redact_is_idempotent(text: str) -> None:
    once = redact(text).text
    assert redact(once).text == once


@PROPERTY
@given(
    kind=st.sampled_from(sorted(CATALOGUE)),
    seed=st.integers(0, 2**32),
    before=st.one_of(st.text(max_size=80), fragment_text),
    after=st.one_of(st.text(max_size=80), fragment_text),
)
def test_generated_secrets_never_survive_in_random_text(
    kind: str, seed: int, before: str, after: str
) -> None:
    context, parts = CATALOGUE[kind]
    secret = make(parts, random.Random(seed))
    text = f"{before}\n{context.format(secret)}\n{after}"
    once = redact(text).text
    for piece in secret_pieces(secret):
        assert piece not in once, (kind, once)
    assert redact(once).text == once


ADVERSARIAL = {
    "a": "a" * 100_000,
    "=": "=" * 100_000,
    "-": "-" * 100_000,
    ":": ":" * 100_000,
    "/": "/" * 100_000,
    "base64": "".join(random.Random(7).choice(B64) for _ in range(100_000)),
    "password=": "password=" * 11_000,
    "password: a": "password: " + "a" * 100_000,
    'password="': 'password="' + "a" * 100_000,
    "sk-": "sk-" * 33_000,
    "sk-long": "sk-" + "a1" * 50_000,
    "AKIA": "AKIA" * 25_000,
    "digits:AA": "1" * 100_000 + ":AA",
    ":AA": "12345:AA" * 12_000,
    "pem": "-----BEGIN RSA PRIVATE KEY-----\n" + "QUJD\n" * 20_000,
    "pem-headers": "-----BEGIN RSA PRIVATE KEY-----" * 3_000,
    "url": "://" + "a:" * 50_000,
    "url-at": "://a:" + "b@" * 50_000,
    "jwt": "eyJ" + "a." * 50_000,
    "dots": "a." * 50_000,
    "discord": ("M" + "a" * 25 + "." + "b" * 6 + ".") * 3_000,
    "backslash": "\\" * 100_000,
    "quotes": '"' * 100_000,
    "authorization": "Authorization: " * 7_000,
    "bearer": "bearer " * 14_000 + "x" * 1000,
    "flags": "--password " * 9_000,
    "curl": " -u a:" * 16_000,
    "assign-mix": "api_key = x; " * 8_000,
    "name": "a_" * 50_000 + "=1",
    "q~": "abc1Q~" * 16_000,
    "private": "<private>" * 10_000,
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_input_finishes_quickly(name: str) -> None:
    text = ADVERSARIAL[name]
    start = time.perf_counter()
    once = redact(text).text
    elapsed = time.perf_counter() - start
    assert elapsed < 0.5, f"{name}: {elapsed:.3f}s for {len(text)} chars"
    assert redact(once).text == once
