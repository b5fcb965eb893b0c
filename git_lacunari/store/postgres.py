"""A team board on PostgreSQL (14+) through psycopg 3.

Autocommit connection; every unit of work is an explicit transaction under
READ COMMITTED. Races that READ COMMITTED does not settle by itself (granting
path locks, migrating) are serialised with transaction-scoped advisory locks
keyed by the board's schema, so two boards in one database never block each
other. Credentials come from libpq as usual (environment, ``~/.pgpass``).

Every wait is bounded by ``lac.timeout`` (T): connecting, and each lock wait
(``lock_timeout``) up to T, a statement up to 2T (``statement_timeout``, so a
wait on a lock is reported as one). Only a connection that cannot be made or
was lost is ``BoardUnreachable``; the rest of what the server says is
``BoardBusy`` (timeouts, deadlocks, serialization failures) or ``BoardFailed``.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import time
from typing import Any, cast

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row

from ..errors import (
    BoardBusy,
    BoardFailed,
    BoardUnreachable,
    CannotWorkHere,
    InvalidInput,
    LacError,
)
from . import Row, redact
from .base import DEFAULT_TIMEOUT_S, Cursor, StoreBase
from .queries import load_queries
from .query_names import QueryName

POLL_FALLBACK_S = 2.0
POOLER_TRANSACTION = "transaction"  # lac.pooler: PgBouncer's pool_mode = transaction
CHANGE_POLL_S = 0.1  # the page's watcher: a read of one sequence, every 100 ms
PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
# SQLSTATEs of a connection that is gone (class 08 is "connection exception").
LOST = {"57P01": "admin shutdown", "57P02": "crash shutdown", "57P03": "cannot connect now"}


def to_pyformat(sql: str) -> str:
    return PARAM.sub(r"%(\1)s", sql.replace("%", "%%"))


def _first_line(exc: BaseException) -> str:
    # libpq may quote the connection string it was given: redact that too.
    text = redact(str(exc).strip())
    return text.splitlines()[0] if text else type(exc).__name__


@functools.cache
def pg_queries() -> dict[str, str]:
    return {name: to_pyformat(sql) for name, sql in load_queries("postgres").items()}


@functools.cache
def team_queries() -> dict[str, str]:
    """Team mode's administration (``sql/postgres/team.sql``): PostgreSQL only,
    so kept apart from the named queries both dialects share."""
    from .queries import named_blocks

    return {name: to_pyformat(sql) for name, sql in named_blocks("postgres", "team.sql").items()}


def url_sets_schema(url: str) -> bool:
    """Does the URL (or PGOPTIONS) choose the schema itself (``-c search_path=``)?"""
    try:
        given = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return False
    return "search_path" in str(given.get("options") or os.environ.get("PGOPTIONS", ""))


def connect(
    url: str, timeout: float, board: str | None = None, *, pooled: bool = False
) -> psycopg.Connection[Row]:
    """An autocommit connection whose waits are bounded by ``timeout``, on
    ``board`` (a schema of the database; None: the URL's own search_path).

    ``pooled``: through a transaction pooler (``lac.pooler = transaction``):
    no startup options (PgBouncer refuses what it does not know) and no
    session state at all; statements are never prepared server-side (the
    next transaction may run on another server connection). Each
    transaction then says its settings itself (``local_settings``)."""
    try:
        given = conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise InvalidInput(f"invalid board URL {redact(url)}: {_first_line(exc)}") from None
    if pooled:
        try:
            conn = psycopg.connect(
                url,
                autocommit=True,
                row_factory=dict_row,
                connect_timeout=max(2, math.ceil(timeout)),
                prepare_threshold=None,
            )
        except psycopg.Error as exc:
            raise BoardUnreachable(
                f"cannot reach the board at {redact(url)}: {_first_line(exc)}"
            ) from None
        return conn
    ms = max(1, round(timeout * 1000))
    ours = f"-c lock_timeout={ms} -c statement_timeout={2 * ms}"
    # After theirs, so that it wins: a single statement outside a transaction
    # block (the store's atomic path) runs at the session's default level, and
    # the board decides grants on current data only under READ COMMITTED
    # (store.sql's begin_write says it for every transaction it opens).
    current = r"-c default_transaction_isolation=read\ committed"
    chosen = f"-c search_path={board}" if board else ""  # validated: a plain identifier
    service = bool(given.get("service") or os.environ.get("PGSERVICE"))
    extra: dict[str, Any] = {}
    if not service:
        # libpq takes `options` from the URL, else PGOPTIONS; ours go first so
        # that a -c setting the user gave there still wins; the board last.
        theirs = str(given.get("options") or os.environ.get("PGOPTIONS", ""))
        extra["options"] = f"{ours} {theirs} {current} {chosen}".strip()
    try:
        conn = psycopg.connect(
            url,
            autocommit=True,
            row_factory=dict_row,
            connect_timeout=max(2, math.ceil(timeout)),
            **extra,
        )
        if service:
            # A service file's `options` are not visible here, and an options
            # argument would replace them: set ours after connecting instead.
            conn.execute(
                pg_queries()["session_settings"],
                {"lock_ms": str(ms), "statement_ms": str(2 * ms), "board": board},
            )
        return conn
    except psycopg.Error as exc:
        raise BoardUnreachable(
            f"cannot reach the board at {redact(url)}: {_first_line(exc)}"
        ) from None


def classify(
    exc: Exception, where: str, timeout: float, conn: psycopg.Connection[Any] | None
) -> LacError | None:
    """What a psycopg error means to the user; None for a bug to surface as one.
    ``where``: the store's ``where`` (server, password redacted, and board)."""
    if isinstance(exc, psycopg.errors.UndefinedTable):
        return CannotWorkHere(f"no board at {where}: run `git lac init --url URL` first")
    if isinstance(exc, psycopg.errors.InvalidSchemaName):
        # The URL's own search_path (options=-csearch_path=NAME) names no schema.
        return CannotWorkHere(
            f"no board schema at {where}: its search_path names no schema that exists "
            "(create it first, or give `git lac init --url` a URL without a search_path "
            "and it makes one)"
        )
    if isinstance(exc, psycopg.Error) and exc.sqlstate in ("42501", "LAC01"):
        return _team_refusal(exc, conn)
    if isinstance(exc, psycopg.Error) and exc.sqlstate in ("LAC03", "23514"):
        # The board's own rules (0007's CHECK constraints, the write functions'
        # checks) refused what it was given: bad input, nothing written.
        return InvalidInput(f"the board refused it: {_first_line(exc)}")
    if isinstance(exc, psycopg.Error) and exc.sqlstate == "LAC02":
        return CannotWorkHere(_first_line(exc))
    if not isinstance(exc, psycopg.OperationalError):
        return None
    state, first = exc.sqlstate, _first_line(exc)
    if state is None or state.startswith("08") or state in LOST or (conn and conn.broken):
        return BoardUnreachable(f"lost the board at {where}: {first}")

    def busy(cause: str, what: str, transient: bool = False) -> BoardBusy:
        return BoardBusy(
            f"the board at {where} is busy: {what}; retry in a moment",
            cause=cause,
            transient=transient,
        )

    if state == "55P03":
        return busy("lock_timeout", f"waited {timeout:g}s for a lock another session holds")
    if state == "57014" and "statement timeout" in first:
        return busy("statement_timeout", f"a statement ran past {2 * timeout:g}s")
    if state == "57014":
        return busy("cancelled", f"a statement was cancelled ({first})")
    if state == "40P01":
        return busy("deadlock", "deadlock with another session", transient=True)
    if state == "40001":
        return busy("serialization_failure", "serialization failure", transient=True)
    return BoardFailed(f"the board at {where} failed: {first}")


def _team_refusal(exc: psycopg.Error, conn: psycopg.Connection[Any] | None) -> LacError:
    """The database said no (team mode): a privilege it withholds (42501), or
    a lock its grant function found in conflict (LAC01, lac_require_free)."""
    import json

    from ..errors import HeldOnBoard, NotPermitted
    from ..model import LockMode

    if exc.sqlstate == "LAC01":
        try:
            facts = json.loads(exc.diag.message_detail or "{}")
            return HeldOnBoard(
                path=str(facts["path"]),
                wanted=LockMode.stored(facts["wanted"]),
                holder=str(facts["holder"]),
                task=facts["task"],
                pattern=str(facts["pattern"]),
                mode=LockMode.stored(facts["mode"]),
            )
        except (ValueError, KeyError, TypeError):
            pass
    role = None
    if conn is not None and not conn.broken:
        role = conn.info.parameter_status("session_authorization")
    return NotPermitted(what=_first_line(exc), role=role)


class PostgresStore(StoreBase):
    dialect = "postgres"

    def __init__(
        self,
        url: str,
        timeout: float = DEFAULT_TIMEOUT_S,
        board: str | None = None,
        *,
        conn: psycopg.Connection[Row] | None = None,
        pooler: str | None = None,
        listen_url: str | None = None,
    ) -> None:
        """``conn``: a connection made by :func:`connect` for the same URL,
        timeout, board and pooler, lent by a pool (the live page's, a
        drainer's); closing the store then closes it, so a borrower gives it
        back instead. ``pooler``: "transaction" when ``url`` reaches the
        board through a transaction pooler (PgBouncer's pool_mode =
        transaction); ``listen_url``: a direct connection to the server for
        what needs a session (LISTEN, a keeper's or drainer's hold)."""
        super().__init__(timeout)
        self.url = url
        self.board = board
        self.pooled = pooler == POOLER_TRANSACTION
        self.listen_url = listen_url
        self.conn = conn if conn is not None else connect(url, timeout, board, pooled=self.pooled)
        self.queries = pg_queries()
        self._listening = False
        self._listener: psycopg.Connection[Row] | None = None
        self._changes = ChangeWatch()
        ms = max(1, round(timeout * 1000))
        self._local_settings = self.queries["local_settings"].format(
            lock_ms=ms,
            statement_ms=2 * ms,
            search_path=f"; SET LOCAL search_path = {board}" if board else "",
        )

    @property
    def where(self) -> str:
        """The server (password redacted) and the board on it: two clones on
        one server but on two boards must not read alike."""
        return f"{redact(self.url)}, board {self.board}" if self.board else redact(self.url)

    def _has_rows(self, cursor: Cursor) -> bool:
        # psycopg's description builds a Column object per column: for a
        # claim's 19, a tenth of the client's time per claim.
        # rownumber is None exactly when there is no result set.
        return cast("psycopg.Cursor[Any]", cursor).rownumber is not None

    def _cursor(self, sql: str, params: dict[str, Any]) -> Cursor:
        if self.pooled and not self._in_transaction():
            # Behind a transaction pooler a statement outside a transaction
            # would run with no settings and no search_path: give it one.
            self._start("begin_write")
            try:
                cursor = self.conn.execute(sql, params)
                self.conn.execute(self.queries["commit"])
            except BaseException:
                if not self.conn.broken and self._in_transaction():
                    self.conn.execute(self.queries["rollback"])
                raise
            return cursor
        return self.conn.execute(sql, params)

    def _start(self, begin: QueryName) -> None:
        if not self.pooled:
            super()._start(begin)
            return
        # BEGIN and this transaction's settings, in one round trip (no
        # parameters: the simple query protocol takes several statements).
        with self._translated():
            self.conn.execute(f"{self.queries[begin]}; {self._local_settings}".encode())

    def _script(self, sql: str) -> None:
        # Bytes: no placeholders, and several statements in one round trip.
        self.conn.execute(sql.encode())

    def _in_transaction(self) -> bool:
        return self.conn.info.transaction_status != TransactionStatus.IDLE

    def _classify(self, exc: Exception) -> LacError | None:
        return classify(exc, self.where, self.timeout, self.conn)

    def _atomic_once(self, query: QueryName, params: dict[str, Any]) -> Row | None:
        # The connection is in autocommit mode: outside a transaction block a
        # single statement is its own transaction, one round trip.
        return self.one(query, **params)

    def exclusive(self, name: str) -> AdvisoryExclusive | None:
        return AdvisoryExclusive.acquire(self, name)

    def dedicated(self, timeout: float | None = None) -> tuple[psycopg.Connection[Row], bool]:
        """A connection of its own, for a lock held as long as it lives, and
        whether the lock must be transaction-scoped: the direct listen_url
        where one is configured, else the board's URL; behind a transaction
        pooler without one, a pooled connection left in a transaction (the
        lock is then ``pg_*_xact_*``: it ends with the transaction)."""
        timeout = self.timeout if timeout is None else timeout
        if self.listen_url:
            return connect(self.listen_url, timeout, self.board), False
        if not self.pooled:
            return connect(self.url, timeout, self.board), False
        conn = connect(self.url, timeout, self.board, pooled=True)
        ms = max(1, round(timeout * 1000))
        settings = self.queries["local_settings"].format(
            lock_ms=ms,
            statement_ms=2 * ms,
            search_path=f"; SET LOCAL search_path = {self.board}" if self.board else "",
        )
        try:
            conn.execute(f"{self.queries['begin_write']}; {settings}".encode())
        except psycopg.Error as exc:
            conn.close()
            raise classify(exc, self.where, timeout, conn) or exc from None
        return conn, True

    def wait_for_work(self, timeout: float) -> None:
        """Wait on LISTEN for `notify_work`, with a polling fallback: a missed notice
        (say across a reconnect) costs at most one poll interval.

        Behind a transaction pooler LISTEN cannot work (the session that
        listens is lent to someone else at its next transaction): the
        listener is a direct connection to ``listen_url`` where one is
        configured; without one, the wait polls the board's change counter
        (:meth:`wait_for_change`), so any write to the board wakes it."""
        timeout = max(0.0, min(timeout, POLL_FALLBACK_S))
        if self.pooled and not self.listen_url:
            self.wait_for_change(timeout)
            return
        listener = self.conn
        if self.pooled:
            if self._listener is None:
                self._listener = connect(str(self.listen_url), self.timeout, self.board)
            listener = self._listener
        if not self._listening:
            with self._translated():
                listener.execute(self.queries["listen_work"], {})
            self._listening = True
        with self._translated():
            for _ in listener.notifies(timeout=timeout, stop_after=1):
                break

    def wait_for_change(self, timeout: float) -> bool:
        """Poll the board's change counter (0008: every statement that writes
        a board table moves it, from any client) every CHANGE_POLL_S; one
        cheap read, no session state, so it works through a pooler too."""
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            row = self.one("change_counter")
            assert row is not None
            if self._changes.changed(int(row["n"]), bool(row["settled"])):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, CHANGE_POLL_S))

    def create_board(self) -> None:
        """Make this store's board (its schema) if it does not exist yet."""
        if self.board:
            row = self.one("create_board_ddl", board=self.board)
            assert row is not None
            if row["ddl"] is None:
                return
            from psycopg import errors

            # IF NOT EXISTS is no guard against a creator racing us: both see
            # no schema, one insert into pg_namespace wins, the other fails on
            # its unique index. The board exists.
            with (
                self._translated(),
                contextlib.suppress(errors.UniqueViolation, errors.DuplicateSchema),
            ):
                self.conn.execute(str(row["ddl"]).encode())

    # --- team mode's administration (git_lacunari/team.py) ---------------------

    def team_all(self, query: QueryName, /, **params: Any) -> list[Row]:
        """Every row of one of team mode's named queries (:func:`team_queries`)."""
        with self._translated():
            rows: list[Row] = self._cursor(team_queries()[query], params).fetchall()
        return rows

    def team_one(self, query: QueryName, /, **params: Any) -> Row | None:
        with self._translated():
            cursor = self._cursor(team_queries()[query], params)
            row: Row | None = cursor.fetchone() if self._has_rows(cursor) else None
        return row

    def team_ddl(self, query: QueryName, /, **params: Any) -> None:
        """Run the statements a ``*_ddl`` team query composes (each row's ``ddl``,
        quoted by the server's own ``format()``), inside the caller's transaction."""
        for row in self.team_all(query, **params):
            with self._translated():
                self.conn.execute(str(row["ddl"]).encode())

    def password_verifier(self, secret: str, role: str) -> str:
        """The SCRAM verifier of ``secret`` for ``role``, computed by libpq on
        this side: the password itself never reaches the server or a log."""
        return self.conn.pgconn.encrypt_password(secret.encode(), role.encode()).decode()

    def default_isolation(self) -> dict[str, Any] | None:
        """What psql, a script or another tool gets with nothing of its own
        set: on a connection that passes no startup options (neither the
        URL's nor PGOPTIONS'), the server's, database's or role's default
        and its source; each role's or database's own setting here; what
        this environment's PGOPTIONS or URL options make of it
        (``yours``, None when they set nothing); and whether the board's
        write functions refuse any other level than READ COMMITTED."""
        given = conninfo_to_dict(self.url)
        theirs = str(given.get("options") or os.environ.get("PGOPTIONS", "")).strip()
        row = self._plain_isolation(" ")  # a blank: libpq then reads no PGOPTIONS
        yours = None
        if theirs and not (given.get("service") or os.environ.get("PGSERVICE")):
            mine = self._plain_isolation(None)
            if mine["level"] != row["level"]:
                yours = str(mine["level"])
        guarded = self.one("isolation_guarded")
        return {
            "level": str(row["level"]),
            "source": str(row["source"]),
            "settings": list(row["settings"] or []),
            "yours": yours,
            "guarded": bool(guarded and guarded["guarded"]),
        }

    def _plain_isolation(self, options: str | None) -> Row:
        extra: dict[str, Any] = {} if options is None else {"options": options}
        try:
            with psycopg.connect(
                self.url,
                autocommit=True,
                row_factory=dict_row,
                connect_timeout=max(2, math.ceil(self.timeout)),
                **extra,
            ) as conn:
                row = conn.execute(pg_queries()["default_isolation"]).fetchone()
        except psycopg.Error as exc:
            error = classify(exc, self.where, self.timeout, None)
            if error is None:
                raise BoardUnreachable(
                    f"cannot reach the board at {redact(self.url)}: {_first_line(exc)}"
                ) from None
            raise error from None
        assert row is not None  # pg_settings always has it
        return dict(row)

    def boards(self) -> list[Row]:
        """Every board of this database: each schema holding a board."""
        return self.all("list_boards")

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
        self.conn.close()


class AdvisoryExclusive:
    """A session-level advisory lock on a dedicated connection: the work
    connection may fail and reconnect without dropping it, and the server
    releases it when this one dies (so a crashed holder never wedges a lane)."""

    def __init__(self, conn: psycopg.Connection[Row]) -> None:
        self.conn = conn

    @classmethod
    def acquire(cls, store: PostgresStore, name: str) -> AdvisoryExclusive | None:
        """A session lock on a connection of its own; behind a transaction
        pooler with no direct listen_url, a transaction-scoped one in a
        transaction that connection keeps open (:meth:`PostgresStore.dedicated`)."""
        timeout = store.timeout
        conn, in_transaction = store.dedicated()
        query = "try_exclusive_xact" if in_transaction else "try_exclusive"
        try:
            row = conn.execute(pg_queries()[query], {"name": name}).fetchone()
        except psycopg.Error as exc:
            error = classify(exc, store.where, timeout, conn)
            conn.close()
            if error is None:
                raise
            raise error from None
        if row is None or not row["got"]:
            conn.close()
            return None
        return cls(conn)

    def alive(self) -> bool:
        try:
            self.conn.execute(pg_queries()["ping"])
            return True
        except psycopg.Error:
            return False

    def release(self) -> None:
        self.conn.close()


class ChangeWatch:
    """When has the board changed since the caller last read it?

    The counter moves when a write happens, not when it commits: a write
    counted at one poll may still be invisible to the read that follows. A
    poll also says whether every write it counted has ended (0008's shared
    advisory lock): until one does, the board is reported changed once more
    when they have, so the read after that sees them.
    """

    def __init__(self) -> None:
        self.count: int | None = None
        self.unsettled = False

    def changed(self, count: int, settled: bool) -> bool:
        if count != self.count:  # the first poll, too: the caller reads then
            self.count, self.unsettled = count, not settled
            return True
        if self.unsettled and settled:
            self.unsettled = False
            return True
        return False
