"""Secrets said in sentences: a value a secret's name introduces is redacted, in English,
Russian and Korean; words, code, placeholders and nameless hashes are left alone."""

from __future__ import annotations

import pytest

from agents_memory.admission.redact import redact
from agents_memory.admission.scrub import findings

# (sentence, the secret in it, the kind reported)
POSITIVES = [
    ("my password is Tr0ub4dor&3", "Tr0ub4dor&3", "password"),
    ("the staging API key is 9f86d081884c7d659a2feaa0c55ad015", "9f86d081884c7d", "api_key"),
    ("use token q8Wz3LmN0pR5tY7u for the bot", "q8Wz3LmN0pR5tY7u", "token"),
    ("the DB password was changed to S3cure!Pass.", "S3cure!Pass", "password"),
    ("FYI the prod database password is now Pr0d-DB#2026", "Pr0d-DB#2026", "password"),
    ("The token for the deploy bot is xq7RbT3mK9vL2pW8nZ4s.", "xq7RbT3mK9vL2pW8nZ4s", "token"),
    ("Log in with password Qwerty!234 and the user root.", "Qwerty!234", "password"),
    ("the client secret is Zk4mPq9Rt2Wx7Yb3Nc6V", "Zk4mPq9Rt2Wx7Yb3Nc6V", "secret"),
    ("The passphrase is 'correct horse battery staple'.", "correct horse battery", "password"),
    ("the credentials are deploy:D3pl0y!Now", "D3pl0y!Now", "credentials"),
    (
        "The connection string is Server=db01;User Id=sa;Password=Sql!2026;",
        "Sql!2026",
        "password",
    ),
    ("I set the Redis password to R3dis_Pa55 in the compose file", "R3dis_Pa55", "password"),
    ("the password is `Backt1ck$Pass`.", "Backt1ck$Pass", "password"),
    ('{"text": "the password is \\"hunter22X\\" ok"}', "hunter22X", "password"),  # raw JSON
    ("мой пароль Tr0ub4dor&3", "Tr0ub4dor&3", "password"),
    ("пароль от базы — hunter2!Db", "hunter2", "password"),
    ("пароль был изменён на Izmenen#5", "Izmenen#5", "password"),
    ("используй токен Tg7Xk2Lm9Qp4 для бота", "Tg7Xk2Lm9Qp4", "token"),
    ("секрет вебхука — Wh5ecret!42", "Wh5ecret!42", "secret"),
    ("비밀번호는 Tr0ub4dor&3입니다", "Tr0ub4dor&3", "password"),
    ("토큰을 Ab12Cd34Ef56로 바꿨어요", "Ab12Cd34Ef56", "token"),
    ("API 키는 Zx9Qw8Er7Ty6Ui5Op4 입니다", "Zx9Qw8Er7Ty6Ui5Op4", "api_key"),
]

NEGATIVES = [
    "The password field is required.",
    "Set the token in the env var before running the tests.",
    "key is None",
    "password = get_password()",
    "if token is None: raise ValueError('no token')",
    "The key is to keep the tests fast.",
    "The token is invalid or expired.",
    "The password must be at least 12 characters long.",
    "The API key is stored in the OPENAI_API_KEY environment variable.",
    "The public key is id_rsa.pub in the repo root.",
    "The token is cached for 3600 seconds.",
    "The key was 2048 bits, now it is 4096.",
    "the key is ctrl+shift+p in VS Code",
    "The password is ********, see the vault.",
    "the password is ${DB_PASSWORD} in the compose file",
    "The key is v2.1.0 of the schema.",
    "assert token is not None",
    "the key is KeyType.PRIMARY in the enum",
    "A bare hash 9f86d081884c7d659a2feaa0c55ad015 in a log line stays.",
    "commit 9f86d081884c7d659a2feaa0c55ad015 fixed the token refresh",
    "Пароль хранится в менеджере секретов, токен — в окружении.",
    "Токен истекает через 3600 секунд.",
    "Включить двухфакторную аутентификацию в настройках.",
    "패키지를 설치한 뒤 키보드 단축키를 설정하세요.",
    "비밀번호는 12자 이상이어야 합니다.",
    "COLDPATH_LOCK_KEY = 0x636F6C6470617468",  # an advisory lock's number, not a key
]


@pytest.mark.parametrize(("text", "secret", "kind"), POSITIVES)
def test_a_value_named_in_a_sentence_is_redacted(text: str, secret: str, kind: str) -> None:
    result = redact(text)
    assert secret not in result.text, result.text
    assert kind in result.kinds
    assert redact(result.text).text == result.text  # idempotent


@pytest.mark.parametrize("text", NEGATIVES)
def test_prose_about_secrets_and_code_stay_unchanged(text: str) -> None:
    assert redact(text).text == text


def test_the_sentence_around_the_value_stays_readable() -> None:
    assert redact("use token q8Wz3LmN0pR5tY7u for the bot").text == (
        "use token [redacted:token] for the bot"
    )
    assert redact("비밀번호는 Tr0ub4dor&3입니다").text == "비밀번호는 [redacted:password]입니다"
    key = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sU9wY1"
    assert redact(f"my key is OPENAI_API_KEY={key} please").text == (
        "my key is OPENAI_API_KEY=[redacted:openai_project_key] please"
    )  # the assignment's name stays readable
    assert redact("the connection string is postgres://app:Sup3rSecret@db:5432/app").text == (
        "the connection string is postgres://app:[redacted:url_password]@db:5432/app"
    )
    raw = '{"text": "my password is Tr0ub4dor&3\\nnext line"}'  # a JSON escape ends it
    assert redact(raw).text == '{"text": "my password is [redacted:password]\\nnext line"}'


def test_doctor_asks_the_same_rule() -> None:
    assert findings("my password is Tr0ub4dor&3") == ("redactor:password",)
    assert findings("the password field is required") == ()
