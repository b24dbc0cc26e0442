"""Quantities as the owner reads them, one rule for the CLI and the console."""

from __future__ import annotations


def human_bytes(size: int | None) -> str:
    """``size`` in B, KiB, MiB or GiB (``?`` when unknown)."""
    if size is None:
        return "?"
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
