"""The search's table printed without rich's second cropping pass (issue 31: a cost at every
search) is byte for byte the table printed with it, at every width, piped or on a terminal."""

from __future__ import annotations

import io
from typing import Any

import pytest

from agents_memory.cli.search import _print_table, hits_table
from agents_memory.cli.tables import Terminal, table_console

WORDS = [
    "the",
    "staging",
    "port",
    "moved",
    "to",
    "5433",
    "after",
    "the",
    "migration;",
    "agents_memory/store/search/memories.py",
    "漢字のテスト",
    "ＣＪＫ",
    "😀",
    "Read",
    "src/app/main.py:120",
    "redaction",
    "threshold",
]


class _Stream(io.StringIO):
    def __init__(self, *, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _result(n: int) -> dict[str, Any]:
    hits = [
        {
            "id": 10**i + i,
            "message": " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(3 + 11 * i)),
            "message_at": "2026-11-05T10:00:00+00:00",
            "agent_platform": "codex-cli" if i % 2 else "claude-code",
            "role": "assistant" if i % 3 else "user",
            "p_tag_name": ["quokka-api-service-long", None, "p"][i % 3],
            "is_pinned": i == 2,
            "actions": [{"line": "Edit agents_memory/cli/search.py"}] if i % 4 == 1 else [],
            "why": {"fts_rank": i + 1, "similarity": 0.41, "score": 0.03},
            "confidence": 0.5,
        }
        for i in range(n)
    ]
    return {"results": hits, "used": "hybrid", "top_similarity": 0.4, "sessions": []}


def _terminal(width: int, tty: bool) -> Terminal:
    environ = {"TERM": "xterm-256color"} if tty else {"COLUMNS": str(width)}
    return Terminal(_Stream(tty=tty), _Stream(tty=False), environ, (width, 40))


@pytest.mark.parametrize("tty", [False, True])
@pytest.mark.parametrize("why", [False, True])
def test_the_table_is_the_cropped_table_at_every_width(tty: bool, why: bool) -> None:
    for width in [*range(1, 41), 60, 80, 132, 200]:
        result = _result(8)
        printed = _terminal(width, tty)
        _print_table(result, printed, why=why)
        cropped = _terminal(width, tty)
        console = table_console(cropped)
        summary = "8 result(s) by hybrid" + (", top similarity 0.400" if why else "")
        console.print(summary, highlight=False, markup=False)
        console.print(hits_table(result["results"], "hybrid", why=why))  # cropped: the default
        assert printed.out.getvalue() == cropped.out.getvalue(), width  # type: ignore[attr-defined]
