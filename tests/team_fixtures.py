"""A team board on the real server with real roles, for tests and benches.

Roles are cluster-wide: every role made here carries a random prefix, and
all of them (the board's groups too) are dropped afterwards, even on failure.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from git_lacunari import team
from git_lacunari.board import Board
from git_lacunari.identity import Identity
from git_lacunari.store.postgres import PostgresStore

from .conftest import pg_schema


def as_role(url: str, role: str) -> str:
    """The URL with its user replaced by ``role`` (trust or peer auth in tests)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{role}@{host}"))


@dataclass
class Team:
    url: str  # the administrator's (superuser) board URL
    board: str
    prefix: str
    admin_store: PostgresStore
    roles: list[str] = field(default_factory=list)

    def name(self, base: str) -> str:
        return f"{self.prefix}{base}"

    def add(self, base: str, *, kind: str = "agent", caps: Sequence[str] = ()) -> str:
        role = self.name(base)
        team.add(self.admin_store, role, caps=tuple(caps), password=False, kind=kind)
        self.roles.append(role)
        return role

    def url_of(self, role: str) -> str:
        return as_role(self.url, role)

    def store(self, role: str) -> PostgresStore:
        return PostgresStore(self.url_of(role))

    def open(self, role: str, repo: Path | None = None) -> Board:
        store = self.store(role)
        ident = team.acting(store, Identity(role, "test", (), "test"))
        blob_ids = None
        if repo is not None:
            from git_lacunari.repo import discover

            blob_ids = discover(repo).blob_ids
        return Board(store, ident, blob_ids=blob_ids)


@contextlib.contextmanager
def team_board(server: str) -> Iterator[Team]:
    import psycopg

    prefix = "t" + uuid.uuid4().hex[:8] + "_"
    with pg_schema(server) as url:
        store = PostgresStore(url)
        store.migrate(create=True)
        row = store.one("current_board")
        assert row is not None
        board = str(row["board"])
        made = Team(url, board, prefix, store)
        try:
            team.enable(store)
            yield made
        finally:
            store.close()
            groups = list(team.role_names(board).values())
            with psycopg.connect(server, autocommit=True) as conn:
                # What the roles own (the write functions) and every privilege
                # granted to them goes first; pg_schema drops the schema.
                existing = [
                    r
                    for r in [*made.roles, *groups]
                    if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (r,)).fetchone()
                ]
                if existing:
                    # CASCADE: the board's triggers call a function the owner
                    # owns (0007's lac_trg_settle); the schema goes next anyway.
                    names = ", ".join(f'"{r}"' for r in existing)
                    conn.execute(f"DROP OWNED BY {names} CASCADE")
                for role in existing:
                    conn.execute(f'DROP ROLE "{role}"')
