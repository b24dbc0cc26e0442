from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agents_memory.config import Settings
from agents_memory.recall.state import ServerState, open_state


@pytest.fixture
def server_settings(make_settings: Any, db_url: str) -> Settings:
    settings: Settings = make_settings(database_url=db_url, embedding_backend="none")
    return settings


@pytest.fixture
def state(server_settings: Settings) -> Iterator[ServerState]:
    opened = open_state(server_settings)
    yield opened
    opened.close()
