"""Every board trouble on the hook path (issue 12) — busy, damaged, too new,
unreachable (disk full: tests/test_disk_full.py) — on both backends and on
the commit and push hooks: one line, no traceback, within the bound, and the
offline policy decides (README, "When the board cannot answer"):

- unreachable: ``lac.guard.offline``, default warn (commit) / refuse (push);
- reached, no answer: ``lac.guard.unanswered``, default refuse everywhere.

Each trouble is made for real (another session holding the board, pages
torn, a newer schema recorded, a dead address) and undone afterwards, when
the board answers again and the hook checks as usual.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from .conftest import Result, git, lac_process
from .test_guard import head, run_git

TROUBLES = ("busy", "damaged", "too_new", "unreachable")
DEAD = "postgresql://nobody@127.0.0.1:1/nowhere"
BOUND_S = 1.0  # lac.timeout in these repositories


@pytest.fixture
def hooked(repo: Path, board_url: str | None, tmp_path: Path) -> Path:
    assert lac_process(repo, "init", *(["--url", board_url] if board_url else [])).code == 0
    assert lac_process(repo, "hooks", "install").code == 0
    git(repo, "config", "lac.timeout", f"{BOUND_S:g}s")
    assert lac_process(repo, "lock", "docs/", "--as", "dana").code == 0
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    return repo


def sqlite_board(repo: Path) -> Path:
    return repo / ".git" / "lacunari" / "board.db"


@contextmanager
def trouble(kind: str, repo: Path, url: str | None) -> Iterator[None]:
    """The board in trouble ``kind`` for the duration; whole again after."""
    if kind == "unreachable":
        if url is None:
            git(repo, "config", "lac.url", f"sqlite://{repo.parent / 'gone' / 'board.db'}")
        else:
            git(repo, "config", "lac.url", DEAD)
        try:
            yield
        finally:
            if url is None:
                git(repo, "config", "--unset", "lac.url")
            else:
                git(repo, "config", "lac.url", url)
        return
    if url is None:
        with sqlite_trouble(kind, sqlite_board(repo)):
            yield
    else:
        with postgres_trouble(kind, url):
            yield


def sql(board: Path, statement: str) -> None:
    with closing(sqlite3.connect(board, isolation_level=None)) as conn:
        conn.execute(statement)


@contextmanager
def sqlite_trouble(kind: str, board: Path) -> Iterator[None]:
    if kind == "busy":
        holder = sqlite3.connect(board, isolation_level=None)
        # Readers too: in WAL mode a plain BEGIN EXCLUSIVE blocks only
        # writers, and the guard only reads (see the writer-only test below).
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        try:
            yield
        finally:
            holder.close()
        return
    if kind == "too_new":
        sql(board, "INSERT INTO lac_schema_version VALUES (999, 'future', 0)")
        try:
            yield
        finally:
            sql(board, "DELETE FROM lac_schema_version WHERE version = 999")
        return
    assert kind == "damaged"
    sql(board, "PRAGMA wal_checkpoint(TRUNCATE)")
    saved = board.with_name("saved.db")
    shutil.copyfile(board, saved)
    data = bytearray(board.read_bytes())
    data[4096:8192] = b"\xff" * 4096  # torn pages past the header
    board.write_bytes(bytes(data))
    try:
        yield
    finally:
        for extra in ("-wal", "-shm"):
            board.with_name(board.name + extra).unlink(missing_ok=True)
        shutil.move(saved, board)


@contextmanager
def postgres_trouble(kind: str, url: str) -> Iterator[None]:
    import psycopg

    if kind == "busy":
        with psycopg.connect(url) as holder:
            holder.execute("LOCK TABLE lac_locks IN ACCESS EXCLUSIVE MODE")
            yield
        return
    with psycopg.connect(url, autocommit=True) as conn:
        if kind == "too_new":
            conn.execute("INSERT INTO lac_schema_version (version, name) VALUES (999, 'future')")
            undo = "DELETE FROM lac_schema_version WHERE version = 999"
        else:  # damaged: a board table gone
            assert kind == "damaged"
            conn.execute("ALTER TABLE lac_locks RENAME TO lac_locks_aside")
            undo = "ALTER TABLE lac_locks_aside RENAME TO lac_locks"
        try:
            yield
        finally:
            conn.execute(undo)


def commit(repo: Path, env: dict[str, str] | None = None) -> tuple[Result, float]:
    (repo / "README").write_text(f"change {time.monotonic()}\n")
    git(repo, "add", "README")
    start = time.monotonic()
    result = run_git(repo, "commit", "-qm", "change", agent="erin", env=env)
    return result, time.monotonic() - start


def push(repo: Path) -> tuple[Result, float]:
    (repo / "README").write_text(f"pushed {time.monotonic()}\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "to push", "--no-verify")
    start = time.monotonic()
    result = run_git(repo, "push", "-q", "origin", "main", agent="erin")
    return result, time.monotonic() - start


def our_line(result: Result, waited: float) -> str:
    """The one line the hook printed: no traceback, nothing else of ours, in time."""
    assert "Traceback" not in result.err, result.err
    lines = result.err.splitlines()
    ours = [line for line in lines if line.startswith("git lac")]
    # A refusal's details would be indented or say "refused:"; git's own lines are git's.
    details = [line for line in lines if line.startswith(("refused:", "  ", "What now"))]
    assert len(ours) == 1 and not details, result.err
    assert waited < BOUND_S + 8.0, waited  # the bound, plus process start-up
    return ours[0]


EXPECTED: dict[str, Any] = {
    # trouble: (what the line names, the key that decides)
    "busy": ("is busy", "lac.guard.unanswered"),
    "damaged": ("", "lac.guard.unanswered"),
    "too_new": ("newer than this git-lacunari", "lac.guard.unanswered"),
    "unreachable": ("cannot reach the board", "lac.guard.offline"),
}


@pytest.mark.parametrize("kind", TROUBLES)
def test_commit_hook_under_trouble_obeys_the_offline_policy(
    hooked: Path, board_url: str | None, kind: str
) -> None:
    repo = hooked
    names, key = EXPECTED[kind]
    default = "warn" if kind == "unreachable" else "refuse"
    flipped = "refuse" if default == "warn" else "warn"
    with trouble(kind, repo, board_url):
        for policy in (default, flipped):
            if policy != default:
                git(repo, "config", key, policy)
            before = head(repo)
            result, waited = commit(repo)
            line = our_line(result, waited)
            assert names in line, line
            if policy == "warn":
                assert result.code == 0 and head(repo) != before, result
                assert line.endswith(f"commit allowed unchecked ({key} = warn)"), line
            else:
                assert result.code != 0 and head(repo) == before, result
                assert "commit refused" in line and f"({key} = refuse;" in line, line
        git(repo, "config", "--unset", key)
    # The board answers again: checked as usual, a held path refused.
    (repo / "docs").mkdir(exist_ok=True)
    (repo / "docs" / "a.md").write_text("dana holds docs/\n")
    git(repo, "add", "docs/a.md")
    held = run_git(repo, "commit", "-qm", "docs", agent="erin")
    assert held.code != 0 and "held by dana" in held.err, held
    git(repo, "reset", "-q", "docs/a.md")
    result, _ = commit(repo)
    assert result.code == 0 and result.err == "", result


@pytest.mark.parametrize("kind", TROUBLES)
def test_push_hook_under_trouble_obeys_the_offline_policy(
    hooked: Path, board_url: str | None, kind: str
) -> None:
    repo = hooked
    names, key = EXPECTED[kind]
    with trouble(kind, repo, board_url):
        refused, waited = push(repo)  # every trouble refuses a push by default
        line = our_line(refused, waited)
        assert refused.code != 0 and names in line and f"({key} = refuse;" in line, line
        git(repo, "config", key, "warn")
        allowed, waited = push(repo)
        line = our_line(allowed, waited)
        assert allowed.code == 0, allowed
        assert line.endswith(f"push allowed unchecked ({key} = warn)"), line


def test_a_bad_policy_value_is_one_line_exit_2(hooked: Path) -> None:
    git(hooked, "config", "lac.guard.unanswered", "maybe")
    (hooked / "README").write_text("staged\n")
    git(hooked, "add", "README")
    result = lac_process(hooked, "guard", "pre-commit")
    assert result.code == 2 and "Traceback" not in result.err, result
    assert result.err.strip() == "git lac: lac.guard.unanswered is 'maybe'; use warn or refuse"


def test_merge_hook_refuses_on_a_busy_board_by_default(hooked: Path, board_url: str | None) -> None:
    repo = hooked
    git(repo, "checkout", "-qb", "side")
    (repo / "side.txt").write_text("side\n")
    git(repo, "add", "side.txt")
    git(repo, "commit", "-qm", "side", "--no-verify")
    git(repo, "checkout", "-q", "main")
    (repo / "main.txt").write_text("main\n")
    git(repo, "add", "main.txt")
    git(repo, "commit", "-qm", "main", "--no-verify")
    before = head(repo)
    with trouble("busy", repo, board_url):
        start = time.monotonic()
        merged = run_git(repo, "merge", "--no-edit", "side", agent="erin")
        line = our_line(merged, time.monotonic() - start)
    assert merged.code != 0 and "merge refused" in line and "is busy" in line, merged
    assert head(repo) == before


def test_hooks_wait_less_than_commands(hooked: Path, board_url: str | None) -> None:
    """A commit does not stand 5 s (lac.timeout's default) on a busy board:
    the hooks' bound is the shorter of lac.timeout and 2 s, or lac.guard.timeout."""
    repo = hooked
    git(repo, "config", "--unset", "lac.timeout")
    with trouble("busy", repo, board_url):
        refused, waited = commit(repo)
        line = our_line(refused, waited)
        assert refused.code != 0 and "2s" in line and waited < 4.5, (line, waited)
        git(repo, "config", "lac.guard.timeout", "0.5s")
        refused, waited = commit(repo)
        assert "0.5s" in our_line(refused, waited) and waited < 3.0, (refused, waited)
        git(repo, "config", "lac.guard.timeout", "never")
        bad = lac_process(repo, "guard", "pre-commit")
        assert bad.code == 2 and bad.err.startswith("git lac: lac.guard.timeout: invalid duration")


def test_a_held_write_lock_does_not_stop_the_commit_hook_checking(
    hooked: Path, board_url: str | None
) -> None:
    """Another process in a long write (a big grant, say) leaves the board
    readable, so the hook checks as `git lac guard pre-commit` does: a held
    path refused naming its holder, a free one allowed. Its sign of life
    comes after the check and a blocked one is just missed, never "commit
    refused, nothing was checked" (SQLite's WAL: readers pass one writer)."""
    if board_url is not None:
        pytest.skip("a PostgreSQL writer holds rows, not the board; the busy case is above")
    repo = hooked
    holder = sqlite3.connect(sqlite_board(repo), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        (repo / "docs").mkdir(exist_ok=True)
        (repo / "docs" / "a.md").write_text("dana holds docs/\n")
        git(repo, "add", "docs/a.md")
        before = head(repo)
        start = time.monotonic()
        held = run_git(repo, "commit", "-qm", "docs", agent="erin")
        waited = time.monotonic() - start
        assert held.code == 1 and "held by dana" in held.err, held
        assert "is busy" not in held.err and head(repo) == before, held
        assert waited < BOUND_S + 8.0, waited
        git(repo, "reset", "-q", "docs/a.md")
        allowed, waited = commit(repo)
        assert allowed.code == 0 and allowed.err == "", allowed
        assert head(repo) != before and waited < BOUND_S + 8.0, waited
    finally:
        holder.close()
