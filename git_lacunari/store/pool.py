"""Connections for long-running processes (the drainer, the keeper): a
``psycopg_pool.ConnectionPool`` on PostgreSQL, so a process that runs for
days borrows a connection for each unit of work instead of opening one per
iteration (a heartbeat, a reconnect) or keeping one it may have lost.

Every connection is made by the store's own :func:`~.postgres.connect` (its
timeouts, its board, the pooler setting) and checked before it is lent; a
broken one is replaced. psycopg and psycopg_pool are imported only here,
when a PostgreSQL board asks for a pool: never on the SQLite or hook path.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import BoardUnreachable
from . import redact

if TYPE_CHECKING:
    from .postgres import PostgresStore

POOL_SIZE = 3  # the main loop, a heartbeat thread, and one to spare
POOL_IDLE_S = 60.0


class StorePool:
    """Stores on pooled connections for one PostgreSQL board."""

    def __init__(self, template: PostgresStore, size: int = POOL_SIZE) -> None:
        import psycopg
        from psycopg_pool import ConnectionPool

        from .postgres import connect

        self.template = template
        url, timeout, board, pooled = (
            template.url,
            template.timeout,
            template.board,
            template.pooled,
        )
        logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)

        class LacConnection(psycopg.Connection[Any]):
            @classmethod
            def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:
                return connect(url, timeout, board, pooled=pooled)

        self.pool: ConnectionPool[Any] = ConnectionPool(
            url,
            connection_class=LacConnection,
            min_size=0,
            max_size=size,
            timeout=timeout,
            max_idle=POOL_IDLE_S,
            check=ConnectionPool.check_connection,
            name="lac-worker",
            open=True,
        )
        self.lent = 0  # how many times a connection was lent (tests read it)

    @contextmanager
    def store(self) -> Iterator[PostgresStore]:
        """A store on a pooled connection, given back when the block ends."""
        from psycopg_pool import PoolTimeout

        from .postgres import PostgresStore

        given = self.template
        try:
            with self.pool.connection() as conn:
                self.lent += 1
                yield PostgresStore(
                    given.url,
                    given.timeout,
                    given.board,
                    conn=conn,
                    pooler="transaction" if given.pooled else None,
                    listen_url=given.listen_url,
                )
        except PoolTimeout:
            raise BoardUnreachable(
                f"no connection to the board at {redact(given.url)} within {given.timeout:g}s"
            ) from None

    def stats(self) -> dict[str, int]:
        return dict(self.pool.get_stats())

    def close(self) -> None:
        self.pool.close(timeout=1.0)
