"""Prompts that ask nothing of memory: acknowledgements in several languages, a client's
commands, bare punctuation; and prompts that do ask (a path, an error code, a question)."""

from __future__ import annotations

import pytest

from agents_memory.recall.prompt_acks import is_acknowledgement


@pytest.mark.parametrize(
    "prompt",
    [
        "ok",
        "Ok, thanks!",
        "  yes please  ",
        "go ahead",
        "lgtm",
        "ok commit this",
        "/clear",
        "/compact keep the failing test in mind",
        "/model",
        "2",
        "👍",
        "...",
        "oui, vas-y",
        "merci !",
        "danke, weiter",
        "sí, continúa",
        "да, продолжай",
        "继续",
        "好的",
        "はい",
        "네",
        "what about it?",
    ],
)
def test_an_acknowledgement_or_a_command_asks_nothing(prompt: str) -> None:
    assert is_acknowledgement(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "/home/dev/src/api/main.py fails on import",
        "fix E4821",
        "ok, now why did we pick redis over memcached?",
        "continue with the migration for the users table",
        "yes, and add the staging port to the docs",
        "数据库连接池的大小是多少？",
        "почему упал деплой в пятницу?",
        "ok " * 30 + "then explain the retry loop in the tailer",
    ],
)
def test_a_prompt_with_content_is_searched(prompt: str) -> None:
    assert not is_acknowledgement(prompt)
