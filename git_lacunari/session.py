"""Where a command runs: the repository, who we are, the board.

Kept free of click so the hooks' fast path (:mod:`git_lacunari.entry`) can
use it without paying for the command-line framework.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from .identity import Identity
from .identity import resolve as resolve_identity
from .repo import Repo, discover

if TYPE_CHECKING:  # imported when a board is opened: a reconcile with nothing to do needs none
    from .board import Board


class Session:
    def __init__(self, as_name: str | None, *, defer_touch: bool = False) -> None:
        self.as_name = as_name
        self._repo: Repo | None = None
        # The command line touches after the command, so that an invalid
        # input (exit 2) writes nothing at all, not even a heartbeat.
        self.defer_touch = defer_touch
        self._touch_due: list[Board] = []

    @property
    def repo(self) -> Repo:
        if self._repo is None:
            self._repo = discover()
        return self._repo

    @property
    def identity(self) -> Identity:
        return resolve_identity(self.repo, self.as_name)

    def board(self, *, create: bool = False, url: str | None = None, touch: bool = True) -> Board:
        from .board import Board
        from .store import open_store

        repo = self.repo
        store = open_store(
            url or repo.get("lac.url"),
            repo.common_dir,
            create=create,
            timeout=repo.get("lac.timeout"),
        )
        board = Board(
            store,
            self.identity,
            prefix=repo.prefix,
            ignorecase=repo.ignorecase,
            blob_ids=repo.blob_ids,
        )
        if touch and self.defer_touch:
            self._touch_due.append(board)
        elif touch:
            board.touch()  # every command an agent runs is a sign of life
        return board

    def touch_deferred(self) -> None:
        """The sign of life of a command that has run (``defer_touch``): once,
        on the first board it opened; a board too busy for it just misses one."""
        from .errors import LacError

        due, self._touch_due = self._touch_due[:1], []
        for board in due:
            with contextlib.suppress(LacError):
                board.touch()
