"""Moved to :mod:`git_lacunari.views.terminal` (issue 20): kept so that modules
being split in parallel (reconcile, guard) still import; remove once none does."""

from __future__ import annotations

from .views.terminal import BIDI_CONTROLS, colour_wanted, on_terminal, paint, shown, table, when

__all__ = ["BIDI_CONTROLS", "colour_wanted", "on_terminal", "paint", "shown", "table", "when"]
