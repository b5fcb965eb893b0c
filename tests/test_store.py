"""The store layer: one vocabulary of named queries in both dialects, and
errors translated narrowly — a busy, timed-out or damaged board is never
"unreachable", so the commit guard never takes it for offline."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import psycopg
import pytest

from git_lacunari import edge
from git_lacunari.errors import (
    BadDuration,
    BoardBusy,
    BoardCorrupt,
    BoardUnreachable,
    CannotWorkHere,
)
from git_lacunari.store import base
from git_lacunari.store.base import resolve_timeout
from git_lacunari.store.postgres import PostgresStore
from git_lacunari.store.queries import load_queries
from git_lacunari.store.query_names import QueryName
from git_lacunari.store.sqlite import SqliteStore

from .conftest import REPO_ROOT, Result, git, lac_process, pg_schema
from .test_guard import BIN, head, run_git

Lac = Callable[..., Result]
DIALECTS = ("sqlite", "postgres")


# --- one vocabulary ---------------------------------------------------------------


def test_no_sql_inline_in_the_stores() -> None:
    """SQL lives in sql/<dialect>/; the store modules only name it."""
    statement = re.compile(
        r"""["'](SELECT|INSERT|UPDATE|DELETE|CREATE|LISTEN|NOTIFY|BEGIN|COMMIT|ROLLBACK|PRAGMA)\b"""
    )
    found = {
        path.name: statement.findall(path.read_text())
        for path in (REPO_ROOT / "git_lacunari" / "store").glob("*.py")
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_work_channel_is_spelled_once() -> None:
    text = "".join(p.read_text() for p in (REPO_ROOT / "sql" / "postgres").glob("**/*.sql"))
    assert text.count("'lac_work_'") == 1
    queries = load_queries("postgres")
    spelling = queries["work_channel"].strip().splitlines()[-2:]
    assert spelling and all(line in queries["notify_work"] for line in spelling)
    assert all(line in queries["listen_work"] for line in spelling)


# --- the timeout knob --------------------------------------------------------------


def test_timeout_from_env_then_config_then_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAC_TIMEOUT", raising=False)
    assert resolve_timeout(None) == base.DEFAULT_TIMEOUT_S == 5.0
    assert resolve_timeout("1m") == 60.0
    monkeypatch.setenv("LAC_TIMEOUT", "2.5")
    assert resolve_timeout("1m") == 2.5
    monkeypatch.setenv("LAC_TIMEOUT", "soon")
    with pytest.raises(BadDuration, match="^LAC_TIMEOUT: invalid duration 'soon'"):
        resolve_timeout(None)
    monkeypatch.delenv("LAC_TIMEOUT")
    with pytest.raises(BadDuration, match="^lac.timeout: invalid duration '0'"):
        resolve_timeout("0")


def test_postgres_session_carries_the_bounds(pg_server: str) -> None:
    with pg_schema(pg_server) as url:
        store = PostgresStore(url, timeout=1.5)
        settings = {
            name: store.conn.execute(f"SHOW {name}").fetchone()
            for name in ("lock_timeout", "statement_timeout", "search_path")
        }
        store.close()
        # A -c setting the board URL gives itself still wins over ours.
        mine = PostgresStore(url.replace("search_path", "lock_timeout%3D7s%20-csearch_path"), 1.5)
        own = mine.conn.execute("SHOW lock_timeout").fetchone()
        mine.close()
    assert settings["lock_timeout"] == {"lock_timeout": "1500ms"}
    assert settings["statement_timeout"] == {"statement_timeout": "3s"}
    assert settings["search_path"] is not None
    assert settings["search_path"]["search_path"].startswith("lac_t_"), "the URL's options kept"
    assert own == {"lock_timeout": "7s"}


# --- SQLite ------------------------------------------------------------------------


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(tmp_path / "board.db", timeout=0.3)
    store.migrate(create=True)
    yield store
    store.close()


def hold_sqlite(path: Path, *, readers_too: bool = False) -> sqlite3.Connection:
    """Another connection holding the board's write lock until closed (and,
    with ``readers_too``, keeping readers out: WAL lets them pass a writer)."""
    holder = sqlite3.connect(path, isolation_level=None)
    if readers_too:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def test_sqlite_locked_board_is_busy_within_the_bound(lite: SqliteStore) -> None:
    holder = hold_sqlite(lite.path)
    try:
        start = time.monotonic()
        with pytest.raises(BoardBusy) as caught:
            lite.atomic("set_setting", name="x", value="1")
        waited = time.monotonic() - start
    finally:
        holder.close()
    assert caught.value.cause == "locked" and not caught.value.transient
    assert "is busy" in caught.value.message and "retry" in caught.value.message
    assert "database is locked" in caught.value.message
    assert 0.25 <= waited < 3.0, waited
    assert edge.exit_code_of(caught.value) == 3
    # Not a wedge: the transaction was rolled back and the store works once free.
    assert lite.atomic("set_setting", name="x", value="2") is None
    assert lite.one("get_setting", name="x") == {"value": "2"}


def test_sqlite_busy_is_not_unreachable() -> None:
    assert not issubclass(BoardBusy, BoardUnreachable)
    assert not issubclass(BoardCorrupt, BoardUnreachable)
    assert issubclass(BoardBusy, CannotWorkHere) and issubclass(BoardCorrupt, CannotWorkHere)


def test_sqlite_nested_transaction_error_rolls_back_whole(lite: SqliteStore) -> None:
    with pytest.raises(RuntimeError), lite.write():
        lite.run("set_setting", name="a", value="1")
        with lite.write():
            lite.run("set_setting", name="b", value="1")
        raise RuntimeError("boom")
    assert lite.one("get_setting", name="a") is None
    assert lite.one("get_setting", name="b") is None
    with lite.write():  # depth back to zero: a new outermost transaction
        lite.run("set_setting", name="c", value="1")
    assert lite.one("get_setting", name="c") == {"value": "1"}


@pytest.mark.parametrize("damage", ["not_a_database", "torn_pages"])
def test_damaged_sqlite_board_exit_3_one_line(repo: Path, damage: str) -> None:
    board = repo / ".git" / "lacunari" / "board.db"
    assert lac_process(repo, "init").code == 0
    if damage == "not_a_database":
        board.write_bytes(b"this is not a database" * 300)
    else:  # a real board with pages torn in the middle
        data = bytearray(board.read_bytes())
        assert len(data) > 8192
        data[4096:8192] = b"\xff" * 4096
        board.write_bytes(bytes(data))
        (repo / ".git" / "lacunari" / "board.db-wal").unlink(missing_ok=True)
    result = lac_process(repo, "tasks")
    assert result.code == 3, result
    assert result.err.startswith(f"git lac: the board at {board} is damaged"), result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    as_json = lac_process(repo, "tasks", "--json")
    assert as_json.code == 3 and as_json.json["error"]["kind"] == "board_corrupt"


def test_locked_sqlite_board_cli_exit_3_one_line(repo: Path) -> None:
    assert lac_process(repo, "init").code == 0
    holder = hold_sqlite(repo / ".git" / "lacunari" / "board.db")
    try:
        result = lac_process(repo, "task", "add", "x", env={"LAC_TIMEOUT": "0.3"})
        as_json = lac_process(repo, "task", "add", "x", "--json", env={"LAC_TIMEOUT": "0.3"})
    finally:
        holder.close()
    assert result.code == 3, result
    assert "is busy" in result.err and "retry in a moment" in result.err, result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert as_json.code == 3
    assert as_json.json["error"]["kind"] == "board_busy"
    assert as_json.json["error"]["cause"] == "locked"


# --- PostgreSQL --------------------------------------------------------------------


@pytest.fixture
def pg(pg_server: str) -> Iterator[tuple[PostgresStore, str]]:
    with pg_schema(pg_server) as url:
        store = PostgresStore(url, timeout=0.5)
        store.migrate(create=True)
        yield store, url
        store.close()


def test_postgres_lock_timeout_is_busy_within_the_bound(pg: tuple[PostgresStore, str]) -> None:
    store, url = pg
    with psycopg.connect(url) as holder:  # a transaction, held until the block ends
        holder.execute("LOCK TABLE lac_locks IN ACCESS EXCLUSIVE MODE")
        start = time.monotonic()
        with pytest.raises(BoardBusy) as caught:
            store.all("list_locks", agent=None)
        waited = time.monotonic() - start
    assert caught.value.cause == "lock_timeout" and not caught.value.transient
    assert "waited 0.5s for a lock" in caught.value.message, caught.value.message
    assert 0.4 <= waited < 3.0, waited
    assert store.all("list_locks", agent=None) == []  # the connection is fine


def test_postgres_statement_timeout_is_busy(pg_server: str) -> None:
    with pg_schema(pg_server) as url:
        # No lock timeout of its own (the URL's setting wins): only the
        # statement timeout can end the wait.
        url = url.replace("search_path", "lock_timeout%3D0%20-csearch_path")
        store = PostgresStore(url, timeout=0.3)
        store.migrate(create=True)
        try:
            with psycopg.connect(url) as holder:
                holder.execute("LOCK TABLE lac_locks IN ACCESS EXCLUSIVE MODE")
                with pytest.raises(BoardBusy) as caught, store.write():
                    store.run("serialize_locks")
                    store.all("list_locks", agent=None)
            assert caught.value.cause == "statement_timeout"
            assert "ran past 0.6s" in caught.value.message
            with store.write():  # rolled back cleanly: the next transaction works
                assert store.all("list_locks", agent=None) == []
        finally:
            store.close()


FLAKY = """
CREATE SEQUENCE lac_test_calls;
CREATE FUNCTION lac_test_flaky(fails integer, code text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE n bigint := nextval('lac_test_calls');  -- counts across rollbacks
BEGIN
    IF n <= fails THEN RAISE EXCEPTION 'injected' USING ERRCODE = code; END IF;
    RETURN n;
END $$;
"""


@pytest.mark.parametrize(
    ("code", "cause"), [("40P01", "deadlock"), ("40001", "serialization_failure")]
)
def test_postgres_one_statement_transaction_retries_transient_failures(
    pg: tuple[PostgresStore, str], code: str, cause: str
) -> None:
    store, _ = pg
    store.conn.execute(FLAKY.encode())
    # A query of this test's own, outside the shipped vocabulary (QueryName).
    flaky = cast(QueryName, "flaky")
    store.queries[flaky] = "SELECT lac_test_flaky(%(fails)s, %(code)s) AS n"
    assert store.atomic(flaky, fails=2, code=code) == {"n": 3}, "two failures, then success"
    with pytest.raises(BoardBusy) as caught:
        store.atomic(flaky, fails=100, code=code)
    assert caught.value.cause == cause
    assert "gave up after 3 tries" in caught.value.message
    assert store.one(flaky, fails=0, code=code) == {"n": 7}, "exactly three more calls"
    # Inside a transaction nothing is retried: the caller's body may have done more.
    with pytest.raises(BoardBusy) as inside, store.write():
        store.atomic(flaky, fails=100, code=code)
    assert "gave up" not in inside.value.message
    assert store.one(flaky, fails=0, code=code) == {"n": 9}


def test_postgres_lost_connection_is_unreachable(pg: tuple[PostgresStore, str]) -> None:
    store, url = pg
    pid = store.conn.info.backend_pid
    with psycopg.connect(url, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(BoardUnreachable) as caught:
        store.all("list_locks", agent=None)
    assert caught.value.message.startswith("lost the board at")


# --- the commit guard, as git runs it ---------------------------------------------


def commit(repo: Path) -> Result:
    """A real `git commit` running the installed hook, as erin; a guard that
    waits without a bound fails the test instead of hanging it."""
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"], "LAC_AGENT": "erin"}
    try:
        proc = subprocess.run(
            ["git", "commit", "-qm", "x"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the guard waited on the locked board without a bound")
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _guarded_repo(repo: Path, url: str | None, timeout: str) -> str:
    assert lac_process(repo, "init", *(["--url", url] if url else [])).code == 0
    assert lac_process(repo, "hooks", "install").code == 0
    git(repo, "config", "lac.timeout", timeout)
    (repo / "core" / "auth.py").write_text("changed\n")
    git(repo, "add", "core/auth.py")
    return head(repo)


def _assert_busy_refusal(result: Result, repo: Path, before: str, waited: float) -> None:
    assert result.code != 0, result
    assert head(repo) == before, "the commit went through"
    assert "allowed unchecked" not in result.err, "treated as offline"
    assert "is busy" in result.err and "commit refused" in result.err, result.err
    assert "Traceback" not in result.err
    assert waited < 10.0, waited  # lac.timeout is 1s; the rest is process start-up


def test_postgres_commit_under_a_locked_board_is_refused_not_offline(
    repo: Path, pg_server: str
) -> None:
    with pg_schema(pg_server) as url:
        before = _guarded_repo(repo, url, "1s")
        with psycopg.connect(url) as holder:
            holder.execute("LOCK TABLE lac_locks IN ACCESS EXCLUSIVE MODE")
            start = time.monotonic()
            result = commit(repo)
            waited = time.monotonic() - start
        _assert_busy_refusal(result, repo, before, waited)
        assert "for a lock" in result.err
        allowed = run_git(repo, "commit", "-qm", "x", agent="erin")  # lock gone: checked, passes
        assert allowed.code == 0, allowed


def test_sqlite_commit_under_a_locked_board_is_refused_not_offline(repo: Path) -> None:
    before = _guarded_repo(repo, None, "1s")
    # Readers kept out too: with only the write lock held the guard can read
    # and checks (tests/test_hook_trouble.py, the writer-only case).
    holder = hold_sqlite(repo / ".git" / "lacunari" / "board.db", readers_too=True)
    try:
        start = time.monotonic()
        result = commit(repo)
        waited = time.monotonic() - start
    finally:
        holder.close()
    _assert_busy_refusal(result, repo, before, waited)
    assert "database is locked" in result.err
    allowed = run_git(repo, "commit", "-qm", "x", agent="erin")
    assert allowed.code == 0, allowed


def test_postgres_listen_hears_notify_work_on_the_one_channel(
    pg: tuple[PostgresStore, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a real notification can wake the waiter well inside the poll
    fallback (stretched to 30 s here, so a slow machine cannot pass for one)."""
    from git_lacunari.store import postgres as pg_store

    monkeypatch.setattr(pg_store, "POLL_FALLBACK_S", 30.0)
    listener, url = pg
    listener.wait_for_work(0)  # starts listening, returns at once
    sender = PostgresStore(url)
    try:
        sender.one("notify_work", lane="default")
        start = time.monotonic()
        listener.wait_for_work(30)
        woke = time.monotonic() - start
    finally:
        sender.close()
    assert woke < 10.0, f"woke after {woke:.2f}s: the poll fallback, not the notification"
