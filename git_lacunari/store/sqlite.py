"""The embedded board: one SQLite file in the git common dir.

WAL lets readers run beside the single writer; every write transaction is
``BEGIN IMMEDIATE`` (``sql/sqlite/queries/store.sql``). A writer waits for another at
most the busy timeout (``lac.timeout``), then gets ``BoardBusy``, not a hang.
"""

from __future__ import annotations

import sqlite3
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import BoardBusy, BoardCorrupt, BoardFailed, BoardUnreachable, LacError
from . import Row, redact
from .base import DEFAULT_TIMEOUT_S, Cursor, StoreBase
from .queries import load_queries

POLL_INTERVAL_S = 0.5  # how often `claim --next --wait` looks again
CHANGE_POLL_S = 0.1  # how often the live page's watcher reads PRAGMA data_version

# Primary result codes (the low byte of sqlite_errorcode).
SQLITE_BUSY, SQLITE_LOCKED = 5, 6
SQLITE_CORRUPT, SQLITE_NOTADB = 11, 26
SQLITE_CANTOPEN = 14
SQLITE_IOERR, SQLITE_FULL = 10, 13
# Less free space than this where the board lives, with an I/O error: the
# disk is full (SQLite reports ENOSPC as SQLITE_FULL or as a write I/O error).
NEARLY_FULL_BYTES = 1 << 20


def _disk_full(path: Path) -> bool:
    import os

    try:
        stat = os.statvfs(path.parent)
    except OSError:
        return False
    return stat.f_bavail * stat.f_frsize < NEARLY_FULL_BYTES


def is_embedded(url: str | None) -> bool:
    """True when ``url`` names the embedded board (none, or bare ``sqlite``)."""
    return not url or url in ("sqlite", "sqlite:")


def sqlite_path(url: str | None, common_dir: Path) -> Path:
    if url and url.startswith("sqlite:///"):
        return Path(url[len("sqlite://") :])
    if url and url not in ("sqlite", "sqlite:"):
        from ..errors import InvalidInput

        raise InvalidInput(
            f"unknown board URL {redact(url)!r}: use postgresql://… or sqlite:///PATH"
        )
    return common_dir / "lacunari" / "board.db"


def not_a_board_file(path: Path) -> str | None:
    """Why ``path`` can never hold a board (a directory, a device such as
    /dev/null, a FIFO), or None: a regular file, or nothing there yet."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot open the board at {path}: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
    return (
        f"the board URL names {path}, which is {kind}: an SQLite board is a file "
        "(sqlite:///PATH/board.db), or leave lac.url unset for this clone's own"
    )


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


class SqliteStore(StoreBase):
    dialect = "sqlite"

    def __init__(self, path: Path, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        super().__init__(timeout)
        self.path = path
        self.url = f"sqlite://{path}"
        self.queries = load_queries("sqlite")
        self._data_version: int | None = None  # wait_for_change's last reading
        not_a_file = not_a_board_file(path)
        if not_a_file is not None:
            raise BoardUnreachable(not_a_file)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BoardUnreachable(f"cannot open the board at {path}: {exc}") from None
        with self._translated():
            self.conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
            self.conn.row_factory = _dict_row
            self._script(self.queries["open_session"])

    @property
    def where(self) -> str:
        return str(self.path)

    def _cursor(self, sql: str, params: dict[str, Any]) -> Cursor:
        return self.conn.execute(sql, params)

    def _script(self, sql: str) -> None:
        for statement in _statements(sql):
            self.conn.execute(statement)

    def _in_transaction(self) -> bool:
        return self.conn.in_transaction

    def _classify(self, exc: Exception) -> LacError | None:
        if not isinstance(exc, sqlite3.DatabaseError):
            return None  # a programming error: a bug, to surface as one
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        first = str(exc).strip() or type(exc).__name__
        if code in (SQLITE_BUSY, SQLITE_LOCKED):
            return BoardBusy(
                f"the board at {self.path} is busy: another process held its write lock "
                f"longer than {self.timeout:g}s ({first}); retry in a moment",
                cause="locked",
            )
        if code in (SQLITE_CORRUPT, SQLITE_NOTADB):
            return BoardCorrupt(
                f"the board at {self.path} is damaged ({first}): restore it from a copy, "
                "or move it aside and run `git lac init` for a new one"
            )
        if code in (SQLITE_IOERR, SQLITE_FULL) and (code == SQLITE_FULL or _disk_full(self.path)):
            return BoardFailed(
                f"the board at {self.path} cannot be written: its disk is full ({first}); "
                "free some space and retry"
            )
        if code == SQLITE_CANTOPEN:
            return BoardUnreachable(f"cannot open the board at {self.path}: {first}")
        if isinstance(exc, sqlite3.OperationalError):  # I/O, disk full, read-only…
            return BoardFailed(f"the board at {self.path} failed: {first}")
        return None  # integrity and the like: a bug of ours, not the user's

    def exclusive(self, name: str) -> FileExclusive | None:
        return FileExclusive.acquire(self.path.parent / f"{name.replace('/', '_')}.lock")

    def wait_for_work(self, timeout: float) -> None:
        time.sleep(max(0.0, min(timeout, POLL_INTERVAL_S)))

    def wait_for_change(self, timeout: float) -> bool:
        """``PRAGMA data_version`` every CHANGE_POLL_S: it moves when another
        connection commits, and reading it takes no lock."""
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            row = self.one("change_counter")
            version = int(row["data_version"]) if row else 0
            if version != self._data_version:
                self._data_version = version
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, CHANGE_POLL_S))

    def default_isolation(self) -> dict[str, Any] | None:
        self.one("default_isolation")  # nothing to report: writes begin IMMEDIATE
        return None

    def close(self) -> None:
        self.conn.close()


def open_board(path: Path, timeout: float) -> SqliteStore:
    """The board at ``path``, created whole when there is none.

    A new board is built under a temporary name and linked into place, so a
    board file that exists is always a complete board: a 0-byte file or a
    database without our schema is damage (or someone else's file) and is
    refused, never silently initialised over.
    """
    if not path.exists():
        _create(path, timeout)
    elif path.is_file() and path.stat().st_size == 0:
        raise BoardCorrupt(
            f"the board at {path} is an empty (0-byte) file, not a board: restore it from "
            "a copy, or move it aside and run `git lac init` for a new one"
        )
    store = SqliteStore(path, timeout)
    try:
        if store.schema_version() is None:
            store._refuse_half_made()  # a board's tables, its version gone
            raise BoardCorrupt(
                f"the file at {path} is an SQLite database but not a git-lacunari board: "
                "move it aside and run `git lac init` for a new one"
            )
        store.migrate(create=True)
    except BaseException:
        store.close()
        raise
    return store


def _create(path: Path, timeout: float) -> None:
    import os
    import uuid

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BoardUnreachable(f"cannot open the board at {path}: {exc}") from None
    fresh = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.new")
    try:
        new = SqliteStore(fresh, timeout)
        try:
            new.migrate(create=True)
        finally:
            new.close()
        try:
            os.link(fresh, path)  # atomic, and never over a board that appeared meanwhile
        except FileExistsError:
            pass  # another process made it first: use theirs
        except OSError as exc:
            raise BoardFailed(f"cannot create the board at {path}: {exc}") from None
    finally:
        for leftover in (fresh, *(fresh.with_name(fresh.name + x) for x in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)


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
