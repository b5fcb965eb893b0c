"""The domain verbs of the board, written once over the store protocol.

Every rule that decides who may do what lives in SQL of its dialect
(``lac_claimable`` and its SQLite twin) and, in Python, in
:mod:`git_lacunari.rules`: the claiming statement is the only way a task
becomes claimed, and :meth:`Board._grant` (:mod:`.grants`) is the only way a
lock is granted. Refusals are raised as the typed reasons of
:mod:`git_lacunari.errors`; times come from the board's clock (:meth:`Board.now`).

:class:`Board` is the table of contents; each part is a small module:

=============  ==============================================================
``core``       the store, the identity acting, the clock, the event record,
               the lookups every part makes; :class:`Page`
``validate``   what the board accepts, checked before any SQL
``grants``     the conflicts of wanted locks with held ones; the one grant
``resources``  named resource pools; what a task needs, what a claim holds
``liveness``   heartbeats, staleness, the sweeps of stale claims and locks
``tasks``      add, show, list, log, edit, cancel, reopen
``claims``     claim by id or next, release, done, fail, ready; :class:`Claim`
``locks``      lock and unlock without a claim, list, check, the guards' asks
``snapshot``   the live page's read model (one transaction, plain data)
``edit``       what the agent-harness edit hook asks
``landing``    a claim's branch and tip; landing claims and their settling
``land_queue`` a landing line the lander gave back to its holder (``returned``)
=============  ==============================================================
"""

from __future__ import annotations

from typing import Any

from .claims import MAX_NEXT_SKIPS, Claim
from .core import COUNT_CAP, BlobLookup, Page
from .edit import EditTime, EditView
from .land_queue import LandQueue
from .landing import DEFAULT_LANDING_PERIOD_S
from .liveness import SWEEP_EVERY_S
from .validate import (
    MAX_BODY,
    MAX_TASK_ID,
    MAX_TITLE,
    PRIORITY_RANGE,
    validate_body,
    validate_lane,
    validate_limit,
    validate_priority,
    validate_state,
    validate_task_id,
    validate_title,
)

__all__ = [
    "EditTime",
    "EditView",
    "COUNT_CAP",
    "DEFAULT_LANDING_PERIOD_S",
    "MAX_BODY",
    "MAX_NEXT_SKIPS",
    "MAX_TASK_ID",
    "MAX_TITLE",
    "PRIORITY_RANGE",
    "SWEEP_EVERY_S",
    "BlobLookup",
    "Board",
    "Claim",
    "Page",
    "validate_body",
    "validate_lane",
    "validate_limit",
    "validate_priority",
    "validate_state",
    "validate_task_id",
    "validate_title",
]


class Board(LandQueue, EditTime):
    """One agent's view of one board: ``Board(store, identity, prefix=…,
    ignorecase=…, blob_ids=…)`` (:class:`.core.BoardCore`). Its verbs are
    those of its parts, listed in this module's docstring."""

    def snapshot(self, *, actions: bool = False) -> dict[str, Any]:
        """The live page's whole data (:func:`.snapshot.snapshot`)."""
        from .snapshot import snapshot

        return snapshot(self, actions=actions)
