"""The installed hooks when git-lac is gone, in repositories with no board,
and under a global core.hooksPath."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Result, git, lac_process, make_repo
from .test_guard import BIN, head

Lac = Callable[..., Result]
NO_LAC_PATH = "/usr/local/bin:/usr/bin:/bin"  # git, and no git-lac


def plain_git(repo: Path, *args: str, path: str, agent: str = "erin") -> Result:
    env = {**os.environ, "PATH": path, "LAC_AGENT": agent}
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def test_no_git_lac_on_the_test_path() -> None:
    assert shutil.which("git-lac", path=NO_LAC_PATH) is None


@pytest.fixture
def uninstalled(repo: Path, tmp_path: Path) -> Path:
    """Hooks installed by a git-lac that is then removed (as `pip uninstall` removes
    the console script the hooks name), the board still there."""
    bindir = tmp_path / "gone-bin"
    bindir.mkdir()
    shutil.copy2(Path(BIN) / "git-lac", bindir / "git-lac")
    for args in (("init",), ("hooks", "install"), ("lock", "core/auth.py", "--as", "dana")):
        proc = subprocess.run(
            [str(bindir / "git-lac"), *args], cwd=repo, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
    assert str(bindir / "git-lac") in (repo / ".git" / "hooks" / "pre-commit").read_text()
    (bindir / "git-lac").unlink()
    return repo


NOTICE = (
    "git lac: git-lac is not installed; install it, run `git lac hooks uninstall`, "
    "or set LAC_GUARD=off"
)


def test_without_git_lac_commits_pass_with_one_line(uninstalled: Path, tmp_path: Path) -> None:
    repo = uninstalled
    (repo / "core" / "auth.py").write_text("held, but nobody can check\n")
    git(repo, "add", "core/auth.py")
    result = plain_git(repo, "commit", "-qm", "x", path=NO_LAC_PATH)
    assert result.code == 0, result.err
    assert result.err.strip().splitlines() == [f"{NOTICE} (commit allowed unchecked)"]
    assert "not found" not in result.err
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    pushed = plain_git(repo, "push", "-q", str(bare), "main", path=NO_LAC_PATH)
    assert pushed.code == 0 and "(push allowed unchecked)" in pushed.err


def test_without_git_lac_refuse_policy_refuses(uninstalled: Path) -> None:
    repo = uninstalled
    git(repo, "config", "lac.guard.offline", "refuse")
    (repo / "README").write_text("x\n")
    git(repo, "add", "README")
    before = head(repo)
    result = plain_git(repo, "commit", "-qm", "x", path=NO_LAC_PATH)
    assert result.code != 0
    assert result.err.strip().splitlines() == [
        f"{NOTICE} (commit refused: lac.guard.offline = refuse)"
    ]
    assert head(repo) == before
    off = plain_git(repo, "-c", "lac.guard.offline=warn", "commit", "-qm", "x", path=NO_LAC_PATH)
    assert off.code == 0


def test_a_repository_without_a_board_is_never_given_one(repo: Path, tmp_path: Path) -> None:
    result = lac_process(repo, "hooks", "install")
    assert result.code == 0, result.err
    (repo / "README").write_text("x\n")
    git(repo, "add", "README")
    path = f"{BIN}{os.pathsep}{os.environ['PATH']}"
    committed = plain_git(repo, "commit", "-qm", "x", path=path)
    assert committed.code == 0 and committed.err == "", committed.err
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    pushed = plain_git(repo, "push", "-q", str(bare), "main", path=path)
    assert pushed.code == 0 and pushed.err == "", pushed.err
    assert not (repo / ".git" / "lacunari").exists(), "a hook created a board"
    # A configured embedded board that is missing is not created either: it is unreachable.
    git(repo, "config", "lac.url", f"sqlite://{tmp_path / 'elsewhere' / 'board.db'}")
    (repo / "README").write_text("y\n")
    git(repo, "add", "README")
    warned = plain_git(repo, "commit", "-qm", "y", path=path)
    assert warned.code == 0 and "allowed unchecked" in warned.err
    assert not (tmp_path / "elsewhere").exists()


def test_a_global_hooks_path_needs_consent_then_stays_silent_without_a_board(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared-hooks"
    git(repo, "config", "--global", "core.hooksPath", str(shared))
    refused = lac_process(repo, "hooks", "install")
    assert refused.code == 2
    assert f"core.hooksPath comes from the global git config ({shared})" in refused.err
    assert "--global-hooks-path" in refused.err
    assert not shared.exists(), "nothing may be written when refusing"
    installed = lac_process(repo, "hooks", "install", "--global-hooks-path")
    assert installed.code == 0, installed.err
    assert (shared / "pre-commit").exists()
    path = f"{BIN}{os.pathsep}{os.environ['PATH']}"
    # Guarded where there is a board...
    assert lac("lock", "README", "--as", "dana").code == 0
    (repo / "README").write_text("x\n")
    git(repo, "add", "README")
    assert plain_git(repo, "commit", "-qm", "x", path=path).code != 0
    # ...silent, and board-less, everywhere else.
    other = make_repo(tmp_path / "unrelated")
    (other / "README").write_text("x\n")
    git(other, "add", "README")
    result = plain_git(other, "commit", "-qm", "x", path=path)
    assert result.code == 0 and result.err == "", result.err
    assert not (other / ".git" / "lacunari").exists()
    # A repository's own core.hooksPath is not the shared one: no consent needed.
    git(other, "config", "core.hooksPath", ".githooks")
    assert lac_process(other, "hooks", "install").code == 0
