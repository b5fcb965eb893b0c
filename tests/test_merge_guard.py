"""The pre-merge-commit guard: `git merge` refused when the merge changes a
path another agent holds; natively and through the real pre-commit framework."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import REPO_ROOT, Result, git, lac_process
from .test_guard import BIN, commit_file, head, run_git

Lac = Callable[..., Result]


@pytest.fixture
def guarded(lac: Lac, repo: Path) -> Path:
    result = lac_process(repo, "hooks", "install")
    assert result.code == 0, result.err
    return repo


def feature_touching_held_path(repo: Path) -> str:
    """A local branch that changed core/auth.py (before the lock), and main moved on."""
    base = head(repo)
    git(repo, "checkout", "-q", "-b", "feature")
    sha = commit_file(repo, "core/auth.py", "feature work\n", "feature")
    git(repo, "checkout", "-q", "main")
    commit_file(repo, "README", "main moved\n", "main moves")
    assert head(repo) != base
    return sha


def test_merge_of_a_branch_changing_a_held_path_is_refused(guarded: Path, lac: Lac) -> None:
    repo = guarded
    sha = feature_touching_held_path(repo)
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    before = head(repo)
    refused = run_git(repo, "merge", "--no-edit", "feature", agent="erin")
    assert refused.code != 0, refused
    assert "merge refused" in refused.err
    assert f"MERGE_HEAD {sha[:12]} core/auth.py  held by dana" in refused.err, refused.err
    assert head(repo) == before, "the merge commit was made anyway"
    git(repo, "merge", "--abort")
    allowed = run_git(repo, "merge", "-q", "--no-edit", "feature", agent="dana")
    assert allowed.code == 0, allowed.err
    assert head(repo) != before


def test_merging_what_a_remote_already_has_passes(guarded: Path, lac: Lac, tmp_path: Path) -> None:
    """Bringing in published work (the holder's own pushed commits, say) is no new change."""
    repo = guarded
    feature_touching_held_path(repo)
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(repo, "remote", "add", "origin", str(origin))
    git(repo, "push", "-q", "--no-verify", "origin", "feature")
    git(repo, "fetch", "-q", "origin")
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    merged = run_git(repo, "merge", "-q", "--no-edit", "origin/feature", agent="erin")
    assert merged.code == 0, merged.err
    assert len(git(repo, "rev-list", "--parents", "-1", "HEAD").split()) == 3


def test_a_merges_own_change_concluded_with_commit_is_refused(guarded: Path, lac: Lac) -> None:
    """A merge stopped (--no-commit, or conflicts) and finished with `git commit`:
    the pre-commit hook judges it as a merge, its own changes included."""
    repo = guarded
    base = head(repo)
    git(repo, "checkout", "-q", "-b", "side")
    commit_file(repo, "docs/x.md", "x\n", "side")
    git(repo, "checkout", "-q", "main")
    commit_file(repo, "README", "moved\n", "main moves")
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    git(repo, "merge", "-q", "--no-commit", "side")
    (repo / "core" / "auth.py").write_text("slipped in\n")
    git(repo, "add", "core/auth.py")
    before = head(repo)
    refused = run_git(repo, "commit", "-qm", "merge side", agent="erin")
    assert refused.code != 0 and "merge refused" in refused.err, refused
    assert "MERGE (the merge) core/auth.py  held by dana" in refused.err, refused.err
    assert head(repo) == before != base
    git(repo, "checkout", "-q", "HEAD", "--", "core/auth.py")
    clean = run_git(repo, "commit", "-qm", "merge side", agent="erin")
    assert clean.code == 0, clean.err


@pytest.mark.slow
def test_the_pre_commit_framework_runs_the_merge_guard(
    repo: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Backend-independent, so on the embedded board only."""
    assert lac_process(repo, "init").code == 0
    project_rev = git(REPO_ROOT, "rev-parse", "HEAD").strip()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {REPO_ROOT}\n  rev: {project_rev}\n  hooks:\n  - id: lac-guard-merge\n"
    )
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-qm", "use pre-commit", "--no-verify")
    env = {"PRE_COMMIT_HOME": str(tmp_path_factory.getbasetemp() / "pre-commit-cache")}
    proc = subprocess.run(
        [str(Path(BIN) / "pre-commit"), "install", "-t", "pre-merge-commit"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr
    sha = feature_touching_held_path(repo)
    assert lac_process(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    before = head(repo)
    refused = run_git(repo, "merge", "--no-edit", "feature", agent="erin", env=env)
    assert refused.code != 0, refused
    assert f"{sha[:12]} core/auth.py  held by dana" in refused.out + refused.err
    assert head(repo) == before
    git(repo, "merge", "--abort")
    allowed = run_git(repo, "merge", "-q", "--no-edit", "feature", agent="dana", env=env)
    assert allowed.code == 0, allowed.out + allowed.err
