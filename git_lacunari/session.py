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

    def choose_board(self, url: str | None, given: str | None) -> str | None:
        """The board ``init`` records: --board, else the one recorded for this
        URL, else (for a --url whose own search_path does not choose) one named
        after the root commit, which clones share and unrelated repositories
        do not. None: not a PostgreSQL board, or the URL chooses its schema."""
        from .errors import InvalidInput
        from .store import is_postgres_url, validate_board

        repo = self.repo
        target = url or repo.get("lac.url")
        if given is not None:
            if not (target and is_postgres_url(target)):
                raise InvalidInput("--board chooses a board of a PostgreSQL database: add --url")
            return validate_board(given)
        if url is None or not is_postgres_url(url):
            return None
        from .store.postgres import url_sets_schema

        if url_sets_schema(url):
            return None
        if repo.get("lac.board") and repo.get("lac.url") == url:
            return repo.get("lac.board")
        root = repo.root_commit()
        if root is None:
            raise InvalidInput(
                "this repository has no commit yet: name its board with --board NAME"
            )
        return "lac_" + root[:12]

    @property
    def identity(self) -> Identity:
        return resolve_identity(self.repo, self.as_name)

    def board(
        self,
        *,
        create: bool = False,
        url: str | None = None,
        touch: bool = True,
        name: str | None = None,
        timeout: str | None = None,
        act: bool = True,
    ) -> Board:
        """The board, opened as this session's agent. ``timeout`` (a duration)
        bounds its waits instead of ``lac.timeout`` (the hooks' shorter bound;
        ``LAC_TIMEOUT`` beats both). ``act=False`` is for administration (init,
        boards, team): on a team board it opens as the configured identity,
        unchecked, since it acts on no claim."""
        from .board import Board
        from .store import open_store

        repo = self.repo
        identity = self.identity  # an invalid name is exit 2 before a board is made
        store = open_store(
            url or repo.get("lac.url"),
            repo.common_dir,
            create=create,
            timeout=timeout or repo.get("lac.timeout"),
            board=name or repo.get("lac.board"),
        )
        if act and store.dialect == "postgres":  # team mode: the agent is the session's role
            from .team import acting

            try:
                identity = acting(store, identity)
            except BaseException:
                store.close()
                raise
        board = Board(
            store,
            identity,
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
