"""Durations as users type them: ``90``, ``90s``, ``15m``, ``2h``, ``1h30m``, ``1d``."""

from __future__ import annotations

import math
import re

from .errors import BadDuration

UNIT_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
# ASCII digits only: Python's \d and float() also take Arabic-Indic and other
# digits, which read as another number to people who do not read them.
PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)([smhd])")
# The longest duration anything on a board takes: ten years. It keeps every
# duration finite (a thousand digits would be inf, and inf - inf is nan) and
# inside what both backends store and PostgreSQL's timeouts accept.
MAX_DURATION_S = 10 * 365 * 86400.0


def parse_duration(text: str, *, at_most: float = MAX_DURATION_S) -> float:
    """Seconds in ``text``; a bare number is seconds. Zero, negative, garbage
    or more than ``at_most`` is refused."""
    cleaned = text.strip().lower()
    seconds: float | None = None
    if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", cleaned):
        seconds = float(cleaned)
    elif cleaned and PART.sub("", cleaned) == "":
        seconds = sum(float(n) * UNIT_SECONDS[u] for n, u in PART.findall(cleaned))
    return _bounded(seconds, repr(text[:40]), at_most, TYPED)


def duration_value(value: object, *, at_most: float = MAX_DURATION_S) -> float:
    """Seconds in a duration given as a JSON number (the MCP tools' ``wait``
    and ``timeout``), held to the rule :func:`parse_duration` holds typed text
    to. A bool, a string, NaN or an infinity is refused, as is anything
    :func:`parse_duration` refuses."""
    # bool is an int to Python, and a JSON true is no number of seconds.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _bounded(None, _as_json(value), at_most, NUMBER)
    try:
        seconds = float(value)
    except OverflowError:  # an int past any float: more than at_most
        seconds = math.inf
    return _bounded(seconds, _as_json(value), at_most, NUMBER)


TYPED = "give a positive number of seconds or e.g. 90s, 15m, 2h, 1h30m"
NUMBER = "give a positive number of seconds"


def _bounded(seconds: float | None, shown: str, at_most: float, hint: str) -> float:
    """The one rule for a duration: a positive, finite number of seconds, at
    most ``at_most``. ``shown`` is how the caller gave it, for the message."""
    if seconds is None or not seconds > 0:  # "not >" refuses nan too
        raise BadDuration(f"invalid duration {shown}: {hint}")
    if not math.isfinite(seconds) or seconds > at_most:
        raise BadDuration(f"invalid duration {shown}: at most {format_duration(at_most)}")
    return seconds


def format_duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "forever" if seconds > 0 else "-"
    # Round once, to the unit shown last, then split: rounding each part on
    # its own showed 119.6 s as "1m60s" and 3599.6 s as "59m60s".
    whole = round(max(0.0, seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    minutes = round(max(0.0, seconds) / 60)
    if minutes < 24 * 60:
        return f"{minutes // 60}h{minutes % 60:02d}m"
    hours = round(max(0.0, seconds) / 3600)
    return f"{hours // 24}d{hours % 24:02d}h"


def _as_json(value: object) -> str:
    """``value`` as the JSON that carried it (``true``, ``NaN``), for a message."""
    import json

    try:
        return json.dumps(value)[:40]
    except (TypeError, ValueError):
        return repr(value)[:40]
