"""Durations as users type them: ``90``, ``90s``, ``15m``, ``2h``, ``1h30m``, ``1d``."""

from __future__ import annotations

import re

from .errors import BadDuration

UNIT_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")


def parse_duration(text: str) -> float:
    """Seconds in ``text``; a bare number is seconds. Zero, negative or garbage is refused."""
    cleaned = text.strip().lower()
    seconds: float | None = None
    if re.fullmatch(r"\d+(?:\.\d+)?", cleaned):
        seconds = float(cleaned)
    elif cleaned and PART.sub("", cleaned) == "":
        seconds = sum(float(n) * UNIT_SECONDS[u] for n, u in PART.findall(cleaned))
    if seconds is None or seconds <= 0:
        raise BadDuration(
            f"invalid duration {text!r}: "
            "give a positive number of seconds or e.g. 90s, 15m, 2h, 1h30m"
        )
    return seconds


def format_duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s"
    if seconds < 86400:
        return f"{seconds // 3600:.0f}h{(seconds % 3600) // 60:02.0f}m"
    return f"{seconds // 86400:.0f}d{(seconds % 86400) // 3600:02.0f}h"
