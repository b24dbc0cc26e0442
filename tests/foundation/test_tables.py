"""The one width rule of every table (``cli/tables.py``)."""

from __future__ import annotations

import pytest

from agents_memory.cli.tables import PIPED_WIDTH, table_width


def test_a_terminal_gets_its_own_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    assert table_width(is_terminal=True, terminal_width=132) == 132


@pytest.mark.parametrize(("columns", "width"), [("100", 100), (None, PIPED_WIDTH), ("x", 80)])
def test_a_pipe_gets_columns_or_80(
    monkeypatch: pytest.MonkeyPatch, columns: str | None, width: int
) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert table_width(is_terminal=False, terminal_width=132) == width
