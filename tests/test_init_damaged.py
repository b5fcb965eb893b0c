"""`git lac init` on a damaged board: one line, exit 3 ("cannot work here"),
never "ready", and the user's data left where it is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from git_lacunari.store import open_store
from git_lacunari.store.base import _CREATED_TABLE
from git_lacunari.store.queries import migrations

from .conftest import Result, board_sql


def embedded(repo: Path) -> Path:
    return repo / ".git" / "lacunari" / "board.db"


def test_the_migrations_make_tables_the_check_can_see() -> None:
    for dialect in ("sqlite", "postgres"):
        made = {t.lower() for _, _, sql in migrations(dialect) for t in _CREATED_TABLE.findall(sql)}
        assert {"lac_tasks", "lac_locks", "lac_settings", "lac_instances"} <= made, made


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_init_refuses_a_damaged_board_file(repo: Path, damage: str) -> None:
    from .conftest import lac_process

    assert lac_process(repo, "init").code == 0
    board = embedded(repo)
    body = board.read_bytes()
    board.write_bytes(body[:5000] if damage == "truncated" else b"not a board\n" * 300)
    before = board.read_bytes()
    said = lac_process(repo, "init")
    assert said.code == 3, said
    assert len(said.err.strip().splitlines()) == 1 and "is damaged" in said.err, said.err
    assert "move it aside" in said.err and "ready" not in said.out + said.err
    assert "Traceback" not in said.err
    assert board.read_bytes() == before


@pytest.mark.parametrize("table", ["lac_locks", "lac_settings"])
def test_init_refuses_a_board_missing_a_table_its_version_promises(
    lac: Callable[..., Result], repo: Path, board_url: str | None, table: str
) -> None:
    """The version table says 16, a table a migration made is gone (dropped by
    hand, a half-restored backup): not ready, not silently remade empty."""
    url = board_url or f"sqlite://{embedded(repo)}"
    store = open_store(url, repo)
    try:
        version = store.schema_version()
        board_sql(store, f"DROP TABLE {table} CASCADE" if board_url else f"DROP TABLE {table}")
    finally:
        store.close()
    said = lac("init")
    assert said.code == 3, said
    line = f"schema version {version}, but table {table} is missing"
    assert len(said.err.strip().splitlines()) == 1 and line in said.err, said.err
    assert "ready" not in said.out + said.err and "Traceback" not in said.err
    store = open_store(url, repo)
    try:
        assert store.missing_tables() == [table]  # nothing remade over it
    finally:
        store.close()


def test_init_refuses_a_half_made_board(
    lac: Callable[..., Result], repo: Path, board_url: str | None
) -> None:
    """Its tables are there but its schema version is not (a half-restored
    backup, a version table emptied): replaying every migration over it
    would fail halfway; refused, its tables and rows left as they were."""
    url = board_url or f"sqlite://{embedded(repo)}"
    assert lac("task", "add", "a task to keep", "--write", "docs/a.md").code == 0
    store = open_store(url, repo)
    try:
        board_sql(store, "DELETE FROM lac_schema_version")
    finally:
        store.close()
    said = lac("init")
    assert said.code == 3, said
    assert len(said.err.strip().splitlines()) == 1, said.err
    assert "has git-lacunari tables (" in said.err and "but no schema version" in said.err
    assert "ready" not in said.out + said.err and "Traceback" not in said.err
    if board_url is None:
        import sqlite3

        with sqlite3.connect(embedded(repo)) as conn:
            (count,) = conn.execute("SELECT count(*) FROM lac_tasks").fetchone()
    else:
        import psycopg

        with psycopg.connect(board_url) as pg:
            row = pg.execute("SELECT count(*) FROM lac_tasks").fetchone()
            assert row is not None
            (count,) = row
    assert count == 1
    # Every command is refused alike, not only init.
    assert lac("status").code == 3
