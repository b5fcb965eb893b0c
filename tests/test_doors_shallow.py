"""How a clone finds its board: shallow (``--depth 1``), partial
(``--filter=blob:none``) and a linked worktree of the shallow one find the
full clone's board on ``git lac init --url URL``; a committed ``.lacconfig``
that says nothing of ``lac`` lets the root commit answer, while a bad one
still fails closed in one line. Real git, real clones over ``file://``, real
PostgreSQL (the embedded board is one file: shared through ``lac.url``, it
needs no naming, and is the control)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Result, git, lac_inprocess, lac_process
from .test_doors import clone, database, root_board, schemas
from .test_server_guard import commit, write

__all__ = ["database"]  # a fixture, used by name


def one_line(result: Result, code: int) -> str:
    assert result.code == code, result
    assert result.err.count("\n") == 1 and "Traceback" not in result.err, result.err
    return result.err.strip()


def full_clone(repo: Path, url: str, *init: str) -> Path:
    """The README's setup: `git lac init --url URL` (then more commits, so a
    depth-1 clone's boundary is not the root), dana holding core/auth.py."""
    made = lac_inprocess(repo, "init", "--url", url, *init)
    assert made.code == 0, made.err
    if "--share" in init:
        git(repo, "commit", "-qm", "share the board", "--no-verify")
    commit(repo, "two", write("docs/a.md", "a\n"))
    commit(repo, "three", write("docs/b.md", "b\n"))
    git(repo, "config", "uploadpack.allowFilter", "true")
    assert lac_inprocess(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    return repo


def clones_of(repo: Path, tmp_path: Path) -> dict[str, Path]:
    shallow = clone(repo, tmp_path / "shallow clone", "--depth", "1")
    assert git(shallow, "rev-parse", "--is-shallow-repository").strip() == "true"
    partial = clone(repo, tmp_path / "partial", "--filter=blob:none")
    assert git(partial, "config", "remote.origin.promisor").strip() == "true"
    worktree = tmp_path / "wt of shallow ü"
    git(shallow, "worktree", "add", "-q", "-b", "wt", str(worktree))
    return {"shallow": shallow, "partial": partial, "worktree": worktree}


def sees_dana(where: Path) -> None:
    refused = lac_inprocess(where, "lock", "core/auth.py", "--as", "erin")
    assert refused.code == 1 and "dana" in refused.err, refused


@pytest.mark.parametrize("kind", ["shallow", "partial", "worktree"])
def test_a_clone_finds_the_shared_lacconfig_of_a_root_named_board(
    repo: Path,
    tmp_path: Path,
    database: str,
    kind: str,
) -> None:
    full_clone(repo, database, "--share")
    assert (repo / ".lacconfig").is_file()
    where = clones_of(repo, tmp_path)[kind]
    made = lac_inprocess(where, "--json", "init", "--url", database)
    assert made.code == 0, made.err
    assert made.json["board"] == root_board(repo)
    sees_dana(where)


@pytest.mark.parametrize("kind", ["shallow", "partial", "worktree"])
def test_a_clone_asks_the_remote_for_the_root_of_a_root_named_board(
    repo: Path,
    tmp_path: Path,
    database: str,
    kind: str,
) -> None:
    """No .lacconfig: the full clone's board is named after its root, which a
    shallow clone lacks; init asks the remote, and the clone stays shallow."""
    full_clone(repo, database)
    clones = clones_of(repo, tmp_path)
    where = clones[kind]
    made = lac_inprocess(where, "--json", "init", "--url", database)
    assert made.code == 0, made.err
    assert made.json["board"] == root_board(repo)
    assert git(where, "config", "lac.board").strip() == root_board(repo)
    if kind != "partial":
        assert git(where, "rev-parse", "--is-shallow-repository").strip() == "true"
        assert len(git(where, "rev-list", "HEAD").split()) == 1  # nothing fetched into it
    sees_dana(where)


def test_the_embedded_board_shared_by_url_needs_no_naming(repo: Path, tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'shared board' / 'board.db'}"
    full_clone(repo, url)
    for where in clones_of(repo, tmp_path).values():
        made = lac_inprocess(where, "--json", "init", "--url", url)
        assert made.code == 0, made.err
        sees_dana(where)


OTHER_THINGS = {"empty": "", "another-tool": "[tool]\n\tmode = fast\n"}


@pytest.mark.parametrize("content", sorted(OTHER_THINGS))
def test_a_lacconfig_that_says_nothing_of_lac_lets_the_root_answer(
    repo: Path,
    tmp_path: Path,
    database: str,
    content: str,
) -> None:
    commit(repo, "other config", write(".lacconfig", OTHER_THINGS[content]))
    made = lac_inprocess(repo, "--json", "init", "--url", database)
    assert made.code == 0, made.err
    assert made.json["board"] == root_board(repo)
    assert root_board(repo) in schemas(database)
    # A clone with lac.url alone (no lac.board of its own) finds it too.
    assert lac_inprocess(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    other = clone(repo, tmp_path / "other")
    git(other, "config", "lac.url", database)
    sees_dana(other)


# What a project commits for its desks (the clone's own settings): lac keys,
# in subsections, none of them lac.board.
DESK_SETTINGS = '[lac "desk"]\n\tcopy = .env\n\tlink = node_modules\n\tsetup = make setup\n'


def test_init_url_on_a_clone_whose_lacconfig_sets_lac_but_no_board(
    repo: Path,
    tmp_path: Path,
    database: str,
) -> None:
    """A PostgreSQL clone with no lac.board of its own, whose committed
    .lacconfig holds lac settings but no lac.board: `git lac init --url`
    (a real process) goes on to the root commit, the origin's board."""
    commit(repo, "desk settings", write(".lacconfig", DESK_SETTINGS))
    assert lac_inprocess(repo, "init", "--url", database).code == 0
    assert lac_inprocess(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    other = clone(repo, tmp_path / "other clone")
    assert "lac.board" not in git(other, "config", "--list")
    made = lac_process(other, "init", "--url", database, "--json")
    assert made.code == 0, made
    assert made.json["board"] == root_board(repo)
    assert git(other, "config", "lac.board").strip() == root_board(repo)
    refused = lac_process(other, "lock", "core/auth.py", "--as", "erin")
    assert refused.code == 1 and "dana" in refused.err, refused


BAD = {
    "misspelt": "[lac]\n\tbaord = shop\n",
    "invalid": "[lac]\n\tboard = Drop;Table\n",
    "unparsable": "[lac\n",
}


@pytest.mark.parametrize("bad", sorted(BAD))
def test_a_bad_lacconfig_still_stops_in_one_line(
    repo: Path,
    tmp_path: Path,
    database: str,
    bad: str,
) -> None:
    commit(repo, "bad config", write(".lacconfig", BAD[bad]))
    before = schemas(database)
    line = one_line(lac_inprocess(repo, "init", "--url", database), 3)
    assert line.startswith("git lac: the .lacconfig committed at HEAD "), line
    assert schemas(database) == before
    assert "lac.url" not in git(repo, "config", "--list")


def test_a_shallow_clone_that_cannot_complete_the_rule_stops_in_one_line(
    repo: Path,
    tmp_path: Path,
    database: str,
) -> None:
    full_clone(repo, database)
    shallow = clone(repo, tmp_path / "shallow", "--depth", "1")
    git(shallow, "remote", "remove", "origin")  # nobody left to ask for the root
    before = schemas(database)
    line = one_line(lac_inprocess(shallow, "init", "--url", database), 3)
    assert "shallow clone" in line, line
    assert schemas(database) == before
