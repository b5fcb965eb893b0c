"""A board through a real PgBouncer in transaction pooling mode (issue 24):
`lac.pooler = transaction` keeps no session state across transactions, and
`claim --next --wait` is woken, by LISTEN on a direct `lac.listenUrl`
connection where one is configured, else by polling the change counter.
The race suite runs through it too (tests/test_races.py, "pgbouncer")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_lacunari.board import Board
from git_lacunari.identity import Identity
from git_lacunari.store import open_store

from .conftest import bare_schema, lac_inprocess
from .pgbouncer import pgbouncer

BIN = str(Path(sys.executable).parent)
WAKE_S = 20.0


@pytest.fixture
def schema(pg_server: str) -> Iterator[str]:
    with bare_schema(pg_server) as name:
        yield name


def init_through(repo: Path, through: str, schema: str, **config: str) -> None:
    for key, value in config.items():
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    got = lac_inprocess(repo, "init", "--url", through, "--board", schema)
    assert got.code == 0, got.err


def server_sessions(server: str, like: str) -> int:
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE %s AND pid <> pg_backend_pid()",
            (like,),
        ).fetchone()
    return int(row[0]) if row else 0


def registered(server: str, schema: str, agent: str) -> bool:
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        query = f'SELECT 1 FROM "{schema}".lac_agents WHERE name = %s'
        return conn.execute(query, (agent,)).fetchone() is not None


@pytest.mark.parametrize("listen", [True, False], ids=["listen-url", "polling"])
def test_claim_next_wait_is_woken_through_pgbouncer(
    repo: Path, pg_server: str, pgbouncer_server: str, schema: str, listen: bool
) -> None:
    config = {"lac.pooler": "transaction"}
    if listen:
        config["lac.listenUrl"] = pg_server
    init_through(repo, pgbouncer_server, schema, **config)
    waiter = subprocess.Popen(
        [str(Path(BIN) / "git-lac"), "claim", "--next", "--wait", "60s", "--json"],
        cwd=repo,
        env={**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"], "LAC_AGENT": "w"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + WAKE_S
        # Waiting: registered on the board (its first claim came back empty).
        while not registered(pg_server, schema, "w"):
            assert waiter.poll() is None, waiter.communicate()
            assert time.monotonic() < deadline, "the waiter never registered"
            time.sleep(0.05)
        if listen:  # its LISTEN is on a direct connection to the server
            while server_sessions(pg_server, "%LISTEN%lac_work_%") == 0:
                assert time.monotonic() < deadline, "no direct LISTEN session"
                time.sleep(0.05)
        time.sleep(0.3)
        assert waiter.poll() is None, "it should be waiting"
        added = time.monotonic()
        assert lac_inprocess(repo, "task", "add", "late work").code == 0
        out, err = waiter.communicate(timeout=WAKE_S)
        woke = time.monotonic() - added
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.communicate()
    assert waiter.returncode == 0, err
    assert json.loads(out)["task"]["title"] == "late work"
    assert woke < 3.0, woke  # LISTEN: at once; polling: within one 2 s wait


def test_no_session_state_leaks_between_boards_on_one_server_connection(
    repo: Path, pg_server: str, schema: str
) -> None:
    """One server connection (pool size 1) serves two boards' transactions in
    turn: each sees its own board and its own timeouts, every time."""
    from git_lacunari.repo import discover

    where = discover(repo)
    with bare_schema(pg_server) as other, pgbouncer(pg_server, pool_size=1) as through:
        a = open_store(through, where.common_dir, create=True, board=schema, pooler="transaction")
        b = open_store(
            through, where.common_dir, create=True, board=other, pooler="transaction", timeout="7"
        )
        try:
            ba = Board(a, Identity("a", "test", (), "test"))
            bb = Board(b, Identity("b", "test", (), "test"))
            for n in range(5):
                ba.add_task(f"a{n}")
                assert [t.title for t in bb.tasks()] == [f"b{m}" for m in range(n)]
                bb.add_task(f"b{n}")
                with a.read():
                    row = a.one("current_board")
                    assert row is not None and row["board"] == schema
                with b.read():
                    row = b.one("current_board")
                    assert row is not None and row["board"] == other
                    shown = b.conn.execute("SHOW lock_timeout").fetchone()  # type: ignore[attr-defined]
                    assert shown is not None and shown["lock_timeout"] == "7s"
            assert [t.title for t in ba.tasks()] == [f"a{n}" for n in range(5)]
            # Outside a transaction nothing of ours is set on the server connection.
            bare = a.conn.execute("SHOW search_path").fetchone()  # type: ignore[attr-defined]
            assert bare is not None and schema not in bare["search_path"]
        finally:
            a.close()
            b.close()


def test_without_the_pooler_setting_pgbouncer_refuses_in_one_line(
    repo: Path, pgbouncer_server: str, schema: str
) -> None:
    """Startup options (our timeouts) reach PgBouncer only without
    lac.pooler: it refuses them, and the user is told in one line."""
    got = lac_inprocess(repo, "init", "--url", pgbouncer_server, "--board", schema)
    assert got.code == 3, got
    assert "unsupported startup parameter: options" in got.err
    assert "Traceback" not in got.err and len(got.err.strip().splitlines()) <= 2


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"LAC_POOLER": "statement"}, "LAC_POOLER is 'statement'; give one of: none, transaction"),
        ({"LAC_LISTEN_URL": "mysql://x"}, "LAC_LISTEN_URL 'mysql://x' is not a postgresql:// URL"),
        ({"LAC_LISTEN_URL": "postgresql://u:secret@h/db"}, "carries a password"),
    ],
)
def test_bad_pooler_settings_are_one_line_exit_2(
    repo: Path, pg_server: str, schema: str, env: dict[str, str], said: str
) -> None:
    got = lac_inprocess(repo, "init", "--url", pg_server, "--board", schema, env=env)
    assert got.code == 2, got
    assert said in got.err and "secret" not in got.err and "Traceback" not in got.err
