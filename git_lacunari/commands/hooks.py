"""`git lac hooks install | uninstall`: the native guard hooks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..edge import Result
from ..errors import InvalidInput
from ..session import Session

if TYPE_CHECKING:
    from ..hooks import HookChange
    from ..repo import Repo


def _changed(changes: Sequence[HookChange]) -> Result:
    return Result(
        {"hooks": [vars(c) for c in changes]},
        "\n".join(f"{c.hook}: {c.action} ({c.path})" for c in changes),
    )


def install(
    session: Session, force: bool, server: bool, global_ok: bool, deny_rewinds: bool = False
) -> Result:
    from ..hooks import install as install_hooks
    from ..hooks import install_server, shared_hooks_path
    from ..repo import discover_git_dir, is_bare, working_directory

    if deny_rewinds and not server:
        raise InvalidInput("--deny-non-fast-forwards is for a server: add --server")
    if server:
        repo = discover_git_dir()
        done = _changed(install_server(repo, force=force))
        if deny_rewinds:
            repo.set_config("receive.denyNonFastForwards", "true")
            done = replace(done, human=f"{done.human}\nreceive.denyNonFastForwards: true")
        return _with_pinned_board(repo, done)
    if is_bare(working_directory()):
        raise InvalidInput(
            "this is a bare repository (a server): `git lac hooks install --server` "
            "installs its guard (after `git config lac.url URL`)"
        )
    shared = shared_hooks_path(session.repo)
    if shared is not None and not global_ok:
        raise InvalidInput(
            f"core.hooksPath comes from the {shared.scope} git config ({shared.path}): "
            "installing there guards every repository on this machine that has no "
            "core.hooksPath of its own (they stay silent where there is no board); "
            "give --global-hooks-path to do that"
        )
    return _with_push_identity(session, _changed(install_hooks(session.repo, force=force)))


def _with_push_identity(session: Session, done: Result) -> Result:
    """The clone's push options set too (hooks.push_identity), so a plain
    ``git push`` tells the server the agent and the instance."""
    from ..hooks import push_identity

    options, said = push_identity(
        session.repo, lambda: (session.identity.name, session.identity.instance)
    )
    return replace(done, data={**done.data, "push_options": options}, human=f"{done.human}\n{said}")


def _with_pinned_board(repo: Repo, done: Result) -> Result:
    """On a PostgreSQL server: record the board that judges pushes as the
    server's own ``lac.board``, so that no later push can move it (a new
    ``.lacconfig``, another root). Nothing to record when the server's config
    already names it, or its URL's search_path chooses it."""
    from ..errors import BoardUnknown
    from ..front_door import resolve_board
    from ..store import is_postgres_url

    url = repo.get("lac.url")
    if not (url and is_postgres_url(url)):
        return done
    try:
        chosen = resolve_board(repo, url=url)
    except BoardUnknown as exc:
        return replace(
            done,
            data={**done.data, "board": None},
            warnings=[
                f"git lac: the board that judges pushes is not known yet: {exc.message}; "
                "until it is, every push that changes a file is refused"
            ],
        )
    pinned = chosen.source not in ("git config lac.board", "the URL's search_path")
    if pinned and chosen.board is not None:
        repo.set_config("lac.board", chosen.board)
    line = f"board: {chosen.where.removeprefix('board ')} ({chosen.source})" + (
        ", recorded as lac.board" if pinned else ""
    )
    board = {"board": chosen.board, "source": chosen.source, "recorded": pinned}
    return replace(done, data={**done.data, "board": board}, human=f"{done.human}\n{line}")


def uninstall(session: Session, server: bool) -> Result:
    from ..hooks import uninstall as uninstall_hooks
    from ..hooks import uninstall_server
    from ..repo import discover_git_dir, is_bare, working_directory

    if not server and is_bare(working_directory()):
        raise InvalidInput(
            "this is a bare repository (a server): `git lac hooks uninstall --server` "
            "removes its guard"
        )
    return _changed(
        uninstall_server(discover_git_dir()) if server else uninstall_hooks(session.repo)
    )
