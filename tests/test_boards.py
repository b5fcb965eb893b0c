"""One board per project: a database holds many boards (a schema each).

Clones of one project share a board (by default it is named after the root
commit, which they share; or by naming the same one); unrelated repositories
on one database never see each other's locks unless they choose one board.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from git_lacunari.store.queries import latest_version

from .conftest import git, lac_inprocess, make_repo


@pytest.fixture
def made(pg_server: str) -> Iterator[list[str]]:
    """Board schemas a test made, dropped after it."""
    names: list[str] = []
    yield names
    with psycopg.connect(pg_server, autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def project(path: Path) -> Path:
    """A repository with a root commit of its own (the fixtures' repositories
    all share one, since their dates and contents are fixed)."""
    make_repo(path)
    (path / "ID").write_text(uuid.uuid4().hex)
    git(path, "add", "ID")
    git(path, "commit", "-qm", "its own history", "--amend")
    return path


def init(where: Path, url: str, made: list[str], *more: str) -> str:
    result = lac_inprocess(where, "init", "--url", url, "--json", *more)
    assert result.code == 0, result.err
    board = str(result.json["board"])
    if board not in made:
        made.append(board)
    return board


def test_unrelated_repositories_get_independent_boards(
    pg_server: str, tmp_path: Path, made: list[str]
) -> None:
    x, y = project(tmp_path / "x"), project(tmp_path / "y")
    bx, by = init(x, pg_server, made), init(y, pg_server, made)
    assert bx != by and bx.startswith("lac_") and by.startswith("lac_")
    assert git(x, "config", "lac.board").strip() == bx
    assert lac_inprocess(x, "lock", "README").code == 0
    # The same agent name, the same path, another project: nothing in the way.
    assert lac_inprocess(y, "check", "README").code == 0
    assert lac_inprocess(y, "lock", "README").code == 0
    assert lac_inprocess(y, "task", "add", "y's first").code == 0
    assert lac_inprocess(x, "tasks", "--json").json["tasks"] == []
    listed = lac_inprocess(x, "boards", "--json").json
    assert {bx, by} <= set(listed["boards"]) and listed["current"] == bx
    assert f"* {bx}" in lac_inprocess(x, "boards").out
    # One server, two boards: what people read names each one's board.
    for where, board in ((x, bx), (y, by)):
        assert f", board {board} (claims stale" in lac_inprocess(where, "status").out
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{by}" CASCADE')
    gone = lac_inprocess(y, "tasks")
    assert gone.code == 3 and f", board {by}: run `git lac init" in gone.err, gone.err


def test_clones_of_one_project_share_its_board(
    pg_server: str, tmp_path: Path, made: list[str]
) -> None:
    origin = project(tmp_path / "origin")
    a, b = tmp_path / "a", tmp_path / "b"
    git(tmp_path, "clone", "-q", str(origin), str(a))
    git(tmp_path, "clone", "-q", str(origin), str(b))
    assert init(a, pg_server, made) == init(b, pg_server, made)
    assert lac_inprocess(a, "lock", "README", "--as", "dana").code == 0
    held = lac_inprocess(b, "check", "README", "--json")
    assert held.code == 1 and held.json["refused"]["holder"] == "dana"


def test_unrelated_repositories_share_a_board_only_by_naming_it(
    pg_server: str, tmp_path: Path, made: list[str]
) -> None:
    name = "lac_t_shared_" + uuid.uuid4().hex[:8]
    x, y = project(tmp_path / "x"), project(tmp_path / "y")
    assert init(x, pg_server, made, "--board", name) == name
    assert init(y, pg_server, made, "--board", name) == name
    assert lac_inprocess(x, "lock", "README", "--as", "dana").code == 0
    assert lac_inprocess(y, "check", "README").code == 1
    # A plain `init` again keeps the recorded board.
    assert init(y, pg_server, made) == name


@pytest.mark.parametrize("name", ["Bad-Name", "9lives", "pg_catalog", "a" * 64, "x;drop"])
def test_a_bad_board_name_is_refused_and_nothing_is_made(
    pg_server: str, tmp_path: Path, name: str
) -> None:
    x = project(tmp_path / "x")
    result = lac_inprocess(x, "init", "--url", pg_server, "--board", name)
    assert result.code == 2, result
    assert "lac.url" not in git(x, "config", "--list")


def test_board_needs_a_postgresql_url(repo: Path) -> None:
    result = lac_inprocess(repo, "init", "--board", "mine")
    assert result.code == 2 and "--url" in result.err


def test_a_repository_with_no_commit_must_name_its_board(pg_server: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    result = lac_inprocess(empty, "init", "--url", pg_server)
    assert result.code == 2 and "--board NAME" in result.err


def test_a_board_of_the_longest_name_wakes_its_waiters(
    pg_server: str, tmp_path: Path, made: list[str]
) -> None:
    """63 characters, as long as a schema name may be: 'lac_work_' and the name
    pass the 63 bytes of a NOTIFY channel, so the channel is spelled by md5."""
    name = ("b" + uuid.uuid4().hex + "x" * 63)[:63]
    where = project(tmp_path / "long")
    assert init(where, pg_server, made, "--board", name) == name
    added = lac_inprocess(where, "task", "add", "a task on a long board", "--json")
    assert added.code == 0, added.err
    # `claim --next --wait` LISTENs on the same spelling and takes the task.
    claimed = lac_inprocess(where, "claim", "--next", "--wait", "5s", "--json")
    assert claimed.code == 0, claimed.err
    assert claimed.json["task"]["id"] == added.json["task"]["id"]


def _inits_at_once(where: Path, url: str, n: int) -> list[tuple[int, str, str]]:
    """``n`` real `git lac init --url URL --json` processes, started together."""
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ["PATH"]}
    procs = [
        subprocess.Popen(
            ["git", "lac", "init", "--url", url, "--json"],
            cwd=where,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(n)
    ]
    return [(p.wait(timeout=300), *p.communicate()) for p in procs]


@pytest.mark.slow
def test_concurrent_inits_in_one_repository_all_succeed(
    pg_server: str, tmp_path: Path, made: list[str]
) -> None:
    """Git takes config.lock without waiting: 14 of 50 simultaneous
    `init --url` failed with "could not lock config file" before the config
    writes retried (issue 22). 50 real processes, started together."""
    where = project(tmp_path / "p")
    results = _inits_at_once(where, pg_server, 50)
    chosen = {str(json.loads(out)["board"]) for code, out, _ in results if code == 0}
    made.extend(chosen)
    assert [err for code, _, err in results if code != 0] == []
    assert len(chosen) == 1  # one repository, one board, whoever wrote the config first
    assert git(where, "config", "lac.url").strip() == pg_server
    assert git(where, "config", "lac.board").strip() in chosen
    assert "config.lock" not in {p.name for p in (where / ".git").iterdir()}


@pytest.mark.slow
def test_concurrent_sqlite_inits_in_one_repository_all_succeed(tmp_path: Path) -> None:
    """The same race on an SQLite board named by URL: the board file made
    once, its migrations run once, `lac.url` written by every process."""
    where = project(tmp_path / "p")
    url = f"sqlite:///{tmp_path / 'shared' / 'board.db'}"
    (tmp_path / "shared").mkdir()
    results = _inits_at_once(where, url, 50)
    assert [err for code, _, err in results if code != 0] == []
    assert {json.loads(out)["schema_version"] for _, out, _ in results} == {
        latest_version("sqlite")
    }
    assert git(where, "config", "lac.url").strip() == url
    assert "config.lock" not in {p.name for p in (where / ".git").iterdir()}
