"""The capture daemon's settings, read again only when what they are read from changed
(issue 31: a fresh read cost ~8 ms at every search): always equal to a fresh read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents_memory.config import SettingsCache, load_settings


@pytest.fixture
def dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("SHORT_TERM_DAYS", "DEVICE_NAME", "SEARCH_RECENCY_HALFLIFE_DAYS"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / ".env"
    monkeypatch.setenv("MEMORY_CONFIG_PATH", str(path))
    return path


def _write(path: Path, text: str, mtime_ns: int) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_a_change_to_the_settings_file_is_seen(dotenv: Path) -> None:
    cache = SettingsCache(racy_ns=0)  # every file old enough to be trusted
    assert cache.load() == load_settings()  # no file yet
    _write(dotenv, "SHORT_TERM_DAYS=7\n", 1_000_000_000_000)
    first = cache.load()
    assert first.short_term_days == 7 and first == load_settings()
    assert cache.load() is first  # unchanged: not read again
    _write(dotenv, "SHORT_TERM_DAYS=9\n", 1_500_000_000_000)  # the same size
    assert cache.load().short_term_days == 9
    _write(dotenv, "SHORT_TERM_DAYS=12\n", 2_000_000_000_000)
    assert cache.load().short_term_days == 12 == load_settings().short_term_days
    dotenv.unlink()
    assert cache.load().short_term_days == load_settings().short_term_days == 3


def test_a_file_changed_within_the_clocks_tick_is_read_every_time(dotenv: Path) -> None:
    """Two writes in one tick of the file system's clock can leave the same size and times:
    a file changed that recently is not trusted to tell."""
    cache = SettingsCache()
    dotenv.write_text("DEVICE_NAME=one\n", encoding="utf-8")
    before = dotenv.stat()
    assert cache.load().device_name == "one"
    dotenv.write_text("DEVICE_NAME=two\n", encoding="utf-8")
    os.utime(dotenv, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cache.load().device_name == "two"


def test_a_change_to_the_environment_is_seen(dotenv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = SettingsCache(racy_ns=0)
    first = cache.load()
    assert cache.load() is first
    monkeypatch.setenv("SEARCH_RECENCY_HALFLIFE_DAYS", "3")
    assert cache.load().search_recency_halflife_days == 3
    monkeypatch.setenv("MEMORY_CONFIG_PATH", str(dotenv.with_name("other.env")))
    dotenv.with_name("other.env").write_text("DEVICE_NAME=elsewhere\n", encoding="utf-8")
    assert cache.load().device_name == "elsewhere"
    assert cache.load() == load_settings()
