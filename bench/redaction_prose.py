"""Secrets said in sentences: recall on a prose set, false positives on this project's own text.

Part of ``python -m bench.redaction`` (it prints these rows beside the catalogue figures):

* **prose recall**: each secret of ``bench/redaction_corpus/prose.txt`` ("my password is …",
  "use token … for the bot", "пароль от базы — …", "비밀번호는 …입니다"), per language;
* **prose negatives**: that file's sentences without a secret ("the password field is
  required", "key is None") that come back unchanged;
* **false positives on the project's own text**: changed lines per 10,000 of this repository's
  source and docs (less the redaction rules, their tests and this bench's corpora, which hold
  secrets on purpose), its transcript fixtures and ``/work/shared/fixtures``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROSE = Path(__file__).with_name("redaction_corpus") / "prose.txt"
SHARED_FIXTURES = Path("/work/shared/fixtures")
_SECRET = re.compile(r"⟦(.+?)⟧")
# Files that hold secrets on purpose: the rules, their tests, the corpora.
_ON_PURPOSE = re.compile(r"redact|secret|entropy|scrub|/admission/|redaction_corpus")
_TEXT_SUFFIXES = frozenset(
    [
        ".py",
        ".md",
        ".txt",
        ".toml",
        ".html",
        ".css",
        ".js",
        ".json",
        ".jsonl",
        ".sql",
        ".service",
        ".cfg",
    ]
)

Redact = Callable[[str], str]


def load_prose(
    path: Path = PROSE,
) -> tuple[list[tuple[str, str, list[str]]], list[tuple[str, str]]]:
    """``(lang, text, secrets)`` of the positive lines and ``(lang, text)`` of the negative ones."""
    positives: list[tuple[str, str, list[str]]] = []
    negatives: list[tuple[str, str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("+ "):
            lang, text = line[2:].split(" ", 1)
            positives.append((lang, _SECRET.sub(r"\1", text), _SECRET.findall(text)))
        elif line.startswith("- "):
            lang, text = line[2:].split(" ", 1)
            negatives.append((lang, text))
    return positives, negatives


def prose_recall(
    redact: Redact, positives: list[tuple[str, str, list[str]]]
) -> dict[str, tuple[int, int]]:
    """language -> (secrets redacted, secrets) over the positive sentences."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for lang, text, secrets in positives:
        out = redact(text)
        for secret in secrets:
            tally[lang][0] += secret not in out
            tally[lang][1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(tally.items())}


def prose_negatives(redact: Redact, negatives: list[tuple[str, str]]) -> tuple[int, int, list[str]]:
    """(unchanged, sentences, the changed ones)."""
    changed = [text for _, text in negatives if redact(text) != text]
    return len(negatives) - len(changed), len(negatives), changed


def changed_lines(redact: Redact, chunks: list[str]) -> set[tuple[int, int]]:
    """``(chunk, line)`` of every line ``redact`` changes (to tell which rules changed it)."""
    changed: set[tuple[int, int]] = set()
    for i, chunk in enumerate(chunks):
        out = redact(chunk)
        if out == chunk:
            continue
        before, after = chunk.split("\n"), out.split("\n")
        if len(before) != len(after):
            changed |= {(i, j) for j in range(len(before))}
            continue
        changed |= {(i, j) for j, (a, b) in enumerate(zip(before, after, strict=True)) if a != b}
    return changed


def own_text() -> list[str]:
    """Chunks of 40 lines of the repository's own source and docs, its transcript fixtures and
    the shared fixtures (never the bench data)."""
    paths = [
        p
        for p in sorted(ROOT.rglob("*"))
        if p.is_file()
        and p.suffix in _TEXT_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(ROOT).parts)
        and not _ON_PURPOSE.search(p.relative_to(ROOT).as_posix())
    ]
    if SHARED_FIXTURES.is_dir():
        paths += sorted(p for p in SHARED_FIXTURES.rglob("*") if p.is_file())
    chunks: list[str] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = text.splitlines()
        chunks += ["\n".join(lines[i : i + 40]) for i in range(0, len(lines), 40)]
    return chunks
