"""The live page's snapshot: the board's read model, now in
:mod:`git_lacunari.board.snapshot` (kept here so the page's imports stand)."""

from __future__ import annotations

from ..board.snapshot import (
    DONE_WINDOW_S,
    EVENTS_SHOWN,
    FINISHED_SHOWN,
    MAX_BLOCK_CHECKS,
    snapshot,
)

__all__ = ["DONE_WINDOW_S", "EVENTS_SHOWN", "FINISHED_SHOWN", "MAX_BLOCK_CHECKS", "snapshot"]
