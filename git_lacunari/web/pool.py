"""The page's board connections for API requests (a task's timeline, an
action): a bounded pool, so a flood of requests — authenticated or not — never
opens more than :data:`POOL_SIZE` connections to the board.

- PostgreSQL: a ``psycopg_pool.ConnectionPool`` (at most POOL_SIZE
  connections, none kept while idle for a minute, each checked before it is
  lent); every connection is made by the store's own ``connect`` (its timeouts,
  its board) and set up once as the page needs (:func:`setup`). A request that
  finds no free connection within the board's timeout is answered busy (503).
- SQLite: POOL_SIZE worker threads, each keeping one connection (a sqlite3
  connection belongs to the thread that made it). When the board file was
  replaced, :meth:`SqlitePool.reset` makes every thread open it anew.

The watcher (:mod:`.feed`) has its own connection besides these.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from starlette.concurrency import run_in_threadpool

from ..board import Board
from ..errors import BoardBusy
from ..store import redact

T = TypeVar("T")
POOL_SIZE = 4
POOL_IDLE_S = 60.0  # a PostgreSQL connection unused this long is closed


class BoardPool(Protocol):
    async def run(self, work: Callable[[Board], T]) -> T:
        """``work`` on a board connection of the pool, off the event loop."""

    def reset(self) -> None:
        """The board was replaced: connections opened before are not used again."""

    def close(self) -> None: ...


class SqlitePool:
    def __init__(self, open_board: Callable[[], Board], size: int = POOL_SIZE) -> None:
        self.open_board = open_board
        self.executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="lac-serve-db")
        self.local = threading.local()
        self.generation = 0
        self.opened = 0  # connections made (tests read it)

    def _board(self) -> Board:
        board: Board | None = getattr(self.local, "board", None)
        if board is not None and self.local.generation != self.generation:
            board.store.close()
            board = None
        if board is None:
            board = self.open_board()
            self.opened += 1
            self.local.board, self.local.generation = board, self.generation
        return board

    def _run(self, work: Callable[[Board], T]) -> T:
        board = self._board()
        try:
            return work(board)
        except BaseException:
            # A connection that failed is not trusted again: the next request
            # on this thread opens the board anew (it may be back by then).
            self.local.board = None
            board.store.close()
            raise

    async def run(self, work: Callable[[Board], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.executor, self._run, work)

    def reset(self) -> None:
        self.generation += 1

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


class PostgresPool:
    def __init__(self, template: Board, setup: Callable[[Board], Any], size: int = POOL_SIZE):
        import psycopg
        from psycopg_pool import ConnectionPool

        from ..store.postgres import PostgresStore, connect

        store = template.store
        assert isinstance(store, PostgresStore)
        self.template = template
        url, timeout, board, pooled = store.url, store.timeout, store.board, store.pooled
        # The pool's own complaints (a failed connection attempt, retried) are
        # not the page's: the request that waits in vain says so instead.
        logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)

        class PageConnection(psycopg.Connection[Any]):
            @classmethod
            def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:
                return connect(url, timeout, board, pooled=pooled)

        def configure(conn: psycopg.Connection[Any]) -> None:
            setup(self._board(conn))

        self.pool: ConnectionPool[Any] = ConnectionPool(
            url,
            connection_class=PageConnection,
            min_size=0,
            max_size=size,
            timeout=timeout,
            max_idle=POOL_IDLE_S,
            check=ConnectionPool.check_connection,
            configure=configure,
            name="lac-serve",
            open=True,
        )
        self.timeout = timeout
        self.size = size

    def _board(self, conn: Any) -> Board:
        from ..store.postgres import PostgresStore

        given = self.template.store
        assert isinstance(given, PostgresStore)
        store = PostgresStore(
            given.url,
            given.timeout,
            given.board,
            conn=conn,
            pooler="transaction" if given.pooled else None,
            listen_url=given.listen_url,
        )
        t = self.template
        return Board(
            store, t.identity, prefix=t.prefix, ignorecase=t.ignorecase, blob_ids=t.blob_ids
        )

    def _run(self, work: Callable[[Board], T]) -> T:
        from psycopg_pool import PoolTimeout

        try:
            with self.pool.connection() as conn:
                return work(self._board(conn))
        except PoolTimeout:
            raise BoardBusy(
                f"the board at {redact(self.template.store.url)} gave the page no connection "
                f"within {self.timeout:g}s (its {self.size} are busy, or the board is "
                "unreachable); retry in a moment",
                cause="pool",
            ) from None

    async def run(self, work: Callable[[Board], T]) -> T:
        return await run_in_threadpool(self._run, work)

    def reset(self) -> None:
        self.pool.drain()

    def close(self) -> None:
        self.pool.close(timeout=1.0)


def make_pool(
    template: Board, open_board: Callable[[], Board], setup: Callable[[Board], Any]
) -> BoardPool:
    if template.store.dialect == "postgres":
        return PostgresPool(template, setup)
    return SqlitePool(open_board)
