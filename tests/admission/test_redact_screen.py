"""The redaction screen: every trigger turns its rules on wherever the screen stops, and the
literals it reports instead of substring tests are reported exactly when the text holds them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents_memory.admission.redact import redact
from agents_memory.admission.secret_formats import RULES
from agents_memory.admission.secret_screen import MARKERS, screen

TRIGGERS = sorted(
    {(t, i) for i, rule in enumerate(RULES) for t in rule.triggers if not t.startswith("\0")}
)
ANCHORED = ["-us", "API_KEY", "_mmk", ".ey", "1//0", "4b1", "GR1348941", "5Aep861", "A3", "AIz"]


@pytest.mark.parametrize(("trigger", "index"), TRIGGERS, ids=[t for t, _ in TRIGGERS])
def test_every_trigger_turns_its_rule_on_alone_and_between_words(trigger: str, index: int) -> None:
    for text in (trigger, f"see {trigger} here", f"x{trigger}y", f"--{trigger}--"):
        seen = screen(text)
        assert seen is not None, text
        assert index in seen.enabled, text


# Characters of the markers and the anchored triggers, and the separators around them.
_LITERALS = ANCHORED + [literal for literals in MARKERS.values() for literal in literals]
_ALPHABET = "".join(sorted(set("".join(_LITERALS)))) + "\t-"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=40))
def test_the_screen_reports_a_marker_exactly_when_the_text_holds_one_of_its_literals(
    text: str,
) -> None:
    seen = screen(text)
    markers = seen.markers if seen is not None else set()
    for name, literals in MARKERS.items():
        assert (name in markers) == any(literal in text for literal in literals), name


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*ANCHORED, " ", "-", ".", "_", "A", "K"]), max_size=12))
def test_an_anchored_trigger_turns_its_rules_on_even_inside_other_triggers(
    pieces: list[str],
) -> None:
    text = "".join(pieces)
    seen = screen(text)
    for trigger, index in TRIGGERS:
        if trigger in ANCHORED and trigger in text:
            assert seen is not None and index in seen.enabled, trigger


def test_a_mailchimp_key_after_another_dash_is_redacted() -> None:
    key = "0123456789abcdef0123456789abcdef-us6"
    assert redact(f"mailchimp: sk-{key}").text.count("0123456789abcdef") == 0


def test_a_private_key_under_a_run_of_dashes_is_still_redacted() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" * 3
    text = f"---------\n-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n---"
    out = redact(text)
    assert body[:40] not in out.text
    assert out.kinds == ("pem_private_key",)


def test_a_mysql_password_is_redacted_in_a_text_without_other_triggers() -> None:
    out = redact("run: mysql -u root -pS3cretPassw0rd production")
    assert "S3cretPassw0rd" not in out.text
    assert out.kinds == ("password",)
