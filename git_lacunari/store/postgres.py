"""A team board on PostgreSQL (14+) through psycopg 3.

Autocommit connection; every unit of work is an explicit transaction under
READ COMMITTED. Races that READ COMMITTED does not settle by itself (granting
path locks, migrating) are serialised with transaction-scoped advisory locks
keyed by the board's schema, so two boards in one database never block each
other. Credentials come from libpq as usual (environment, ``~/.pgpass``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg.rows import dict_row

from ..errors import BoardTooNew, BoardUnreachable, CannotWorkHere
from . import Row
from .queries import fresh_schema, latest_version, load_queries, migrations

CONNECT_TIMEOUT_S = 5
POLL_FALLBACK_S = 2.0
PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
VERSION_TABLE = """CREATE TABLE IF NOT EXISTS lac_schema_version (
    version integer PRIMARY KEY, name text NOT NULL,
    applied_at double precision NOT NULL DEFAULT extract(epoch FROM now()))"""


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def to_pyformat(sql: str) -> str:
    return PARAM.sub(r"%(\1)s", sql.replace("%", "%%"))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class PostgresStore:
    dialect = "postgres"

    def __init__(self, url: str) -> None:
        self.url = url
        try:
            self.conn = psycopg.connect(
                url, autocommit=True, row_factory=dict_row, connect_timeout=CONNECT_TIMEOUT_S
            )
        except psycopg.Error as exc:
            raise BoardUnreachable(
                f"cannot reach the board at {redact(url)}: {_first_line(exc)}"
            ) from None
        self.queries = {name: to_pyformat(sql) for name, sql in load_queries("postgres").items()}
        self._depth = 0
        self._listening = False

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._depth = 1
        try:
            with self._translated(), self.conn.transaction():
                yield
        finally:
            self._depth = 0

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except psycopg.OperationalError as exc:
            raise BoardUnreachable(
                f"lost the board at {redact(self.url)}: {_first_line(exc)}"
            ) from None
        except psycopg.errors.UndefinedTable:
            raise CannotWorkHere(
                f"no board at {redact(self.url)}: run `git lac init --url URL` first"
            ) from None

    def write(self) -> Any:
        return self._transaction()

    def read(self) -> Any:
        return self._transaction()

    def _execute(self, query: str, params: dict[str, Any]) -> psycopg.Cursor[Row]:
        with self._translated():
            return self.conn.execute(self.queries[query], params)

    def all(self, query: str, /, **params: Any) -> list[Row]:
        return self._execute(query, params).fetchall()

    def one(self, query: str, /, **params: Any) -> Row | None:
        cursor = self._execute(query, params)
        return cursor.fetchone() if cursor.description is not None else None

    def atomic(self, query: str, /, **params: Any) -> Row | None:
        # The connection is in autocommit mode: outside a transaction block a
        # single statement is its own transaction.
        return self.one(query, **params)

    def run(self, query: str, /, **params: Any) -> int:
        return self._execute(query, params).rowcount

    def schema_version(self) -> int | None:
        with self._translated():
            exists = self.conn.execute(
                "SELECT to_regclass('lac_schema_version') IS NOT NULL AS e"
            ).fetchone()
            if not exists or not exists["e"]:
                return None
            row = self.conn.execute("SELECT max(version) AS v FROM lac_schema_version").fetchone()
        return None if row is None or row["v"] is None else int(row["v"])

    def migrate(self, create: bool, upto: int | None = None) -> int:
        latest = latest_version(self.dialect) if upto is None else upto
        current = self.schema_version()
        if current == latest:
            return latest
        if current is not None and current > latest:
            raise BoardTooNew(
                f"the board at {redact(self.url)} has schema version {current}, newer than "
                f"this git-lacunari knows ({latest}); upgrade git-lacunari"
            )
        if not create:
            if current is None:
                raise CannotWorkHere(
                    f"no board at {redact(self.url)}: run `git lac init --url URL` first"
                )
            raise CannotWorkHere(
                f"the board at {redact(self.url)} has schema version {current}, older than "
                f"this git-lacunari ({latest}): run `git lac init` to migrate it"
            )
        with self._translated():
            self.conn.execute(
                "SELECT pg_advisory_lock(hashtext('lac_migrate:' || current_schema()))"
            )
            try:
                self._migrate_locked(latest, upto)
            finally:
                self.conn.execute(
                    "SELECT pg_advisory_unlock(hashtext('lac_migrate:' || current_schema()))"
                )
        return latest

    def _migrate_locked(self, latest: int, upto: int | None) -> None:
        current = self.schema_version()  # another process may have won the race
        if current == latest:
            return
        with self.conn.transaction():
            self.conn.execute(VERSION_TABLE)
        if current is None and upto is None:
            with self.conn.transaction():
                self.conn.execute(fresh_schema(self.dialect).encode())
                self._record(latest, "schema.sql")
            return
        for version, filename, sql in migrations(self.dialect):
            if (current or 0) < version <= latest:
                with self.conn.transaction():  # one transaction per migration
                    self.conn.execute(sql.encode())
                    self._record(version, filename)

    def _record(self, version: int, name: str) -> None:
        self.conn.execute(
            "INSERT INTO lac_schema_version (version, name) VALUES (%s, %s)", (version, name)
        )

    def exclusive(self, name: str) -> AdvisoryExclusive | None:
        return AdvisoryExclusive.acquire(self.url, name)

    def wait_for_work(self, timeout: float) -> None:
        """LISTEN for `notify_work`, with a polling fallback: a missed notice
        (say across a reconnect) costs at most one poll interval."""
        timeout = max(0.0, min(timeout, POLL_FALLBACK_S))
        with self._translated():
            if not self._listening:
                row = self.conn.execute("SELECT 'lac_work_' || current_schema() AS c").fetchone()
                assert row is not None
                self.conn.execute(f'LISTEN "{row["c"]}"')
                self._listening = True
            for _ in self.conn.notifies(timeout=timeout, stop_after=1):
                break

    def close(self) -> None:
        self.conn.close()


class AdvisoryExclusive:
    """A session-level advisory lock on a dedicated connection: the work
    connection may fail and reconnect without dropping it, and the server
    releases it when this one dies (so a crashed holder never wedges a lane)."""

    def __init__(self, conn: psycopg.Connection[Row]) -> None:
        self.conn = conn

    @classmethod
    def acquire(cls, url: str, name: str) -> AdvisoryExclusive | None:
        try:
            conn = psycopg.connect(
                url, autocommit=True, row_factory=dict_row, connect_timeout=CONNECT_TIMEOUT_S
            )
            row = conn.execute(
                "SELECT pg_try_advisory_lock(hashtext(%s || ':' || current_schema())) AS got",
                (name,),
            ).fetchone()
        except psycopg.OperationalError as exc:
            raise BoardUnreachable(
                f"cannot reach the board at {redact(url)}: {_first_line(exc)}"
            ) from None
        if row is None or not row["got"]:
            conn.close()
            return None
        return cls(conn)

    def alive(self) -> bool:
        try:
            self.conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    def release(self) -> None:
        self.conn.close()
