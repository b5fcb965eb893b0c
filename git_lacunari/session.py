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
    from .board.notices import Notice
    from .edge import Result
    from .errors import Refused


class Session:
    def __init__(
        self, as_name: str | None, *, defer_touch: bool = False, repo: Repo | None = None
    ) -> None:
        self.as_name = as_name
        self._repo: Repo | None = repo  # given: already found (the edit hook finds its own)
        # The command line touches after the command, so that an invalid
        # input (exit 2) writes nothing at all, not even a heartbeat.
        self.defer_touch = defer_touch
        self._touch_due: list[Board] = []
        self._touched: list[Board] = []  # touched already: kept only to be closed
        self._boards: dict[tuple[bool, str | None, str | None, str | None, bool], Board] = {}

    @property
    def repo(self) -> Repo:
        if self._repo is None:
            self._repo = discover()
        return self._repo

    def choose_board(self, url: str | None, given: str | None) -> str | None:
        """The board ``init`` records: --board, else the one recorded for this
        URL, else (for a --url whose own search_path does not choose) the one
        the committed ``.lacconfig`` names, else one named after the root
        commit, which clones share and unrelated repositories do not
        (:func:`~git_lacunari.front_door.default_board`). None: not a
        PostgreSQL board, or the URL chooses its schema."""
        from .errors import InvalidInput
        from .front_door import default_board
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
        if repo.root_commit() is None:
            raise InvalidInput(
                "this repository has no commit yet: name its board with --board NAME"
            )
        return default_board(repo, ask_remote=True)[0]  # a shallow clone asks its remote

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
        """The board, opened as this session's agent, once per session: a
        command opens one connection however many times it asks, and
        :meth:`close` (at the edge, when the command returns) closes it.
        ``timeout`` (a duration) bounds its waits instead of ``lac.timeout``
        (the hooks' shorter bound; ``LAC_TIMEOUT`` beats both). ``act=False``
        is for administration (init, boards, team): on a team board it opens
        as the configured identity, unchecked, since it acts on no claim."""
        key = (create, url, name, timeout, act)
        board = self._boards.get(key)
        if board is None:
            board = self._boards[key] = self.new_board(
                create=create, url=url, touch=touch, name=name, timeout=timeout, act=act
            )
        return board

    def new_board(
        self,
        *,
        create: bool = False,
        url: str | None = None,
        touch: bool = True,
        name: str | None = None,
        timeout: str | None = None,
        act: bool = True,
    ) -> Board:
        """A board on a connection of its own, for work that needs one: a
        thread (the page's requests, a drainer's heartbeat), or a reconnect.
        The caller closes it; one opened with ``touch`` (the drainer's) is
        also closed by :meth:`close`."""
        from .front_door import open_board

        repo = self.repo
        board = open_board(
            repo,
            identity=self.identity,  # an invalid name is exit 2 before a board is made
            url=url,
            board=name,
            timeout=timeout,
            create=create,
            act=act,
        )
        if touch and self.defer_touch:
            self._touch_due.append(board)
        elif touch:
            board.touch()  # every command an agent runs is a sign of life
            self._touched.append(board)
        return board

    def touch_deferred(self) -> None:
        """The sign of life of a command that has run (``defer_touch``): once,
        on the first board it opened; a board too busy for it just misses one."""
        from .errors import LacError

        due = self._touch_due[:1]
        self._touched += self._touch_due  # the rest miss it, as before; all are closed
        self._touch_due = []
        for board in due:
            with contextlib.suppress(LacError):
                board.touch()

    def tell(self, result: Result) -> Result:
        """The next command tells (README, "Honest leases"): what was taken
        from us here since we last looked (a claim force-released or expired,
        a lock force-unlocked), said once per working tree by whichever
        command runs first, on stderr and under ``"notices"`` in its JSON.
        Only a command that opened a board as an agent asks (one query); a
        verb that told them itself (``status``, ``heartbeat``, ``done``) is
        not asked again."""
        if result.shown:
            return result
        told = self._fresh()
        if not told:
            return result
        import dataclasses

        data = dict(result.data)
        data["notices"] = [*data.get("notices", []), *(n.to_json() for n in told)]
        lines = [f"git lac: {n.said()}" for n in told]
        return dataclasses.replace(result, data=data, warnings=[*lines, *result.warnings])

    def tell_refused(self, refusal: Refused) -> None:
        """:meth:`tell` for a command the board refused: the notices go under
        its message (``details``) and its JSON (``notices``)."""
        told = self._fresh()
        if told:
            refusal.details = (*refusal.details, *(f"git lac: {n.said()}" for n in told))
            refusal.notices = [*refusal.notices, *(n.to_json() for n in told)]

    def _fresh(self) -> list[Notice]:
        boards = self._touched  # opened as this session's agent, and touched
        if not boards or boards[0].notices_asked:
            return []
        from .liveness import tell

        return tell(boards[0], self.repo)

    def close(self) -> None:
        """Close every board this session opened for itself (idempotent)."""
        opened = [*self._boards.values(), *self._touch_due, *self._touched]
        self._boards, self._touch_due, self._touched = {}, [], []
        closed: set[int] = set()
        for board in opened:
            if id(board) not in closed:
                closed.add(id(board))
                board.store.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
