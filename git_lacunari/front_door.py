"""`open_board()`: the one way a board is opened.

Every door goes through it: the command line and the hooks (through
:class:`~git_lacunari.session.Session`), the server's pre-receive guard, the
page, the drainer and the keeper, and any program that uses the board as a
library (``git_lacunari.open_board``). It resolves the board as
``git lac`` does: ``lac.url`` (else the embedded SQLite file in the git
common dir), ``lac.board``, ``lac.timeout``, and on a team board the
session's role as the agent.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .board import Board
    from .identity import Identity
    from .repo import Repo


def open_board(
    where: Repo | str | os.PathLike[str] | None = None,
    *,
    as_name: str | None = None,
    identity: Identity | None = None,
    url: str | None = None,
    board: str | None = None,
    timeout: str | None = None,
    create: bool = False,
    act: bool = True,
    from_config: bool = True,
) -> Board:
    """The board of the repository at ``where`` (a path, default the current
    directory, or a discovered :class:`~git_lacunari.repo.Repo`), opened as
    ``identity`` (default: resolved like the command line, ``as_name`` first).

    ``url``, ``board`` (a PostgreSQL board's name) and ``timeout`` (a
    duration) default to ``lac.url``, ``lac.board`` and ``lac.timeout``
    unless ``from_config`` is false (the server's guard, which names its own).
    ``create`` makes or migrates it (``git lac init``). ``act=False`` is for
    administration: on a team board it opens as the given identity,
    unchecked, since it acts on no claim. The caller closes it
    (``board.store.close()``).
    """
    from .board import Board
    from .identity import resolve
    from .repo import Repo, discover
    from .store import open_store

    repo = where if isinstance(where, Repo) else discover(os.fspath(where) if where else None)
    if identity is None:
        identity = resolve(repo, as_name)  # an invalid name is exit 2 before a board is made
    if from_config:
        url = url or repo.get("lac.url")
        timeout = timeout or repo.get("lac.timeout")
        board = board or repo.get("lac.board")
    store = open_store(url, repo.common_dir, create=create, timeout=timeout, board=board)
    if act and store.dialect == "postgres":  # team mode: the agent is the session's role
        from .team import acting

        try:
            identity = acting(store, identity)
        except BaseException:
            store.close()
            raise
    return Board(
        store,
        identity,
        prefix=repo.prefix,
        ignorecase=repo.ignorecase,
        blob_ids=repo.blob_ids,
    )
