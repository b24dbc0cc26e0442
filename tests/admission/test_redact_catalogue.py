# ruff: noqa: E501  (published sample strings are long)
"""Redaction of the public catalogues' formats (gitleaks, trufflehog, detect-secrets), keyed
secrets in every assignment syntax, the false positives of issue 18, and a secret cut where an
adapter joined two content blocks of one message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents_memory.adapters.claude_code import ClaudeCodeAdapter
from agents_memory.admission.admit import Admitted, create_admission
from agents_memory.admission.redact import redact

# One published test sample per kind added for issue 18 (from the catalogues' own tests; none is a
# live credential), as it appears in text.
FORMAT_SAMPLES: dict[str, str] = {
    "vault_batch_token": "b.AAAAAQJgxDgqsGNorpoOR7hPZ5SUynBvCl764jyRPfnX7WvkdkDzGjbLNGdPdtlY33Als2P36yDZueqzfdGw9Rsa",
    "adafruit_io_key": "aio_VxEqGaqgMgZej3DceezbBy03eWyW",
    "airtable_token": "pat6s3zzpvpcco1pk.99f4a7dc0beee7a5b6fe594d250dbd3791cf36a2827ddc33f3664bfb3fa49c1f",
    "alibaba_access_key_id": "LTAIXgRPqwF1DhBf6Q1uZ5DrM",
    "apify_token": "apify_api_dXB1vLsglgTexUYm3JTAx2BHTjVuDBbvPl8R",
    "artifactory_api_key": "AKCp5e2gMx8TtJNDtrsuPq7Jz24Rqjkjf1d1iiy1GuEjmdsY8ghxFGgehZcK3UGNgy5TxHWdE",
    "artifactory_reference_token": "cmVmdGtuOjAxOjAwMDAwMDAwMDA6awJQVlZkdEVyWXJ2cVNSemAABVQ1bwaBSWtE",
    "atlassian_datacenter_token": "BBDC-MTM5NDkzNDI3MTgzOrTObCIIEXN0tpQYAc4bhG+RUqwz",
    "aws_appsync_key": "da2-abcdefghijklmnopqrstuvwxyz",
    "aws_bedrock_api_key": "ABSKQmVkcm9ja0FQSUtleS18ghovprh4aoln1hogov96iukkw1z0uuf9ziwep9d0qzf541lnfsr5zdjzmafmilyqbhkh2dd5u8unezu8150dulrxzbtw1b4z5h0lngt6ftg=",
    "bannerbear_key": "bb_pr_abcdc2b40ef44abcd8cbf3739aabcd",
    "buildkite_token": "bkua_hqlh73m51jtho0jh12wcf2758c8fcdbv05z023ly",
    "circleci_token": "CCIPAT_FAKEd5qPreGFAKEaQxBi6i_914bf0042f4f2d34e1d2ef6615c051a5caf70172",
    "clickhouse_secret": "4b1dbRdW3rOcB7xLthrM4BTBGK1qPLkHigpN1bXD6z",
    "clojars_token": "CLOJARS_tkymqop3nytkhc60ftv6y3ksxxv2xo49nk8rzwf08rlrjibg70w14yv98jg7",
    "closecrm_api_key": "api_3cyEW8syFEmeND561qJ9Sj8mT6E0VyWqY7h6cjJIBtc2e",
    "cloudflare_api_token": "v1.0-aaa334dc886f30631ba0a610-0d98ef66290d7e50aac7c27b5986c99e6f3f1084c881d8ac0eae5de1d1aa0644076ff57022069b3237d19afe60ad045f207ef2b16387ee37b749441b2ae2e9ebe5b4606e846475d4a5",
    "coinbase_api_key_name": "organizations/14d1742b-3575-4490-b9bc-a8a9c7e4973d/apiKeys/7473d38c-80c6-4a69-a715-1ea8fd950f6f",
    "contentful_token": "CFPAT-fakeabcdefghijklmnopqrstuvwxyz0123456789xyz",
    "dfuse_api_key": "web_akqaeqqsrlb5bczdblzgi4g94i3yt2jb",
    "dockerhub_token": "dckr_pat_dlndn9l2JLhWvbdyP3blEZw_j7d",
    "duffel_token": "duffel_test_buh9g0igg8i50czf327h457wk8cd2ekv5tcibdhykbk",
    "dynatrace_token": "dt0c01.jqmd8qgflr8yp9qigixipefp.loj8sqlco1v0ceux3xovooc8ae8utkdmug6q12t7gnosh4u7n4ctsqkwjc29tl3y",
    "easypost_api_key": "EZAKRcpJR4QDMk0aDw91UegDDZ3pmbpZ1UFLlKhzpgWIMyg4ilr5TlFRYo",
    "elevenlabs_api_key": "sk_c43667f9bedd46fcff858f09f648d984533645e30f0541df",
    "endorlabs_api_key": "endr+xTGNjttLb8kVOHZC",
    "facebook_access_token": "911602140448729|AY-lRJZq9BoDLobvAiP25L7RcMg",
    "finage_api_key": "API_KEYN2B1NFN5CP6CK5BJHY8B15YF535TP681",
    "fleetbase_key": "flb_live_ZtWtb6hVkUMVdUDg2lgK",
    "flexport_key": "shltm_ZnpDDh4AEj_n2WHHqjYErtv3ZGS0kH1bWVdl7V9D",
    "flutterwave_key": "FLWPUBK_TEST-2b74f7ab0ae1ad1ea9be62bff63ef2fb-X",
    "flyio_token": "fo1_qOxK-oH7WHKm-BJxchvcqAY_mfbEywV-N71WQo5kT7_",
    "frameio_token": "fio-u-b249uayif=n8wynjd7xeaw5gyr1ceo9qwsmv2v30zeo2ec0ve63=g1nt-n=cwsd-",
    "freemius_secret_key": "sk_ubb4yN3mzqGR2x8#P7r5&@*xC$utE",
    "fullstory_api_key": "na1.0dDp/nOUE6tV/q5YxDtJQmWKBibPLqhX9H0nJcW9rReyBHIFuwnMwbLZcAijj1yYRP8AWgZBbUOOh4QP26sJMiqOYOcEZULACm8U",
    "gitlab_session_cookie": "_gitlab_session=kh030f8vb3bs9ktnvwfp7skozyja7236",
    "gocardless_token": "live_3npgrd0dx0r5va8fy9b--box2wqc5oqycp5oavdp",
    "grafana_api_key": "eyJrIjoihlt4d22km5m70703f9hsfv1slohdcy5lk30a1qbh7ehr1z3egkte8uthmb1gekx7vx3mkj",
    "grafana_cloud_token": "glc_nfa8m9fadxs0l1d80v9ee93kx0ak6dsx",
    "grafana_service_account_token": "glsa_qobbtvxsotge842u9lej3qyeq1524mta_bd467630",
    "harness_token": "pat.y0jnnpvr5u0un3fl7qs10j.akjnybo9u3wam7i4qinqkt8y.8xefdrzc8ndmh7eqaxky",
    "hubspot_token": "pat-eu1-1457aed5-04c6-40e2-83ad-a862d3cf19f2",
    "infracost_api_key": "ico-R1xwNgy9Tg8GervP1XCIAvvsuhI3tsbL",
    "intra42_client_secret": "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",
    "klaviyo_key": "pk_7043602_WIKY22PAKCVC1S5Q2X6119IK7N1UL8VY",
    "locationiq_token": "pk.yRfkay-UQ1g6ywFnbsJT3IhS1U-Rdhtf",
    "mailchimp_api_key": "40b0e5924dd2a14d2902b738b5c7acc5-us20",
    "maxmind_license_key": "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",
    "newrelic_key": "NRJS-661fc9ee0ac8a68dd60",
    "nightfall_api_key": "NF-ELwgMbVC9WYslSoewcZUMnj9oTNhgjVq",
    "nvidia_api_key": "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",
    "octopus_deploy_api_key": "API-NVLS893W3M6QYXFU8GD6XJLQ1Y",
    "onepassword_secret_key": "A3-VII8NK-G50K1NAMXDB-P3LO5-JE3YX-FYOO8",
    "openshift_token": "sha256~qIW1_AooREoO_YiXqNkx9_5CXV6gpagdid7sptMHF41",
    "pagarme_key": "ak_live_ubMaiZa2EwqPZXC3wN0ezZtiCl1Hep",
    "paystack_key": "sk_xigrvarm_cJHGpWQwCTHajG2A2o8eC8TQaQGZdoMVhgXUA9Lm",
    "pganalyze_api_key": "pgar_abcdefghijklmnopqrstuvwxyz1",
    "pinecone_api_key": "pcsk_T5Afk6_5qU9s3iLVFmaSaJtMat7gTHaT9fXa7ykiBk7iz4uUMuLGLemkdutTgwJevYhqtn",
    "planetscale_token": "pscale_pw_w4rsw7pve9mb13s7ojmx=h54zug=8zqt",
    "posthog_key": "phx_C1rP9fnAtEFJvb0IYCFdeQhar2WdwUFBYHJym1F_Zqr",
    "prefect_token": "pnu_azd4disxuqjcqskpd808a3kl4gxtr7bbf4e8",
    "pubnub_key": "pub-c-3886bd4t-dwor-vuqm-ond2-4wz4supiwwa2",
    "ramp_key": "ramp_id_tz8O3QzUBiPcAejdGSIvfcvOxbk1wVfnUEIsieV3",
    "razorpay_key": "rzp_live_oE9IEkoNYnmwkG",
    "readme_api_key": "rdme_xbkygrno09fw1sqoxf5o72nbsnnoyodij0w6wpmje2zp90xn5gln1xtv3u1unejptygwso",
    "robinhood_crypto_key": "rh-api-e3bb245e-a45c-4729-8a9b-10201756f8cc",
    "rootly_api_key": "rootly_7f1e8738d7d6b540bc52e1bc24c6e2c109dc44642f9e5d583be7e5d04f8bd282",
    "rubygems_api_key": "rubygems_4038ce27feef1525d8d1713c0d4b44a4b0306b1f812a7ba2",
    "salad_cloud_api_key": "salad_cloud_org_zYLYVpmHJ3oksnZ0l9RHJCf1ib2QvJOJztWukwYjtjB1kDIGP",
    "salesforce_token": "3MVG9dBDux2v1sLoreCoilvmnP337XNeiV01JFJ8uAAVVyH5qX0NPaa0d54El.Wkce6JTB1LmsxhzVaaa.VZ7",
    "scalingo_token": "tk-us-h28dxls9yxx6c2i8knpwn67qo6iddvv6e4t12d18xvpanclh",
    "sendinblue_api_key": "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",
    "sentry_org_token": "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",
    "sentry_user_token": "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",
    "settlemint_token": "sm_pat_n01vf7p4o3fvq0xl",
    "shippo_token": "shippo_live_eabd91ed1e79170f9178d2f7eccd47b98db59410",
    "sonar_token": "squ_12345678ABCDEFH1234567890ABCDEFH12345678",
    "sourcegraph_cody_token": "slk_3c6669a93b14fbd6061e00fb40876b327826df4fe393e760d3109de08165e793",
    "sourcegraph_token": "sgp_AaD80dc6E02eCAE1_d3cba16CC0F18fA14A2EFB61CbDFceEBf9fAD16b",
    "spectralops_token": "spu-3f10194ca38240ddb880bab79492384b",
    "stripe_client_secret": "pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhf123456",
    "stripe_publishable_key": "pk_live_51MtwBwLkdIwHu7ix0AHtQwX6NWg8Fq7QKq5YGFy7WGBqRFHdTdE8LfKcKzQk7nJv3x5YJvnJYGGz1n3GyFdHJ5abc123456",
    "tailscale_key": "tskey-rtzgayeq-RLL0xBAIXBhkYRhir0gmxHNoARkj0CqpNTj_xM2Zpm4lDxEIGsYbwO_kzlNSwrQrAOL4yacZGlBfj37e3WRRlmYfKtrgC-xmk0NNQFLQGCTPwcwQT7d6YipCXS1ScCVL8So",
    "trufflehog_enterprise_key": "thog-key-946c7e0fbee2baff",
    "typeform_token": "tfp_mcavzjxsz30-8p99=_s2jnk-qk50u=uy0a2_-7pdrsxi_g0mnn3rlmbm6bw",
    "ubidots_token": "BBFF-ZgyYQIXWnkYcnga3ShOXhm4DlMJpSE",
    "vault_service_token": "s.9bMY3dJwtdUMyWPww5R0Y2DR",
    "voiceflow_key": "VF.DM.6469b4e5909a470007b96250.k4ip0SMy84jWlCsF",
    "webhook_url": "https://uQu9muaokn.webhook.office.com/webhookb2/8IoQDUDl-eqlp-q0zl-tlhi-HTxVfS864oTv@b4infsZa-qpMp-wOV0-T-3g-44wVII0y5vF6/IncomingWebhook/SnuHwf1vaX7oNK32hSnCcLSNYFD8qtfW/uiqxkMLH-gw-a-RxJ7-9rpT-3W85tSlbX4nv",
    "zoho_token": "1000.1fa6966eafbb115624baa4103269e50e.e57d155232227b4e41fa7dd2b88dd4d4",
}


@pytest.mark.parametrize("kind", sorted(FORMAT_SAMPLES))
def test_each_catalogue_format_is_redacted_alone_in_a_sentence(kind: str) -> None:
    sample = FORMAT_SAMPLES[kind]
    result = redact(f"I pasted {sample} into the settings page and it worked.")
    assert kind in result.kinds, (kind, result.text)
    assert sample not in result.text
    assert result.text.startswith("I pasted ") and result.text.endswith(" it worked.")


SECRET = "q8Zr2LmX0vTn4KpW7sYd"

# (syntax, text): each holds SECRET under a name that says it is one.
KEYED: list[tuple[str, str]] = [
    ("xml element", f"<apiKey>{SECRET}</apiKey>"),
    ("xml pair", f'<add key="ClearTextPassword" value="{SECRET}" />'),
    ("go var", f'var apiToken string = "{SECRET}"'),
    ("php concat", f'$apiKey .= "{SECRET}";'),
    ("java setProperty", f'props.setProperty("db.password", "{SECRET}");'),
    ("make ::=", f"API_KEY ::= {SECRET}"),
    ("make :::=", f"API_KEY :::= {SECRET}"),
    ("make ?=", f"API_TOKEN ?= {SECRET}"),
    ("curl -u", f"curl -u admin:{SECRET} https://api.example.com/v1"),
    ("mysql -p", f"mysql -u root -p{SECRET} production"),
    ("docker login -p", f"docker login -u ci -p {SECRET} registry.example.com"),
    ("cli flag", f"mytool deploy --api-token {SECRET} --verbose"),
    ("cli flag =", f"mytool deploy --client-secret={SECRET}"),
    ("yaml", f"client_secret: {SECRET}"),
    ("toml", f'api_key = "{SECRET}"'),
    ("json", f'{{"accessToken": "{SECRET}"}}'),
    (".env", f"DB_PASSWORD={SECRET}"),
    ("url", f"https://deploy:{SECRET}@git.example.com/org/repo.git"),
    ("header", f"Authorization: Bearer {SECRET}"),
]


@pytest.mark.parametrize(("syntax", "text"), KEYED, ids=[s for s, _ in KEYED])
def test_a_keyed_secret_is_redacted_in_every_assignment_syntax(syntax: str, text: str) -> None:
    result = redact(text)
    assert SECRET not in result.text, (syntax, result.text)
    assert "[redacted:" in result.text


def test_a_default_of_none_in_a_signature_keeps_its_closing_parenthesis() -> None:
    line = "def __init__(self, passwd=None):"
    assert redact(line).text == line


def test_a_jsx_or_xml_key_attribute_naming_a_component_is_not_an_api_key() -> None:
    line = '<UserProfileHeader key="UserProfileHeader" title="Profile" />'
    assert redact(line).text == line


def test_a_token_in_a_url_is_replaced_and_the_host_and_path_are_kept() -> None:
    token = "ghs_" + "x7Kp2Lm9Qr4Tv8Wz1Bn6Cd3Fg5Hj0Ks2Md4N"
    result = redact(f"git clone https://x-access-token:{token}@github.com/o/r")
    assert (
        result.text == "git clone https://x-access-token:[redacted:github_app_token]@github.com/o/r"
    )


def test_prose_and_code_with_secret_words_is_left_alone() -> None:
    text = (
        "Enter your password, then press Enter.\n"
        "total_tokens += count\n"
        "<Password>{children}</Password>\n"
        'props.setProperty("token", "Bearer")\n'
        "mysql -u root -p mydb\n"
        "var tokenCount int = 3\n"
    )
    assert redact(text).text == text


ANTHROPIC = (
    "sk-ant-api03-"
    + "Xy7Qm2Lp9Rt4Vw8Zb1Nc6Df3Gh5Jk0Ms2Pa4Sd6Fg8Hj1Kl3Zx5Cv7Bn9Mq2We4Rt6Yu8Io0Pa2Sd4Fg6Hj8Kl0Zx2CvAA"
)


def test_a_secret_split_across_two_content_blocks_of_one_message_is_redacted(
    tmp_path: Path, make_settings: Any
) -> None:
    cut = 30
    record = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/proj",
        "sessionId": "d6e0bada-1959-4eec-a9d2-0bfade768d8f",
        "version": "2.1.38",
        "type": "assistant",
        "uuid": "1516d2ef-f776-456e-b542-d5ddac290ea1",
        "timestamp": "2026-02-10T22:57:51.324Z",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-6",
            "content": [
                {"type": "text", "text": f"Set ANTHROPIC_KEY to {ANTHROPIC[:cut]}"},
                {"type": "text", "text": f"{ANTHROPIC[cut:]} and restart the service."},
            ],
        },
    }
    path = tmp_path / "-work-proj" / "d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl"
    path.parent.mkdir()
    data = (json.dumps(record) + "\n").encode()
    path.write_bytes(data)
    turns = ClaudeCodeAdapter().parse(path, data, offset=0, state={}, final=True).turns
    assert len(turns) == 1
    admitted = create_admission(make_settings(), home=tmp_path).captured_turn(turns[0])
    assert isinstance(admitted, Admitted)
    for stored in (admitted.text, admitted.raw or ""):
        assert ANTHROPIC[:cut] not in stored
        assert ANTHROPIC[cut:] not in stored
    assert "restart the service" in admitted.text
