"""One invalid UTF-8 byte inside a JSON string costs one character, not the turn: every
registered adapter keeps the record with the byte replaced by U+FFFD and says it repaired it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agents_memory.adapters import get_adapter, names
from agents_memory.adapters.base import Adapter, Turn
from tests.adapters.test_contract import parse_whole, transcripts

WORD = re.compile(r"[A-Za-z]{5,}")


def _rarest_word(turns: list[Turn], data: bytes) -> str | None:
    """The word of a turn's text found least often in ``data`` (a client may write a turn's
    text twice, in two records; never as a key)."""
    words = {w for turn in turns for w in WORD.findall(turn.text) if f'{w}":'.encode() not in data}
    return min(sorted(words), key=lambda w: data.count(w.encode()), default=None)


def _cases(adapter: Adapter) -> list[tuple[Path, str, bytes, int]]:
    """Each fixture of ``adapter`` with the first byte of a word of a turn's text replaced by
    ``\\xff`` wherever the word is, and how many records that spoils at most."""
    found = []
    for path in transcripts(adapter.name):
        data = path.read_bytes()
        word = _rarest_word(parse_whole(adapter, path, data), data)
        if word is None:
            continue
        spoiled = data.replace(word.encode(), b"\xff" + word[1:].encode())
        lines = sum(1 for line in spoiled.splitlines() if b"\xff" in line)
        found.append((path, word, spoiled, 1 if path.suffix == ".json" else lines))
    return found


@pytest.mark.parametrize("name", names())
def test_a_turn_with_one_invalid_utf8_byte_is_kept_with_a_replacement_character(
    name: str, tmp_path: Path
) -> None:
    adapter = get_adapter(name)
    cases = _cases(adapter)
    assert cases, f"no fixture of {name} has a turn with a word in it"
    for path, word, spoiled, lines in cases:
        clean = parse_whole(adapter, path, path.read_bytes())
        target = path
        if adapter.read_mode(path) == "database":  # the adapter reads the file, not ``data``
            target = tmp_path / path.name
            target.write_bytes(spoiled)
        result = adapter.parse(target, spoiled, offset=0, state={}, final=True)

        assert len(result.turns) == len(clean), path
        assert any("\ufffd" + word[1:] in turn.text for turn in result.turns), path
        repaired = [issue for issue in result.issues if issue.repaired]
        # Lines an adapter skips undecoded (by their kind) are not counted.
        assert 1 <= len(repaired) <= lines, (path, result.issues)
        assert "invalid UTF-8" in repaired[0].reason
        skipped = [issue for issue in result.issues if not issue.repaired]
        original = path if adapter.read_mode(path) != "database" else None
        if original is not None:
            assert skipped == adapter.parse(path, path.read_bytes(), offset=0, state={}).issues
        else:
            assert skipped == []
