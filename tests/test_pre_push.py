"""The client pre-push guard blames only commits new to the destination,
however the push is spelled (README, "Guarding commits", the pre-push rule)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Result, git, lac_process
from .test_guard import commit_file, head, remote_head, run_git

Lac = Callable[..., Result]


@pytest.fixture
def guarded(lac: Lac, repo: Path) -> Path:
    result = lac_process(repo, "hooks", "install")
    assert result.code == 0, result.err
    return repo


@pytest.fixture
def world(guarded: Path, lac: Lac, tmp_path: Path) -> dict[str, Path]:
    """origin has old history that changed core/auth.py; dana holds it *now*."""
    repo = guarded
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(repo, "remote", "add", "origin", str(origin))
    commit_file(repo, "core/auth.py", "old work\n", "old history")
    git(repo, "tag", "-a", "-m", "old", "v-old")
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    return {"repo": repo, "origin": origin, "tmp": tmp_path}


def bare(tmp: Path, name: str) -> Path:
    path = tmp / f"{name}.git"
    git(tmp, "init", "-q", "--bare", str(path))
    return path


# Each form: (push arguments given the destination, the ref that ends up there).
FORMS: dict[str, Callable[[Path, Path], tuple[list[str], Path, str]]] = {
    "by name": lambda repo, tmp: (["origin", "work"], tmp / "origin.git", "work"),
    "by path": lambda repo, tmp: ([str(tmp / "origin.git"), "work"], tmp / "origin.git", "work"),
    "by file url": lambda repo, tmp: (
        [f"file://{tmp / 'origin.git'}", "work"],
        tmp / "origin.git",
        "work",
    ),
    "new remote": lambda repo, tmp: (["fresh", "work"], tmp / "fresh.git", "work"),
    "new url": lambda repo, tmp: ([str(tmp / "fresh.git"), "work"], tmp / "fresh.git", "work"),
    "mirror": lambda repo, tmp: (["--mirror", str(tmp / "fresh.git")], tmp / "fresh.git", "work"),
    "all": lambda repo, tmp: (["--all", str(tmp / "fresh.git")], tmp / "fresh.git", "work"),
    "by sha": lambda repo, tmp: (
        ["origin", f"{head(repo)}:refs/heads/work"],
        tmp / "origin.git",
        "work",
    ),
}


def prepare(world: dict[str, Path], form: str) -> tuple[list[str], Path, str]:
    repo, tmp = world["repo"], world["tmp"]
    fresh = bare(tmp, "fresh")
    if form == "new remote":
        git(repo, "remote", "add", "fresh", str(fresh))
    return FORMS[form](repo, tmp)


@pytest.mark.parametrize("form", list(FORMS))
def test_a_clean_new_branch_passes_however_pushed(world: dict[str, Path], form: str) -> None:
    repo = world["repo"]
    git(repo, "checkout", "-q", "-b", "work")
    clean = commit_file(repo, "README", "clean\n", "clean")
    args, where, ref = prepare(world, form)
    pushed = run_git(repo, "push", "-q", *args, agent="erin")
    assert pushed.code == 0, pushed.err
    assert remote_head(where, ref) == clean


@pytest.mark.parametrize("form", list(FORMS))
def test_a_new_offending_commit_is_refused_however_pushed(
    world: dict[str, Path], form: str
) -> None:
    repo = world["repo"]
    git(repo, "checkout", "-q", "-b", "work")
    bad = commit_file(repo, "core/auth.py", "new work\n", "new offending")
    commit_file(repo, "README", "clean on top\n", "clean")
    args, where, ref = prepare(world, form)
    refused = run_git(repo, "push", *args, agent="erin")
    assert refused.code != 0, refused
    assert f"{bad[:12]} core/auth.py  held by dana" in refused.err, refused.err
    assert remote_head(where, ref) is None


def test_tags_old_pass_new_offending_refused(world: dict[str, Path]) -> None:
    repo, tmp = world["repo"], world["tmp"]
    fresh = bare(tmp, "fresh")
    old = run_git(repo, "push", "-q", "--tags", str(fresh), agent="erin")
    assert old.code == 0, old.err
    bad = commit_file(repo, "core/auth.py", "new work\n", "new offending")
    git(repo, "tag", "v-new")
    refused = run_git(repo, "push", "--tags", "origin", agent="erin")
    assert refused.code != 0 and f"refs/tags/v-new {bad[:12]} core/auth.py" in refused.err
    assert remote_head(world["origin"], "v-new") is None


def test_history_no_remote_has_seen_is_new_everywhere(
    guarded: Path, lac: Lac, tmp_path: Path
) -> None:
    """The rule's other side: a commit never pushed anywhere is new to a fresh remote."""
    repo = guarded
    sha = commit_file(repo, "core/auth.py", "never published\n", "local only")
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    fresh = bare(tmp_path, "fresh")
    refused = run_git(repo, "push", str(fresh), "main", agent="erin")
    assert refused.code != 0 and f"{sha[:12]} core/auth.py" in refused.err
