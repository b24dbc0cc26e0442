"""Passwords and tokens from the configuration never reach a message, a log line or a
traceback: everything the product prints about an error goes through :func:`mask` first.

Two layers, because a malformed value cannot always be parsed: every configured secret is
replaced wherever it occurs (the whole ``DATABASE_URL`` too, and the password inside it), and
any ``scheme://user:password@`` in the text keeps its user and loses its password.
:class:`MaskingFilter` applies the same to every log record of a process, its exception text
included. (Secrets inside captured transcripts are :mod:`agents_memory.admission`'s business.)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

PLACEHOLDER = "***"
_MIN_SECRET = 4
"""Shorter values are not masked: replacing every "ab" in a message would only garble it."""
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][\w+.-]*:/{1,2}[^:/@\s]*:)[^@\s]+(?=@)")


def mask(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret (longest first) and every URL password replaced by ``***``."""
    for secret in sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, PLACEHOLDER)
    return _URL_PASSWORD.sub(rf"\g<head>{PLACEHOLDER}", text)


class MaskingFilter(logging.Filter):
    """Masks a record's message and exception text before any handler formats it."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = tuple(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask(message, self.secrets)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = mask(text, self.secrets)
        elif record.exc_text:
            record.exc_text = mask(record.exc_text, self.secrets)
        return True
