"""What both backends share, written once: transactions, named-query calls,
error translation at one boundary, the bounded retry and the migration loop.

A backend supplies its connection, how to run one statement and one script,
whether a transaction is open, and how to read its driver's errors
(``_classify``); everything else is here.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from ..errors import BadDuration, BoardBusy, BoardCorrupt, BoardTooNew, CannotWorkHere, LacError
from . import Row
from .queries import functions, latest_version, migrations
from .query_names import QueryName

DEFAULT_TIMEOUT_S = 5.0
# How long migrate keeps trying while the board is busy (another process
# migrating it, most likely: StoreBase.migrate).
MIGRATION_WAIT_S = 60.0
WAITED_FOR_A_LOCK = ("locked", "lock_timeout", "deadlock", "serialization_failure")
# lac.timeout's ceiling: PostgreSQL's statement_timeout (2T, in ms) must fit an int.
MAX_TIMEOUT_S = 86400.0
# A one-statement transaction that the server rolled back for a deadlock or a
# serialization failure wrote nothing and can simply run again; a bound keeps
# a pathological board from looping.
TRANSIENT_ATTEMPTS = 3


def resolve_timeout(configured: str | None) -> float:
    """Seconds any one wait on the board may last: ``LAC_TIMEOUT``, else
    ``git config lac.timeout``, else 5 s. Both take durations (``5``, ``5s``, ``1m``)."""
    env = os.environ.get("LAC_TIMEOUT")
    text, source = (env, "LAC_TIMEOUT") if env else (configured, "lac.timeout")
    if not text:
        return DEFAULT_TIMEOUT_S
    from ..durations import parse_duration

    try:
        return parse_duration(text, at_most=MAX_TIMEOUT_S)
    except BadDuration as exc:
        raise BadDuration(f"{source}: {exc.message}") from None


class Cursor(Protocol):
    @property
    def description(self) -> Any: ...

    @property
    def rowcount(self) -> int: ...

    def fetchall(self) -> list[Any]: ...

    def fetchone(self) -> Any: ...


class StoreBase:
    dialect: str
    url: str
    timeout: float
    queries: dict[str, str]

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._depth = 0

    # --- what a backend supplies ----------------------------------------------

    @property
    def where(self) -> str:
        """The board, as messages name it (never with a password)."""
        raise NotImplementedError

    def _in_transaction(self) -> bool:
        """Is a transaction open on the connection (so a rollback is due)?"""
        raise NotImplementedError

    def _cursor(self, sql: str, params: dict[str, Any]) -> Cursor:
        raise NotImplementedError

    def _has_rows(self, cursor: Cursor) -> bool:
        """Did the statement return a result set (zero rows or more)?"""
        return cursor.description is not None

    def _script(self, sql: str) -> None:
        """Run a script of several statements (schema, migrations)."""
        raise NotImplementedError

    def _classify(self, exc: Exception) -> LacError | None:
        """The user-facing error for a driver error, or None for a bug to surface."""
        raise NotImplementedError

    def _atomic_once(self, query: QueryName, params: dict[str, Any]) -> Row | None:
        with self.write():
            return self.one(query, **params)

    # --- transactions ---------------------------------------------------------

    def _start(self, begin: QueryName) -> None:
        """Open the outermost transaction (a backend may say more in the same
        round trip: PostgreSQL behind a transaction pooler)."""
        self.run(begin)

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except LacError:
            raise
        except Exception as exc:
            error = self._classify(exc)
            if error is None:
                raise
            raise error from None

    @contextmanager
    def _begin(self, write: bool, begin: QueryName | None = None) -> Iterator[None]:
        """The outermost transaction: commit on success, roll back on any error."""
        self._start(begin or ("begin_write" if write else "begin_read"))
        try:
            yield
        except BaseException:
            self._roll_back()
            raise
        try:
            self.run("commit")
        except LacError:  # a COMMIT that fails busy leaves the transaction open on SQLite
            self._roll_back()
            raise

    def _roll_back(self) -> None:
        try:
            if self._in_transaction():
                self.run("rollback")
        except LacError:
            pass  # the connection is gone: so is its transaction; the first error tells

    @contextmanager
    def _transaction(self, write: bool, begin: QueryName | None = None) -> Iterator[None]:
        if self._depth:  # nested: part of the enclosing transaction
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._depth = 1
        try:
            with self._translated(), self._begin(write, begin):
                yield
        finally:
            self._depth = 0

    def write(self) -> AbstractContextManager[None]:
        return self._transaction(write=True)

    def read(self) -> AbstractContextManager[None]:
        return self._transaction(write=False)

    def snapshot(self) -> AbstractContextManager[None]:
        """A read-only transaction that sees one instant of the board across
        all its statements (the live page's snapshot; ``begin_snapshot``)."""
        return self._transaction(write=False, begin="begin_snapshot")

    # --- named queries --------------------------------------------------------

    def _execute(self, query: QueryName, params: dict[str, Any]) -> Cursor:
        return self._cursor(self.queries[query], params)

    def all(self, query: QueryName, /, **params: Any) -> list[Row]:
        with self._translated():
            rows: list[Row] = self._execute(query, params).fetchall()
        return rows

    def one(self, query: QueryName, /, **params: Any) -> Row | None:
        with self._translated():
            cursor = self._execute(query, params)
            row: Row | None = cursor.fetchone() if self._has_rows(cursor) else None
        return row

    def run(self, query: QueryName, /, **params: Any) -> int:
        with self._translated():
            return self._execute(query, params).rowcount

    def atomic(self, query: QueryName, /, **params: Any) -> Row | None:
        if self._depth:  # inside a transaction: simply join it
            return self.one(query, **params)
        for attempt in range(1, TRANSIENT_ATTEMPTS + 1):
            try:
                return self._atomic_once(query, params)
            except BoardBusy as exc:
                if not exc.transient:
                    raise
                if attempt == TRANSIENT_ATTEMPTS:
                    raise BoardBusy(
                        f"{exc.message} (gave up after {attempt} tries)", cause=exc.cause
                    ) from None
        raise AssertionError("unreachable")

    # --- the schema -----------------------------------------------------------

    def schema_version(self) -> int | None:
        exists = self.one("has_version_table")
        if not exists or not exists["e"]:
            return None
        row = self.one("schema_version")
        return None if row is None or row["v"] is None else int(row["v"])

    def missing_tables(self) -> list[str]:
        """The tables the migrations up to the recorded version made that the
        board lacks: a board damaged by hand or by a half-restored backup,
        whose version says it is complete (``git lac init`` refuses it)."""
        current = self.schema_version()
        if current is None:
            return []
        return sorted(_made_tables(self.dialect, current) - self._tables())

    def _tables(self) -> set[str]:
        return {str(row["name"]).lower() for row in self.all("board_tables")}

    def _refuse_half_made(self) -> None:
        """A board with no schema version but tables a migration makes: a
        half-made or damaged board. Replaying every migration over it would
        fail halfway (or build on what is left); refused, nothing written."""
        left = sorted(_made_tables(self.dialect, None) & self._tables())
        # Another process may have made the board (in one transaction) between
        # our read of the version and of the tables: then it is whole.
        if left and self.schema_version() is None:
            raise BoardCorrupt(
                f"the board at {self.where} has git-lacunari tables ({', '.join(left)}) "
                "but no schema version: it is damaged or half-made; restore it from a "
                "copy, or move it aside and run `git lac init` for a new one"
            )

    def _refuse_too_new(self, current: int | None, latest: int) -> None:
        if current is not None and current > latest:
            raise BoardTooNew(
                f"the board at {self.where} has schema version {current}, newer than this "
                f"git-lacunari knows ({latest}); upgrade git-lacunari"
            )

    def migrate(self, create: bool, upto: int | None = None) -> int:
        """Bring the schema to ``upto`` (default: the latest), one transaction
        per step; a board with no schema replays every migration in one
        transaction. The step that reaches the latest version also applies
        ``functions/`` (sql/README.md). Concurrent first uses are serialised
        by ``serialize_migrations``, and each step re-reads the version inside
        its transaction, so it is applied once."""
        final = latest_version(self.dialect)
        latest = final if upto is None else upto
        current = self.schema_version()
        if current == latest:  # the common case: no write transaction at all
            return latest
        self._refuse_too_new(current, latest)
        if current is None:
            self._refuse_half_made()
        if not create:
            if current is None:
                raise CannotWorkHere(
                    f"no board at {self.where}: run `git lac init --url URL` first"
                )
            raise CannotWorkHere(
                f"the board at {self.where} has schema version {current}, older than "
                f"this git-lacunari ({latest}): run `git lac init` to migrate it"
            )
        # Busy while migrating: most likely another process migrating the same
        # board (every agent upgraded at once), which takes longer than a
        # claim on a loaded machine and ends with the board migrated. Each
        # step is its own transaction, rolled back when busy: try again,
        # for up to MIGRATION_WAIT_S, not one busy timeout.
        patience = time.monotonic() + MIGRATION_WAIT_S
        while True:
            try:
                if not self._migrate_step(latest, final, fresh=upto is None):
                    return latest
            except BoardBusy as exc:
                # a wait for a lock: worth another try; a statement that ran
                # too long would only run too long again
                if exc.cause not in WAITED_FOR_A_LOCK or time.monotonic() >= patience:
                    raise

    def _migrate_step(self, latest: int, final: int, *, fresh: bool) -> bool:
        """One transaction of migrate: the steps due now (each step re-reads
        the version inside it, so another process's are never applied
        twice). False when none were due: the board is at ``latest``."""
        with self.write():
            self.run("serialize_migrations")
            self._script(self.queries["version_table"])
            current = self.schema_version()  # another process may have won the race
            self._refuse_too_new(current, latest)
            if current is None:
                self._refuse_half_made()
            steps = _next_steps(self.dialect, current, latest, fresh=fresh)
            if not steps:
                return False
            for version, name, sql in steps:
                self._script(sql)
                self.run("record_version", version=version, name=name)
            if steps[-1][0] == final:
                self._apply_functions()
        return True

    def _apply_functions(self) -> None:
        """Run ``functions/`` over the migrated schema. CREATE OR REPLACE
        resets what the text does not say, so the attributes team mode set
        on a function (SECURITY DEFINER, its pinned search_path) are read
        first and set again after; grants and owners survive by themselves."""
        restore = [row["ddl"] for row in self.all("function_attributes_ddl")]
        self._script(functions(self.dialect))
        for ddl in restore:
            self._script(str(ddl))


# A table a migration makes (no migration drops or renames one; a check
# that the list is non-empty is in tests/test_init_damaged.py).
_CREATED_TABLE = re.compile(r"\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I)


def _made_tables(dialect: str, upto: int | None) -> set[str]:
    """The tables the migrations up to ``upto`` (None: all) make."""
    return {
        name.lower()
        for version, _, sql in migrations(dialect)
        if upto is None or version <= upto
        for name in _CREATED_TABLE.findall(sql)
    }


def _next_steps(
    dialect: str, current: int | None, latest: int, *, fresh: bool
) -> list[tuple[int, str, str]]:
    """Every migration up to ``latest`` for a board with no schema (created
    at once), else the next one."""
    pending = [m for m in migrations(dialect) if (current or 0) < m[0] <= latest]
    return pending if current is None and fresh else pending[:1]
