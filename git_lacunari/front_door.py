"""`open_board()`: the one way a board is opened; `resolve_board()`: the one
rule that says which board.

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
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .board import Board
    from .identity import Identity
    from .repo import Repo

SHARED_FILE = ".lacconfig"


@dataclass(frozen=True)
class BoardChoice:
    """Which board a door uses, and why (``git lac doctor`` prints it)."""

    url: str | None  # lac.url; None: the embedded SQLite file in the common dir
    board: str | None  # a PostgreSQL board (a schema); None: SQLite, or the URL's search_path
    source: str  # where the choice came from, as people read it

    @property
    def where(self) -> str:
        from .store import redact

        if self.board:
            return f"board {self.board} on {redact(self.url or '')}"
        return redact(self.url) if self.url else "the embedded board"


def board_rev(repo: Repo) -> str:
    """Where a repository's committed word on its board is read: ``HEAD``; on
    a server its destination branch (:func:`~git_lacunari.repo.server_root`),
    which an unborn HEAD beside a ``main`` with commits does not hide."""
    from .repo import server_root

    if not repo.is_server:
        return "HEAD"
    root = server_root(repo)
    return root.ref if root is not None and not root.is_head else "HEAD"


def board_commits(repo: Repo) -> Iterator[str]:
    """Where a clone reads the ``.lacconfig`` that names its PostgreSQL board
    when nothing local names one, in order: HEAD, then the destination.

    DESIGN. Every worktree and every branch of one clone must find the
    clone's board, whatever commit it has checked out. HEAD speaks first (a
    file committed there is this checkout's word, damaged or not); where
    HEAD has no ``.lacconfig`` (a worktree at a commit older than it, an
    orphan branch, a repository with no commit yet), the destination does:
    ``lac.target``, else the remote's default branch (``origin/HEAD``,
    ``origin/main``, ``origin/master``), else the local ``main`` or
    ``master`` (:func:`~git_lacunari.landing.destination`), which is the
    server's HEAD as last fetched; and the root commit named after is the
    last one's (the destination's, else HEAD's). A server (a bare
    repository) reads its destination branch alone. Nothing is cached, so nothing goes
    stale: the answer moves exactly when HEAD or the destination does.
    Lazy: the destination is looked up only when HEAD has no file.
    """
    if repo.is_server:  # a server: its destination branch alone (:func:`board_rev`)
        yield board_rev(repo)
        return
    yield "HEAD"
    from .errors import BoardUnknown, InvalidInput
    from .landing import destination

    try:
        target = destination(repo)
    except InvalidInput as exc:  # a lac.target naming no commit: said, never guessed around
        raise BoardUnknown(f"which board is not known here: {exc.message}") from None
    if target and target != "HEAD":
        yield target


def default_board(
    repo: Repo, rev: str | None = None, *, ask_remote: bool = False
) -> tuple[str, str]:
    """A PostgreSQL board's name when nothing local names one: the
    ``lac.board`` of the ``.lacconfig`` committed at ``rev`` (default: at
    HEAD, else at the destination; :func:`board_commits` says why), else
    ``lac_<the last one's root commit>``;
    with its source. ``ask_remote`` (``git lac init``): a shallow clone asks
    its remote for the root (:meth:`~git_lacunari.repo.Repo.remote_root`).
    Raises :class:`BoardUnknown` rather than guess: a shallow clone's
    boundary is not a root (nor is the remote asked, but by init), a repository with no commit has
    none, and a ``.lacconfig`` that is committed but cannot say which board
    (unreadable, as in a partial clone whose remote cannot send it;
    unparsable; no, empty, several or an invalid ``lac.board``) never lets
    the root commit answer instead.

    Only ``lac.board`` is read from the committed file, never ``lac.url``: a
    URL says where to connect (and libpq may send a password there), and a
    committed file is whatever the last pusher wrote.
    """
    from .errors import BoardUnknown, InvalidInput
    from .store import validate_board

    revs = iter((rev,)) if rev is not None else board_commits(repo)
    shared = None
    for rev in revs:  # the last one read answers, or names the root
        try:
            shared = repo.committed_config("lac.board", rev, SHARED_FILE)
        except ValueError as exc:  # a damaged file fails closed: never the root-commit default
            raise BoardUnknown(
                f"the {SHARED_FILE} committed at {rev} {exc}: fix it and commit it, "
                "or name the board with `git config lac.board NAME`"
            ) from None
        if shared is not None:
            break
    if shared is not None:
        try:
            if shared == "public":  # every database has one: never a project's by a file's word
                raise InvalidInput("public")
            return validate_board(shared), f"{SHARED_FILE} at {rev}"
        except InvalidInput:
            raise BoardUnknown(
                f"the {SHARED_FILE} committed at {rev} names no valid board "
                f"({shared[:80]!r}): fix it, or name the board with `git config lac.board NAME`"
            ) from None
    if repo.is_shallow():
        # `git lac init` asks the remote for the root (its commits only, once;
        # init records the answer in lac.board). Every other door, hooks
        # included, never fetches: it reads what init recorded.
        found = repo.remote_root(rev or "HEAD") if ask_remote else None
        if found is not None:
            return "lac_" + found[:12], f"the root commit {found[:12]}, from the remote"
        raise BoardUnknown(
            "this is a shallow clone, whose oldest commit is not the root the board is "
            + ("named after, and its remote could not tell it" if ask_remote else "named after")
            + ": name the board with `git config lac.board NAME` (`git lac boards` lists "
            + (
                "them), "
                if ask_remote
                else "them), run `git lac init --url URL` (it asks the remote), "
            )
            + f"commit a {SHARED_FILE} (`git lac init --share`), or `git fetch --unshallow`"
        )
    root = repo.root_commit(rev or "HEAD")
    if root is None:
        nothing = "this repository has" if rev == "HEAD" else f"{rev} has"
        raise BoardUnknown(
            f"{nothing} no commit yet, so no board is named after its root: "
            "name it with `git config lac.board NAME` (or `git lac init --url URL --board NAME`)"
        )
    return "lac_" + root[:12], f"the root commit {root[:12]}"


def resolve_board(
    repo: Repo, *, url: str | None = None, board: str | None = None, rev: str | None = None
) -> BoardChoice:
    """Which board every door of ``repo`` uses: the one rule (README, "Which
    board"). ``url`` and ``board`` are what the caller was given (else
    ``lac.url``, ``lac.board`` from git config). For a PostgreSQL URL:

    1. ``lac.board`` (given, or git config: the repository's own word);
    2. the URL's own ``search_path``, if it sets one;
    3. the ``lac.board`` of the ``.lacconfig`` committed at ``rev`` (default:
       HEAD, else the destination; :func:`board_commits` says why);
    4. ``lac_`` + the first 12 hex digits of that commit's root, never in a
       shallow clone, never when a committed ``.lacconfig`` cannot say; else
       :class:`BoardUnknown`.

    Never ``public``, never a schema nobody named.
    """
    from .store import is_postgres_url, validate_board

    url = url or repo.get("lac.url")
    if not (url and is_postgres_url(url)):
        return BoardChoice(url, None, "git config lac.url" if url else "no lac.url")
    if board:
        return BoardChoice(url, validate_board(board), "given")
    configured = repo.get("lac.board")
    if configured:
        return BoardChoice(url, validate_board(configured), "git config lac.board")
    from .store.postgres import url_sets_schema

    if url_sets_schema(url):
        return BoardChoice(url, None, "the URL's search_path")
    name, source = default_board(repo, rev)
    return BoardChoice(url, name, source)


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
    duration) default to ``lac.url``, :func:`resolve_board` and ``lac.timeout``
    unless ``from_config`` is false (the server's guard, which resolves its own).
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
        timeout = timeout or repo.get("lac.timeout")
        chosen = resolve_board(repo, url=url, board=board)
        url, board = chosen.url, chosen.board
    store = open_store(
        url,
        repo.common_dir,
        create=create,
        timeout=timeout,
        board=board,
        pooler=repo.get("lac.pooler"),
        listen_url=repo.get("lac.listenurl"),
    )
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
