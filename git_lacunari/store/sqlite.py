"""The embedded board: one SQLite file in the git common dir.

WAL lets readers run beside the single writer; every write transaction is
``BEGIN IMMEDIATE`` so it takes the write lock up front (a deferred
transaction that upgrades later can fail with SQLITE_BUSY instead of
waiting), which also makes every check-then-insert on this board serial.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ..errors import BoardTooNew, BoardUnreachable
from . import Row
from .queries import fresh_schema, latest_version, load_queries, migrations

BUSY_TIMEOUT_S = 60.0
POLL_INTERVAL_S = 0.5  # how often `claim --next --wait` looks again
VERSION_TABLE = """CREATE TABLE IF NOT EXISTS lac_schema_version (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"""


def sqlite_path(url: str | None, common_dir: Path) -> Path:
    if url and url.startswith("sqlite:///"):
        return Path(url[len("sqlite://") :])
    if url and url not in ("sqlite", "sqlite:"):
        from ..errors import InvalidInput

        raise InvalidInput(f"unknown board URL {url!r}: use postgresql://… or sqlite:///PATH")
    return common_dir / "lacunari" / "board.db"


def _dict_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> Row:
    return {col[0]: value for col, value in zip(cursor.description, row, strict=True)}


def _statements(script: str) -> Iterator[str]:
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer
            buffer = ""
    if buffer.strip():
        yield buffer


class SqliteStore:
    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.url = f"sqlite://{path}"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self.conn.row_factory = _dict_row
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
        except (OSError, sqlite3.Error) as exc:
            raise BoardUnreachable(f"cannot open the board at {path}: {exc}") from None
        self.queries = load_queries("sqlite")
        self._depth = 0

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[None]:
        if self._depth:  # nested: part of the enclosing transaction
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.conn.execute(begin)
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self.conn.execute("ROLLBACK")
            raise
        self._depth = 0
        self.conn.execute("COMMIT")

    def write(self) -> Any:
        return self._transaction("BEGIN IMMEDIATE")

    def read(self) -> Any:
        return self._transaction("BEGIN")

    def all(self, query: str, /, **params: Any) -> list[Row]:
        return self.conn.execute(self.queries[query], params).fetchall()

    def one(self, query: str, /, **params: Any) -> Row | None:
        row: Row | None = self.conn.execute(self.queries[query], params).fetchone()
        return row

    def atomic(self, query: str, /, **params: Any) -> Row | None:
        with self.write():
            return self.one(query, **params)

    def run(self, query: str, /, **params: Any) -> int:
        return self.conn.execute(self.queries[query], params).rowcount

    def schema_version(self) -> int | None:
        exists = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'lac_schema_version'"
        ).fetchone()
        if not exists:
            return None
        row = self.conn.execute("SELECT max(version) AS v FROM lac_schema_version").fetchone()
        return None if row is None or row["v"] is None else int(row["v"])

    def migrate(self, create: bool, upto: int | None = None) -> int:
        latest = latest_version(self.dialect) if upto is None else upto
        current = self.schema_version()
        if current == latest:  # the common case: no write transaction at all
            return latest
        if current is not None and current > latest:
            raise BoardTooNew(
                f"the board at {self.path} has schema version {current}, newer than this "
                f"git-lacunari knows ({latest}); upgrade git-lacunari"
            )
        with self.write():
            current = self.schema_version()  # another process may have won the race
            self.conn.execute(VERSION_TABLE)
            if current is None and upto is None:
                self._script(fresh_schema(self.dialect))
                self._record(latest, "schema.sql")
                return latest
            for version, filename, sql in migrations(self.dialect):
                if (current or 0) < version <= latest:
                    self._script(sql)
                    self._record(version, filename)
        return latest

    def _script(self, script: str) -> None:
        for statement in _statements(script):
            self.conn.execute(statement)

    def _record(self, version: int, name: str) -> None:
        self.conn.execute(
            "INSERT INTO lac_schema_version"
            " VALUES (?, ?, (julianday('now') - 2440587.5) * 86400.0)",
            (version, name),
        )

    def exclusive(self, name: str) -> FileExclusive | None:
        return FileExclusive.acquire(self.path.parent / f"{name.replace('/', '_')}.lock")

    def wait_for_work(self, timeout: float) -> None:
        time.sleep(max(0.0, min(timeout, POLL_INTERVAL_S)))

    def close(self) -> None:
        self.conn.close()


class FileExclusive:
    """An OS file lock beside the board: released by the kernel if we die."""

    def __init__(self, handle: IO[str]) -> None:
        self.handle = handle

    @classmethod
    def acquire(cls, path: Path) -> FileExclusive | None:
        import fcntl

        handle = open(path, "a+")  # noqa: SIM115 - held for the lock's lifetime
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return None
        return cls(handle)

    def alive(self) -> bool:
        return not self.handle.closed

    def release(self) -> None:
        self.handle.close()
