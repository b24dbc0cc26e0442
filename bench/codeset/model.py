"""The coding set's sessions and turns, as the generator makes them and the writers write them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class Turn:
    key: str
    role: str
    text: str
    ts: datetime


@dataclass
class Session:
    project: str
    platform: str
    sid: str
    cwd: str
    turns: list[Turn]
