"""Turns: the waiters of a path (``git lac wait --lock``) go oldest first.

Only the waiter whose turn it is for every path it wants asks for the grant,
so a release is met by one grant, not by every waiter at once, and the one
that has waited longest gets the paths. A waiter that dies loses its place
by itself: its turn is held by its connection or its process.

- PostgreSQL: one session advisory lock per path, taken in sorted order (no
  two waiters can hold each other up) on a connection of the turn's own; the
  server queues those waiting for one in arrival order.
- SQLite: one ticket file per waiter in a directory per path beside the
  board, named by its arrival time and held with a kernel lock; a waiter's
  turn has come when no older ticket in its paths' directories is held (an
  older one not held belonged to a process that died, and is removed).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from .board import Board
from .errors import CannotWorkHere

TICKET_POLL_S = 0.1


class Turn:
    def __init__(self, release: Any) -> None:
        self._release = release

    def release(self) -> None:
        self._release()


def _key(pattern: str) -> str:
    return hashlib.sha256(pattern.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def take_turn(board: Board, patterns: Sequence[str], deadline: float | None) -> Turn | None:
    """Wait for our turn at ``patterns``; None when ``deadline`` passes first."""
    if board.store.dialect == "postgres":
        return _pg_turn(board, sorted(set(patterns)), deadline)
    return _file_turn(board, sorted(set(patterns)), deadline)


def _pg_turn(board: Board, patterns: list[str], deadline: float | None) -> Turn | None:
    from .store.base import MAX_TIMEOUT_S
    from .store.postgres import PostgresStore

    store = board.store
    assert isinstance(store, PostgresStore)
    left = MAX_TIMEOUT_S if deadline is None else deadline - time.monotonic()
    if left <= 0:
        return None
    # Behind a transaction pooler (no direct URL): turns held by a transaction
    # kept open on the turn's connection, since a session lock cannot be.
    conn, in_transaction = store.dedicated(max(left, 0.001))
    query = store.queries["take_turn_xact" if in_transaction else "take_turn"]
    try:
        for pattern in patterns:
            try:
                conn.execute(query, {"name": pattern})
            except Exception as exc:  # lock_timeout: the deadline came first
                import psycopg

                if isinstance(exc, psycopg.errors.LockNotAvailable | psycopg.errors.QueryCanceled):
                    conn.close()
                    return None
                raise
    except BaseException:
        conn.close()
        raise
    return Turn(conn.close)


def _held(handle: IO[str]) -> bool:
    import fcntl

    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def _file_turn(board: Board, patterns: list[str], deadline: float | None) -> Turn | None:
    import fcntl

    where = Path(getattr(board.store, "path", "board.db")).parent / "turns"
    name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}.ticket"
    tickets: list[tuple[Path, IO[str]]] = []

    def release() -> None:
        for path, handle in tickets:
            path.unlink(missing_ok=True)
            handle.close()
            with contextlib.suppress(OSError):  # the last one out removes the line
                path.parent.rmdir()

    try:
        for pattern in patterns:
            directory = where / _key(pattern)
            path = directory / name
            # Locked under a name no other waiter reads, then put in line: a
            # ticket in line is always held while its waiter lives.
            hidden = directory / f".{name}"
            while True:
                directory.mkdir(parents=True, exist_ok=True)
                try:
                    handle = open(hidden, "w")  # noqa: SIM115 - held for the turn's lifetime
                except FileNotFoundError:  # removed by the last waiter leaving: again
                    continue
                break
            fcntl.flock(handle, fcntl.LOCK_EX)
            os.replace(hidden, path)
            tickets.append((path, handle))
        while True:
            if all(_first(path) for path, _ in tickets):
                return Turn(release)
            if deadline is not None and time.monotonic() >= deadline:
                release()
                return None
            time.sleep(TICKET_POLL_S)
    except OSError as exc:  # out of file descriptors, a full or read-only disk
        release()
        raise CannotWorkHere(f"cannot wait in line at {where}: {exc.strerror or exc}") from None
    except BaseException:
        release()
        raise


def _first(mine: Path) -> bool:
    """No live ticket older than ``mine`` in its directory (dead ones are removed)."""
    for other in sorted(mine.parent.glob("*.ticket")):
        if other.name >= mine.name:
            return True
        try:
            with open(other) as handle:
                if _held(handle):
                    return False
        except FileNotFoundError:
            continue
        other.unlink(missing_ok=True)  # its waiter died: its kernel lock went with it
    return True
