"""Which board, when HEAD is not the clone (README, "Which board"): every
worktree and every branch of one clone finds the clone's board, whatever
commit it has checked out, and a ``.lacconfig`` that is committed but cannot
be read never lets the root commit answer instead.

Real clones, real worktrees, real hooks, real PostgreSQL (a database of each
test's own, from test_doors)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import Result, git, lac_process
from .test_doors import (
    clone,
    database,
    doctor,
    erin_commits_the_held_path,
    lac,
    root_board,
    schemas,
    setup_clone,
    verdicts,
)
from .test_server_guard import commit, write

__all__ = ["database"]  # a fixture, used by name


def shared_project(repo: Path, database: str) -> str:
    """The README's setup: board ``shop`` shared in a committed ``.lacconfig``
    (after the first commit), dana holding core/auth.py. Returns the commit
    before ``.lacconfig``."""
    before = git(repo, "rev-parse", "HEAD").strip()
    made = lac(repo, "init", "--url", database, "--board", "shop", "--share")
    assert made.code == 0, made.err
    git(repo, "commit", "-qm", "share the board", "--no-verify")
    commit(repo, "more", write("docs/a.md", "a\n"))
    assert lac(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    return before


def assert_board_unknown(said: Result, *words: str) -> None:
    assert said.code == 3, said
    assert said.err.count("\n") == 1, said.err
    for word in words:
        assert word in said.err, said.err


# --- 1. a worktree or branch whose HEAD lacks .lacconfig --------------------------


@pytest.mark.parametrize("checkout", ["old commit", "orphan branch"])
def test_every_worktree_of_a_clone_finds_the_clones_board(
    repo: Path, tmp_path: Path, database: str, checkout: str
) -> None:
    old = shared_project(repo, database)
    mine = clone(repo, tmp_path / "mine")
    setup_clone(mine, database)  # lac.url only: .lacconfig names the board
    wt = tmp_path / "wt"
    if checkout == "old commit":  # HEAD older than .lacconfig
        git(mine, "worktree", "add", "-q", "--detach", str(wt), old)
        assert not (wt / ".lacconfig").exists()
    else:  # another root, no .lacconfig
        git(mine, "worktree", "add", "-q", "--detach", str(wt))
        git(wt, "checkout", "-q", "--orphan", "fresh")
        git(wt, "rm", "-rq", "--cached", ".")
        git(wt, "commit", "-qm", "fresh start", "--allow-empty", "--no-verify")
    before = schemas(database)
    code, checks = doctor(wt)
    said = verdicts(checks)
    assert said["board"] == "ok" and checks["board"]["facts"]["board"] == "shop", checks
    assert said.get("reachable") != "FAIL" and said.get("shared") == "ok", checks
    assert code == 0, checks
    # `git lac init` there makes no second board, and the held path is refused.
    made = lac(wt, "init")
    assert made.code == 0, made.err
    assert schemas(database) == before
    refused = erin_commits_the_held_path(wt)
    assert refused.code != 0 and "held by dana" in refused.err, refused.err
    assert "lac.board" not in git(mine, "config", "--list")


def test_a_clone_on_a_branch_before_lacconfig_finds_the_board(
    repo: Path, tmp_path: Path, database: str
) -> None:
    """Not only linked worktrees: the clone's own checkout on an old branch."""
    old = shared_project(repo, database)
    mine = clone(repo, tmp_path / "mine")
    setup_clone(mine, database)
    git(mine, "checkout", "-q", "-b", "old", old)
    checked = lac_process(mine, "check", "core/auth.py", "--as", "erin")
    assert checked.code == 1 and "dana" in checked.out + checked.err, checked
    assert "lac_" + old[:12] not in schemas(database)


def test_a_worktree_at_an_old_commit_shares_the_embedded_board(repo: Path, tmp_path: Path) -> None:
    """The embedded board is the common dir's: every worktree's, whatever HEAD."""
    old = git(repo, "rev-parse", "HEAD").strip()
    commit(repo, "more", write("docs/a.md", "a\n"))
    assert lac(repo, "init").code == 0
    assert lac_process(repo, "hooks", "install").code == 0
    assert lac(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "--detach", str(wt), old)
    code, checks = doctor(wt)
    assert code == 0 and verdicts(checks)["board"] == "ok", checks
    refused = erin_commits_the_held_path(wt)
    assert refused.code != 0 and "held by dana" in refused.err, refused.err


# --- 2. a .lacconfig that is there but cannot say --------------------------------


def partial_clone(repo: Path, target: Path) -> Path:
    git(repo, "config", "uploadpack.allowFilter", "true")
    git(repo, "config", "uploadpack.allowAnySHA1InWant", "true")
    return clone(repo, target, "--no-checkout", "--filter=blob:none")


def test_a_partial_clone_that_cannot_read_lacconfig_never_takes_the_root(
    repo: Path, tmp_path: Path, database: str
) -> None:
    shared_project(repo, database)
    partial = partial_clone(repo, tmp_path / "partial")
    gone = tmp_path / "gone"
    os.rename(repo, gone)  # the remote is gone: the blob cannot be fetched
    assert git(partial, "ls-tree", "HEAD", ".lacconfig").strip()
    before = schemas(database)
    refused = lac(partial, "init", "--url", database)
    assert_board_unknown(refused, ".lacconfig", "cannot be read")
    assert "lac." not in git(partial, "config", "--list")
    assert schemas(database) == before
    assert root_board(partial) not in schemas(database)
    git(partial, "config", "lac.url", database)  # set up by hand
    checked = lac(partial, "check", "core/auth.py", "--as", "erin")
    assert_board_unknown(checked, "cannot be read")
    as_json = lac(partial, "check", "core/auth.py", "--as", "erin", "--json")
    assert as_json.code == 3 and as_json.json["error"]["kind"] == "board_unknown", as_json
    assert schemas(database) == before
    # The remote is back: git fetches the blob lazily, and the board is found.
    os.rename(gone, repo)
    made = lac(partial, "init")
    assert made.code == 0, made.err
    checked = lac(partial, "check", "core/auth.py", "--as", "erin")
    assert checked.code == 1 and "dana" in checked.out + checked.err, checked
    assert schemas(database) == before


def test_a_worktree_without_lacconfig_fails_closed_on_a_damaged_destination(
    repo: Path, tmp_path: Path, database: str
) -> None:
    """HEAD has no .lacconfig, the destination's cannot say: never the root."""
    old = shared_project(repo, database)
    commit(repo, "damage", write(".lacconfig", "[lac\n"))
    mine = clone(repo, tmp_path / "mine")
    setup_clone(mine, database)
    wt = tmp_path / "wt"
    git(mine, "worktree", "add", "-q", "--detach", str(wt), old)
    before = schemas(database)
    refused = lac(wt, "check", "core/auth.py", "--as", "erin")
    assert_board_unknown(refused, ".lacconfig committed at origin/HEAD", "lac.board NAME")
    assert schemas(database) == before
