"""`git lac init` and `git lac boards`: make or migrate the board, list a database's boards."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ..durations import format_duration
from ..edge import Result
from ..errors import InvalidInput
from ..session import Session
from . import parse_stale

# `git lac init --fleet` (README, "Running a fleet"): a crashed agent's claim
# is back on the board in 10 minutes, its landing claim's locks in 2 hours
# (not the 24 hours a person's review may need); the edit hook locks the
# files a claim changes undeclared; and a keeper is run (it cannot be set
# from here: it is a process).
FLEET = {"stale_after": "10m", "landing_period": "2h", "edit_undeclared": "lock"}

if TYPE_CHECKING:
    from ..board import Board
    from ..repo import Repo


def check_url(url: str) -> None:
    """A board URL that parses, or InvalidInput naming what is wrong with it."""
    from urllib.parse import urlsplit

    from ..paths import describe_char, unsafe_char

    bad = unsafe_char(url)
    if bad is not None:
        raise InvalidInput(f"invalid board URL: it contains {describe_char(bad)}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        raise InvalidInput(f"invalid board URL: {exc}") from None


def init(
    session: Session,
    url: str | None,
    stale_after: str | None,
    board_name: str | None,
    share: bool = False,
    case: str | None = None,
    landing_period: str | None = None,
    fleet: bool = False,
) -> Result:
    """``fleet``: the :data:`FLEET` preset, for unattended fleets (an
    explicit ``--stale-after`` or ``--landing-period`` wins over it)."""
    from ..store import is_postgres_url, redact, refuse_password
    from ..team import refresh

    if fleet:
        stale_after = stale_after or FLEET["stale_after"]
        landing_period = landing_period or FLEET["landing_period"]
    stale = parse_stale(stale_after)  # before anything is looked at or written
    if url is not None and not (is_postgres_url(url) or url.startswith("sqlite:")):
        raise InvalidInput(f"unknown board URL {redact(url)!r}: use postgresql://HOST/DB")
    if url is not None:
        check_url(url)
        refuse_password(url)
    chosen = session.choose_board(url, board_name)
    if share and chosen is None:
        raise InvalidInput(
            "--share records a PostgreSQL board's name in .lacconfig: give --url "
            "postgresql://... (whose URL does not set its own search_path)"
        )
    landing = parse_stale(landing_period)
    board = session.board(create=True, url=url, touch=False, name=chosen, act=False)
    _refuse_damaged(board)
    refresh(board.store)  # a team board: what a migration added gets the team's rules
    if stale is not None:
        board.set_default_stale_after(stale)
    if case is not None and case != board.case_rule:
        board.set_case_rule(case)
    elif case is None and board.case_rule is None:
        # Any board may be shared by clones (PostgreSQL, or an embedded one
        # through lac.url): it, not each clone's core.ignorecase, says whether
        # README and readme are one path, recorded once, when the board has no
        # rule. Folding is the safe side: at worst a case-sensitive clone
        # waits for a variant it did not need; an exact rule would let a
        # case-insensitive clone write readme while README is held. A clone
        # with another core.ignorecase follows the board's rule.
        # On a team board only an admin records it: an agent's init leaves it.
        from ..errors import NotPermitted

        with contextlib.suppress(NotPermitted):
            board.set_case_rule("fold")
    if landing is not None:
        board.set_landing_period(landing)
    _record_repository(board, session.repo)
    version = board.store.schema_version()
    if url is not None:
        session.repo.set_config("lac.url", url)
    if chosen is not None:
        session.repo.set_config("lac.board", chosen)
    shared = _share(session, chosen) if share and chosen is not None else None
    if fleet:
        session.repo.set_config("lac.edit.undeclared", FLEET["edit_undeclared"])
    from ..hooks import push_identity

    options, _ = push_identity(
        session.repo, lambda: (session.identity.name, session.identity.instance)
    )
    # A URL, as given; on PostgreSQL with the board's name (one server, many boards).
    at = board.store.where if board.store.dialect == "postgres" else redact(board.store.url)
    human = (
        f"board ready: {at} (schema version {version}, claims stale after "
        f"{format_duration(board.default_stale_after())})"
    )
    if shared is not None:
        human += f"\n{shared}: lac.board = {chosen}, staged; commit and push it"
    if fleet:
        human += (
            f"\nfleet: landing claims expire after {format_duration(board.landing_period())} "
            f"of silence, lac.edit.undeclared = {FLEET['edit_undeclared']}; run one "
            "`git lac keeper` beside the fleet (it returns a crashed agent's claims and "
            "settles landings)"
        )
    return Result(
        {
            "url": redact(board.store.url),
            "board": chosen or session.repo.get("lac.board"),
            "dialect": board.store.dialect,
            "schema_version": version,
            "stale_after": board.default_stale_after(),
            "shared": shared,
            "case": board.case_rule,
            "landing_period": board.landing_period(),
            "fleet": fleet,
            "push_options": options,
        },
        human,
    )


def _refuse_damaged(board: Board) -> None:
    """A board whose schema version says its migrations ran but that lacks a
    table one made (dropped by hand, a half-restored backup): refused before
    anything is written, never repaired over the user's data, never "ready"."""
    from ..errors import BoardCorrupt

    missing = board.store.missing_tables()
    if missing:
        what = f"table {missing[0]} is" if len(missing) == 1 else f"tables {', '.join(missing)} are"
        raise BoardCorrupt(
            f"the board at {board.store.where} is damaged (schema version "
            f"{board.store.schema_version()}, but {what} missing): restore it from a "
            "copy, or move it aside (the SQLite file, or rename the PostgreSQL schema) "
            "and run `git lac init` for a new one"
        )


def _record_repository(board: Board, repo: Repo) -> None:
    """Record, once, the root commit of the repository a board is made for
    (the lowest id, as every clone picks it), so that `git lac doctor` can
    tell a server whose lac.url names another project's board. Not from a
    shallow clone (its boundary is not a root) nor before the first commit;
    on a team board only an admin records it."""
    from ..errors import NotPermitted

    if board.recorded_root() is not None or repo.is_shallow():
        return
    root = repo.root_commit()
    if root is None:
        return
    with contextlib.suppress(NotPermitted):
        board.record_root(root)


def _share(session: Session, board: str) -> str:
    """Write ``lac.board`` into the work tree's ``.lacconfig`` and stage it: once
    committed, every clone (a shallow one too) and the server find the board
    there (README, "Which board"). Only the name: never the URL."""
    from ..front_door import SHARED_FILE
    from ..repo import git

    repo = session.repo
    path = repo.toplevel / SHARED_FILE
    git("config", "--file", str(path), "lac.board", board, cwd=repo.toplevel)
    git("add", "--", SHARED_FILE, cwd=repo.toplevel)
    return SHARED_FILE


def boards(session: Session) -> Result:
    board = session.board(touch=False, act=False)
    names, here = board.database_boards()
    return Result(
        {"boards": names, "current": here},
        "\n".join(f"{'*' if n == here else ' '} {n}" for n in names) or "no boards",
    )
