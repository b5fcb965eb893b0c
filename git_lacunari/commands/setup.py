"""`git lac init` and `git lac boards`: make or migrate the board, list a database's boards."""

from __future__ import annotations

from ..durations import format_duration
from ..edge import Result
from ..errors import InvalidInput
from ..session import Session
from . import parse_stale


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
    session: Session, url: str | None, stale_after: str | None, board_name: str | None
) -> Result:
    from ..store import is_postgres_url, redact, refuse_password
    from ..team import refresh

    stale = parse_stale(stale_after)  # before anything is looked at or written
    if url is not None and not (is_postgres_url(url) or url.startswith("sqlite:")):
        raise InvalidInput(f"unknown board URL {redact(url)!r}: use postgresql://HOST/DB")
    if url is not None:
        check_url(url)
        refuse_password(url)
    chosen = session.choose_board(url, board_name)
    board = session.board(create=True, url=url, touch=False, name=chosen, act=False)
    refresh(board.store)  # a team board: what a migration added gets the team's rules
    if stale is not None:
        board.set_default_stale_after(stale)
    version = board.store.schema_version()
    if url is not None:
        session.repo.set_config("lac.url", url)
    if chosen is not None:
        session.repo.set_config("lac.board", chosen)
    return Result(
        {
            "url": redact(board.store.url),
            "board": chosen or session.repo.get("lac.board"),
            "dialect": board.store.dialect,
            "schema_version": version,
            "stale_after": board.default_stale_after(),
        },
        f"board ready: {redact(board.store.url)} (schema version {version}, claims stale after "
        f"{format_duration(board.default_stale_after())})",
    )


def boards(session: Session) -> Result:
    board = session.board(touch=False, act=False)
    names, here = board.database_boards()
    return Result(
        {"boards": names, "current": here},
        "\n".join(f"{'*' if n == here else ' '} {n}" for n in names) or "no boards",
    )
