"""Build a console for the settings' pool: the MCP server's state (pool, owner, embedder), and
where the live feed listens."""

from __future__ import annotations

from pathlib import Path

from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.console.context import Console
from agents_memory.recall.state import open_state
from agents_memory.store.entry import locate


def open_console(settings: Settings, catalog: Catalog, pid_file: Path) -> Console:
    """A console on ``settings``' pool; close it with ``console.state.close()``."""
    state = open_state(settings)
    state.cwd = None  # a pinned fact from the console belongs to no working directory
    return Console(
        state=state,
        catalog=catalog,
        pid_file=pid_file,
        home=catalog.home,
        conninfo=locate(settings).conninfo,
    )
