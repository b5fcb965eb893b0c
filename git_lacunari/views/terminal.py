"""Terminal rendering for people: aligned tables, colour, times.

Colour only when stdout is a terminal and ``NO_COLOR`` is unset
(https://no-color.org); a table's last column is cut to the terminal's
width only on a terminal, so pipes and files get whole lines. Times are
relative and absolute together (``5m ago, 12:01:05``), both on the board's
clock. No click here: a plain leaf the commands render with.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Sequence

from ..durations import format_duration
from ..text import BIDI_CONTROLS, PAINT_CODES, shown

__all__ = ["BIDI_CONTROLS", "colour_wanted", "on_terminal", "paint", "shown", "table", "when"]

COLOURS = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "dim": "2", "bold": "1"}
# The edge escapes every other ESC it is handed (text.shown_painted).
assert set(COLOURS.values()) | {"0"} <= PAINT_CODES


def on_terminal() -> bool:
    return sys.stdout.isatty()


def colour_wanted() -> bool:
    return on_terminal() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def paint(text: str, colour: str) -> str:
    return f"\033[{COLOURS[colour]}m{text}\033[0m" if colour_wanted() and text else text


def when(then: float | None, now: float) -> str:
    """``5m ago, 2026-12-03 12:01:05`` (local time); ``-`` for never."""
    if then is None:
        return "-"
    absolute = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(then))
    return f"{format_duration(now - then)} ago, {absolute}"


def table(rows: Sequence[Sequence[str]], headers: Sequence[str] | None = None) -> str:
    """Columns padded to their widest cell (two spaces between); on a
    terminal, lines longer than it are cut with an ellipsis."""
    every = [list(headers)] if headers else []
    every += [list(r) for r in rows]
    if not every:
        return ""
    widths = [max(len(r[i]) for r in every if i < len(r)) for i in range(max(map(len, every)))]
    width = shutil.get_terminal_size().columns if on_terminal() else 0
    lines = []
    for n, row in enumerate(every):
        cells = [c.ljust(widths[i]) if i < len(row) - 1 else c for i, c in enumerate(row)]
        line = "  ".join(cells).rstrip()
        if width and len(line) > width:
            line = line[: max(width - 1, 1)] + "…"
        lines.append(paint(line, "bold") if headers and n == 0 else line)
    return "\n".join(lines)
