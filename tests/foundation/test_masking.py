"""No password or token from the configuration in any message, log line or traceback."""

from __future__ import annotations

import io
import logging
import subprocess
from pathlib import Path

import pytest

from agents_memory.config import configured_secrets, load_settings
from agents_memory.errors import ConfigError
from agents_memory.masking import MaskingFilter, mask
from tests.foundation.test_config import BIN, _clean_env

PASSWORD = "S3cret-pw"


def test_a_configured_secret_and_any_url_password_are_masked() -> None:
    text = f"token tok-abcdef1 and postgresql://app:{PASSWORD}@db/mem and x://u:other@h"
    masked = mask(text, ["tok-abcdef1"])
    assert "tok-abcdef1" not in masked and PASSWORD not in masked and "other" not in masked
    assert "postgresql://app:***@db/mem" in masked and "x://u:***@h" in masked


def test_the_logging_filter_masks_messages_and_tracebacks() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(MaskingFilter([PASSWORD]))
    log = logging.getLogger("test.masking")
    log.addHandler(handler)
    try:
        try:
            raise ValueError(f"bad url postgresql:/app:{PASSWORD}@db/mem")
        except ValueError:
            log.exception("could not connect with %s", f"password={PASSWORD}")
    finally:
        log.removeHandler(handler)
    output = stream.getvalue()
    assert PASSWORD not in output
    assert "Traceback" in output and "could not connect with password=***" in output


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql:/app:{PASSWORD}@db/mem",
        f"postgresql://app:{PASSWORD}@db:notaport/mem",
        f"host=db password={PASSWORD} port=x",
    ],
)
def test_a_mistyped_database_url_is_one_line_without_the_password(url: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "doctor"],
        env=_clean_env(tmp_path, DATABASE_URL=url),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert PASSWORD not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "DATABASE_URL" in lines[0], result.stderr


def test_a_bad_secret_setting_is_named_but_never_shown(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path / "none.env", database_url=f"postgresql:/app:{PASSWORD}@db")
    assert "DATABASE_URL" in str(caught.value) and PASSWORD not in str(caught.value)


def test_secrets_are_found_in_the_env_file_even_when_it_does_not_load(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        f"DATABASE_URL='postgresql://app:{PASSWORD}@db/mem'\nLLM_API_KEY=sk-xyz123\n"
        "SHORT_TERM_DAYS=soon\n",
        encoding="utf-8",
    )
    found = configured_secrets(env_file)
    assert PASSWORD in found and "sk-xyz123" in found
