"""The second opinion on secrets: random-looking tokens flagged, everyday text left alone."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from agents_memory.admission import entropy
from agents_memory.admission.redact import redact
from agents_memory.admission.scrub import findings, scrub

FIXTURES = Path(__file__).parents[1] / "fixtures" / "transcripts"
UNKNOWN = "q7Xv2LmR9tBz4KpW8nYc3HdF6sJgA1eUoZ5iNr0T"
"""Random-looking, in no provider's format: the redactor lets it through."""


def test_a_random_token_the_redactor_does_not_know_is_flagged_anywhere() -> None:
    text = f"the cache is warmed by {UNKNOWN} every night"
    assert redact(text).kinds == ()
    assert entropy.scan(text) == ("high_entropy",)
    assert entropy.replace(text) == "the cache is warmed by [redacted:high_entropy] every night"


@pytest.mark.parametrize(
    "text",
    [
        "export ACME_TOKEN=7e2b00caec89cd553d5aa95148b5e08c",
        "Authorization: Bearer mFgz39Ae8NRYbiZnNXA52Wf1DKtUt0QP",
        'client_secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
    ],
)
def test_a_random_value_after_a_secret_keyword_is_flagged_and_the_name_kept(text: str) -> None:
    assert entropy.scan(text) == ("keyword_entropy",)
    replaced = entropy.replace(text)
    assert "[redacted:keyword_entropy]" in replaced
    assert replaced.split("[redacted:")[0] == text[: len(replaced.split("[redacted:")[0])]


@pytest.mark.parametrize(
    "text",
    [
        "git commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "https://github.com/org/repo/blob/3f786850e387550fdab836ed7e6dc881de23001b/src/x.py",
        "TestDoctorSecretsReportsKindsAndIds2 calls AgentsMemoryErrorHandlerV3Factory",
        "request 550e8400-e29b-41d4-a716-446655440000 done",
        '{"id":"prt_233367b19001f07da4wIg2esQv","sessionID":"ses_dccc98ad3ffedtbPddUeF0sAXR"}',
        "evt_233367546001c7JAOzMeDWbHvL",
        '{"id":"toolu_0193wZx1r27o8y3UAyXWRJJG","call_id":"call_ZaEft4DTbQXkk41Z2ZFxRj7z"}',
        '"cacheCreationInputTokens":0,"cacheCreationEphemeral5mInputTokens":0',
        "see /home/dev/.codex/sessions/2026/11/30/rollout-2026-11-30T06-21-13-01a22b1d.jsonl",
        "already gone: [redacted:high_entropy] and [redacted:anthropic_api_key]",
    ],
)
def test_hashes_ids_paths_identifiers_and_placeholders_are_not_flagged(text: str) -> None:
    assert entropy.scan(text) == ()


SQLITE_HEADER = b"SQLite format 3\x00"


def _text_of(path: Path) -> str:
    """A transcript's text; a SQLite store's is its text values, one a line (its pages glue
    neighbouring columns together, which no reader ever sees)."""
    if path.read_bytes()[: len(SQLITE_HEADER)] != SQLITE_HEADER:
        return path.read_text(encoding="utf-8", errors="replace")
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        values = [v for t in tables for row in conn.execute(f'SELECT * FROM "{t}"') for v in row]
    return "\n".join(v for v in values if isinstance(v, str))


PLANTED = "q7Vx2Lm9Rt4Kp8Wz3Nb6Hc1Ys5Df0Ga"
"""The made-up token the tool-call fixtures (``actions/``, made by
``tests/e2e/make_action_fixtures.py``, and Antigravity's hand-written one) put in a failing
command on purpose: the one secret those transcripts hold."""
PLANTED_IN = ("actions/", "antigravity/hand_written_")


def test_the_second_opinion_flags_nothing_in_the_real_fixture_transcripts() -> None:
    files = [p for p in sorted(FIXTURES.rglob("*")) if p.is_file()]
    assert len(files) > 30
    texts = {str(p.relative_to(FIXTURES)): _text_of(p) for p in files}
    planted = {name for name, text in texts.items() if PLANTED in text}
    assert planted and all(name.startswith(PLANTED_IN) for name in planted)
    assert all(entropy.scan(texts[name]) for name in planted), "the planted token is caught"
    flagged = {name: entropy.scan(text.replace(PLANTED, "")) for name, text in texts.items()}
    assert {name: kinds for name, kinds in flagged.items() if kinds} == {}


def test_scrub_applies_both_opinions_and_is_idempotent() -> None:
    known = "sk-ant-api03-" + "Zx9" * 30 + "AA"
    text = f"keys: {known} and {UNKNOWN}"
    assert findings(text) == ("redactor:anthropic_api_key", "entropy:high_entropy")
    once = scrub(text)
    assert known not in once and UNKNOWN not in once
    assert findings(once) == ()
    assert scrub(once) == once
