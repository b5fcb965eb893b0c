"""Which board, when HEAD is not the clone (README, "Which board"): every
worktree and every branch of one clone finds the clone's board, whatever
commit it has checked out, and a ``.lacconfig`` that is committed but cannot
be read never lets the root commit answer instead.

Real clones, real worktrees, real hooks, real PostgreSQL (a database of each
test's own, from test_doors)."""

from __future__ import annotations

import os
from pathlib import Path

from .conftest import Result, git
from .test_doors import (
    clone,
    database,
    lac,
    root_board,
    schemas,
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
