"""One store protocol, two backends.

The board layer speaks only in named queries (``sql/<dialect>/queries/``)
and transactions; each backend supplies the connection, the parameter style
and the schema migrations of its dialect. ``psycopg`` is imported only when a
PostgreSQL board is opened, so the embedded default stays cheap to start.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from .query_names import QueryName

Row = dict[str, Any]


class Exclusive(Protocol):
    def alive(self) -> bool:
        """Is it still ours? (A PostgreSQL lock dies with its connection.)"""

    def release(self) -> None: ...


class Store(Protocol):
    dialect: str
    url: str

    @property
    def where(self) -> str:
        """The board, as messages and the page name it (never with a password)."""

    def write(self) -> AbstractContextManager[None]:
        """A transaction that may write; commits on success, rolls back on error."""

    def read(self) -> AbstractContextManager[None]:
        """A consistent read-only snapshot."""

    def snapshot(self) -> AbstractContextManager[None]:
        """A read-only transaction that sees one instant across its statements."""

    def all(self, query: QueryName, /, **params: Any) -> list[Row]: ...

    def one(self, query: QueryName, /, **params: Any) -> Row | None: ...

    def run(self, query: QueryName, /, **params: Any) -> int: ...

    def atomic(self, query: QueryName, /, **params: Any) -> Row | None:
        """Run one statement as a transaction of its own and return its first row.

        On PostgreSQL that is a single autocommit round trip; SQLite wraps it in
        BEGIN IMMEDIATE (a deferred write could fail on a stale snapshot).
        Inside an open transaction it simply joins it.
        """

    timeout: float

    def exclusive(self, name: str) -> Exclusive | None:
        """Try to become the one holder of ``name`` on this board (one keeper,
        one drainer per lane), across processes and machines; None if taken.
        Held until released or the process dies."""

    def wait_for_work(self, timeout: float) -> None:
        """Sleep up to ``timeout`` seconds, waking early when work may have appeared."""

    def wait_for_change(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a write to the board by anyone
        (the live page's one watcher); True if there was one. The first call
        starts watching and returns True: the caller reads the board then."""

    def migrate(self, create: bool) -> int:
        """Bring the schema to the latest version (creating it if ``create``)."""

    def schema_version(self) -> int | None: ...

    def missing_tables(self) -> list[str]: ...

    def default_isolation(self) -> dict[str, Any] | None:
        """The isolation level a caller that sets none gets on this board's
        database, and where it comes from (PostgreSQL; None on SQLite, whose
        writes begin IMMEDIATE)."""

    def close(self) -> None: ...


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


# Every spelling of a password a libpq URL or conninfo string can carry: the
# userinfo of a URL (user:pw@), a query parameter (?password=, &password=),
# and a key=value conninfo (password=pw, password='p w').
# libpq takes the userinfo up to the last "@" of the authority, so a password
# may itself hold "?", "#", "/" or "@": match greedily up to the last "@"
# (over-redacting a message is harmless; under-redacting is a leak).
_USERINFO_PW = re.compile(r"(://[^:/@?#\s]*:)(\S*)(@)")
_QUERY_PW = re.compile(r"([?&]password=)([^&#\s]*)", re.IGNORECASE)
_CONNINFO_PW = re.compile(r"((?:^|\s)password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def has_password(url: str) -> bool:
    return any(p.search(url) for p in (_USERINFO_PW, _QUERY_PW, _CONNINFO_PW))


def redact(text: str) -> str:
    """``text`` (a URL, or a message quoting one) with every password shown as ***."""
    text = _USERINFO_PW.sub(r"\1***\3", text)
    text = _QUERY_PW.sub(r"\1***", text)
    return _CONNINFO_PW.sub(r"\1***", text)


def refuse_password(url: str) -> None:
    """A board URL is written to git config: it must carry no secret.

    Refused rather than stripped: a stripped URL would connect without the
    password the user meant, and fail later, further from the cause.
    """
    if has_password(url):
        from ..errors import InvalidInput

        raise InvalidInput(
            f"the board URL {redact(url)} carries a password, which would be stored in git "
            "config: leave it out and give it through PGPASSWORD, ~/.pgpass or a service "
            "file (?service=NAME)"
        )


BOARD_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def validate_board(name: str) -> str:
    """A board is a schema: a plain lower-case identifier (never pg_*)."""
    if not BOARD_NAME.match(name) or name.startswith("pg_"):
        from ..errors import InvalidInput

        raise InvalidInput(
            f"board name {name!r}: 1-63 of a-z, 0-9 and _, not starting with a digit or pg_"
        )
    return name


POOLERS = ("none", "transaction")


def resolve_pooler(configured: str | None) -> str | None:
    """How a PostgreSQL board is reached: ``LAC_POOLER``, else ``git config
    lac.pooler``: "transaction" behind a transaction pooler (PgBouncer's
    pool_mode = transaction), "none" (the default) directly or through a
    session pooler. None for "none"."""
    import os

    env = os.environ.get("LAC_POOLER")
    text, source = (env, "LAC_POOLER") if env else (configured, "lac.pooler")
    value = (text or "none").strip().lower()
    if value not in POOLERS:
        from ..errors import InvalidInput

        raise InvalidInput(f"{source} is {text!r}; give one of: {', '.join(POOLERS)}")
    return None if value == "none" else value


def resolve_listen_url(configured: str | None) -> str | None:
    """A direct connection to the board's server for what needs a session
    behind a transaction pooler (LISTEN, a keeper's or drainer's hold):
    ``LAC_LISTEN_URL``, else ``git config lac.listenUrl``; None: none."""
    import os

    env = os.environ.get("LAC_LISTEN_URL")
    text, source = (env, "LAC_LISTEN_URL") if env else (configured, "lac.listenUrl")
    if not text:
        return None
    if not is_postgres_url(text):
        from ..errors import InvalidInput

        raise InvalidInput(f"{source} {redact(text)!r} is not a postgresql:// URL")
    refuse_password(text)
    return text


def open_store(
    url: str | None,
    common_dir: Path,
    *,
    create: bool = False,
    timeout: str | None = None,
    board: str | None = None,
    pooler: str | None = None,
    listen_url: str | None = None,
) -> Store:
    """Open the board named by ``url`` (``lac.url``); None is the embedded default.

    ``create`` is what ``git lac init`` asks for. The embedded board is always
    created on first use: zero setup is its point; a board an explicit
    ``sqlite:///PATH`` names is created only by ``create``. ``timeout`` is
    ``lac.timeout`` (``LAC_TIMEOUT`` overrides it): how long any one wait on
    the board may last before it is reported busy. ``board`` (``lac.board``)
    chooses one of the database's boards (a schema); None leaves the choice
    to the URL's own search_path (boards made before there were several).
    ``pooler`` and ``listen_url`` are ``lac.pooler`` and ``lac.listenUrl``
    (:func:`resolve_pooler`, :func:`resolve_listen_url`).
    """
    from .base import resolve_timeout

    seconds = resolve_timeout(timeout)
    if url and is_postgres_url(url):
        from .postgres import PostgresStore

        pg = PostgresStore(
            url,
            seconds,
            validate_board(board) if board else None,
            pooler=resolve_pooler(pooler),
            listen_url=resolve_listen_url(listen_url),
        )
        if create:
            pg.create_board()
        pg.migrate(create=create)
        return pg
    from .sqlite import is_embedded, open_board, sqlite_path

    path = sqlite_path(url, common_dir)
    if not create and not is_embedded(url) and not path.exists():
        # Only `git lac init` makes a board a URL names: a typo, or a file
        # moved away, must not become a fresh empty board that answers "free".
        from ..errors import CannotWorkHere

        raise CannotWorkHere(f"no board at {path}: run `git lac init` first")
    return open_board(path, seconds)


def open_existing(
    url: str | None,
    common_dir: Path,
    *,
    timeout: str | None = None,
    board: str | None = None,
    pooler: str | None = None,
    listen_url: str | None = None,
) -> Store | None:
    """The board as it is, for looking at (``git lac doctor``): never created,
    never migrated. None: no embedded board file (nothing to open)."""
    from .base import resolve_timeout

    seconds = resolve_timeout(timeout)
    if url and is_postgres_url(url):
        from .postgres import PostgresStore

        return PostgresStore(
            url,
            seconds,
            validate_board(board) if board else None,
            pooler=resolve_pooler(pooler),
            listen_url=resolve_listen_url(listen_url),
        )
    from .sqlite import SqliteStore, sqlite_path

    path = sqlite_path(url, common_dir)
    if not path.exists() and not path.is_symlink():
        return None
    return SqliteStore(path, seconds)  # not a file: it says what is there
