"""Text filters the capture pipeline applies to a turn before redaction.

* :func:`strip_private` drops ``<private>…</private>`` spans the user marked as off the record.
* :func:`is_brief_echo` spots the session-start brief coming back through a transcript.
* :class:`ExcludeMatcher` answers whether a project is excluded by ``CAPTURE_EXCLUDE``.

All are pure; the matcher compiles its globs once and is cheap per call.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

from agents_memory.admission.echo import BRIEF_MARKER

# A span runs to its closing tag or, when the tag is never closed, to the end of the text:
# dropping too much is safer than leaking what the user asked us not to keep.
_PRIVATE: Final = re.compile(r"<private\s*>.*?(?:</private\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_STRAY_CLOSE: Final = re.compile(r"</private\s*>", re.IGNORECASE)
_GONE: Final = "\0"  # marks where a span was, so tidying touches nothing else
_GONE_LINES: Final = re.compile(r"^[ \t]*\0[ \t\0]*(?:\n[ \t]*)*(?:\n|\Z)", re.MULTILINE)
_GONE_INLINE: Final = re.compile(r"[ \t]*\0[ \t\0]*")


def _tidy(m: re.Match[str]) -> str:
    text, start, end = m.string, m.start(), m.end()
    between_words = start > 0 and text[start - 1] != "\n" and end < len(text)
    return " " if between_words and text[end] not in "\n.,;:!?)]}" else ""


def strip_private(text: str) -> str:
    """``text`` without its private spans; ``""`` when nothing else is left.

    Tags are case-insensitive and spans may cross lines. An unclosed ``<private>`` removes the
    rest of the text; a stray ``</private>`` is dropped. Only the whitespace around a removed
    span is tidied: a line that held nothing else goes (with the blank lines after it), and an
    inline span leaves a single space between the words around it.
    """
    if "<" not in text or "private" not in text.lower():
        return text
    kept = _STRAY_CLOSE.sub(_GONE, _PRIVATE.sub(_GONE, text.replace(_GONE, "")))
    kept = _GONE_INLINE.sub(_tidy, _GONE_LINES.sub("", kept))
    return kept if kept.strip() else ""


def is_brief_echo(text: str) -> bool:
    """True when ``text`` carries the injected brief (the capture pipeline drops such turns)."""
    return BRIEF_MARKER in text


@dataclass(frozen=True, slots=True)
class ExcludeMatcher:
    """``CAPTURE_EXCLUDE`` globs, matched against a turn's project directory and git root.

    * A pattern with a slash (or starting with ``~``) is a path glob. ``~`` expands to ``home``.
      It matches the directory itself and everything below it, so ``/home/u/secret`` and
      ``/home/u/secret/**`` both exclude ``/home/u/secret/sub``.
    * A pattern without a slash is a basename glob (``*-private``): it matches when any
      component of the directory matches it, so ``~/work/acme-private/api`` is excluded too.

    Globs use :mod:`fnmatch` rules (``*`` and ``?`` also cross ``/``), case-sensitively.
    """

    _paths: tuple[re.Pattern[str], ...]
    _names: tuple[re.Pattern[str], ...]

    @classmethod
    def compile(cls, patterns: Iterable[str], *, home: str) -> ExcludeMatcher:
        paths: list[re.Pattern[str]] = []
        names: list[re.Pattern[str]] = []
        for raw in patterns:
            pattern = raw.strip()
            if not pattern:
                continue
            if pattern == "~" or pattern.startswith("~/"):
                pattern = home.rstrip("/") + pattern[1:]
            if "/" not in pattern:
                names.append(re.compile(fnmatch.translate(pattern)))
                continue
            pattern = pattern.rstrip("/")
            while pattern.endswith(("/**", "/*")) and pattern.count("/") > 1:
                pattern = pattern.rsplit("/", 1)[0]
            base = fnmatch.translate(_normalize(pattern) if pattern else "/")
            # fnmatch.translate gives r"(?s:...)\Z"; let it also match anything below.
            paths.append(re.compile(base[: -len(r"\Z")] + r"(?:/.*)?\Z", re.DOTALL))
        return cls(tuple(paths), tuple(names))

    def __bool__(self) -> bool:
        return bool(self._paths or self._names)

    def excludes(self, cwd: str | None, git_root: str | None = None) -> bool:
        """True when ``cwd`` or ``git_root`` (absolute paths; either may be unknown) is excluded."""
        for directory in (cwd, git_root):
            if not directory:
                continue
            path = _normalize(directory)
            if any(p.match(path) for p in self._paths):
                return True
            if self._names and any(
                n.match(part) for part in PurePosixPath(path).parts[1:] for n in self._names
            ):
                return True
        return False


def _normalize(path: str) -> str:
    normal = os.path.normpath(path).replace("\\", "/")
    return normal[1:] if normal.startswith("//") else normal
