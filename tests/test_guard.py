"""Guards fired by real `git commit` and `git push`, on both backends."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import REPO_ROOT, Result, git, lac_process

Lac = Callable[..., Result]
BIN = str(Path(sys.executable).parent)


def run_git(repo: Path, *args: str, agent: str, env: dict[str, str] | None = None) -> Result:
    """A real git command whose hooks find git-lac, acting as ``agent``."""
    full = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"], "LAC_AGENT": agent}
    full.update(env or {})
    proc = subprocess.run(["git", *args], cwd=repo, env=full, capture_output=True, text=True)
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def guarded(lac: Lac, repo: Path) -> Path:
    result = lac_process(repo, "hooks", "install")
    assert result.code == 0, result.err
    return repo


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def assert_refused_commit(result: Result, repo: Path, before: str, *paths: str) -> None:
    assert result.code != 0, result
    assert "commit refused" in result.err
    for path in paths:
        assert f"  {path}" in result.err, result.err
    assert "--no-verify" in result.err
    assert head(repo) == before, "the commit was made anyway"


# --- pre-commit -----------------------------------------------------------------


def test_modified_path_held_by_another_is_refused_holder_passes(guarded: Path, lac: Lac) -> None:
    repo = guarded
    lac("task", "add", "auth", "--write", "core/auth.py")
    assert lac("claim", "1", "--as", "dana").code == 0
    (repo / "core" / "auth.py").write_text("changed by erin\n")
    git(repo, "add", "core/auth.py")
    before = head(repo)
    refused = run_git(repo, "commit", "-qm", "erin", agent="erin")
    assert_refused_commit(refused, repo, before, "core/auth.py")
    assert "held by dana (write lock core/auth.py, task #1, heartbeat" in refused.err
    allowed = run_git(repo, "commit", "-qm", "dana", agent="dana")
    assert allowed.code == 0, allowed.err
    assert head(repo) != before


@pytest.mark.parametrize("change", ["add", "delete", "typechange", "rename-from", "rename-to"])
def test_each_kind_of_staged_change(guarded: Path, lac: Lac, change: str) -> None:
    repo = guarded
    held = {
        "add": "core/new.py",
        "delete": "core/auth.py",
        "typechange": "core/auth.py",
        "rename-from": "core/auth.py",
        "rename-to": "lib/",
    }[change]
    assert lac("lock", held, "--as", "dana").code == 0
    if change == "add":
        (repo / "core" / "new.py").write_text("new\n")
        git(repo, "add", "core/new.py")
    elif change == "delete":
        git(repo, "rm", "-q", "core/auth.py")
    elif change == "typechange":
        (repo / "core" / "auth.py").unlink()
        os.symlink("../README", repo / "core" / "auth.py")
        git(repo, "add", "core/auth.py")
    else:
        (repo / "lib").mkdir()
        git(repo, "mv", "core/auth.py", "lib/auth.py")
    before = head(repo)
    shown = "lib/auth.py" if change == "rename-to" else held.rstrip("/")
    assert_refused_commit(run_git(repo, "commit", "-qm", change, agent="erin"), repo, before, shown)


def test_commit_all_and_commit_path_use_the_temporary_index(guarded: Path, lac: Lac) -> None:
    repo = guarded
    assert lac("lock", "core/", "--as", "dana").code == 0
    (repo / "core" / "auth.py").write_text("edited, not staged\n")
    before = head(repo)
    # Nothing is staged in the real index: only the temporary one shows the change.
    assert_refused_commit(
        run_git(repo, "commit", "-qam", "all", agent="erin"), repo, before, "core/auth.py"
    )
    assert_refused_commit(
        run_git(repo, "commit", "-qm", "path", "core/auth.py", agent="erin"),
        repo,
        before,
        "core/auth.py",
    )
    (repo / "README").write_text("free to change\n")
    allowed = run_git(repo, "commit", "-qm", "readme only", "README", agent="erin")
    assert allowed.code == 0, allowed.err


def test_read_lock_held_by_another_refuses_writes(guarded: Path, lac: Lac) -> None:
    repo = guarded
    assert lac("lock", "README", "--read", "--as", "dana").code == 0
    (repo / "README").write_text("changed\n")
    git(repo, "add", "README")
    before = head(repo)
    refused = run_git(repo, "commit", "-qm", "x", agent="erin")
    assert_refused_commit(refused, repo, before, "README")
    assert "held by dana (read lock README, no task, locked" in refused.err


def test_guard_off_skips_and_says_so(guarded: Path, lac: Lac) -> None:
    repo = guarded
    assert lac("lock", "README", "--as", "dana").code == 0
    (repo / "README").write_text("changed\n")
    git(repo, "add", "README")
    result = run_git(repo, "commit", "-qm", "x", agent="erin", env={"LAC_GUARD": "off"})
    assert result.code == 0 and "guard skipped (LAC_GUARD=off)" in result.err


def test_json_from_guard(guarded: Path, lac: Lac) -> None:
    repo = guarded
    assert lac("lock", "README", "--as", "dana").code == 0
    (repo / "README").write_text("changed\n")
    git(repo, "add", "README")
    result = lac("guard", "pre-commit", "--json", "--as", "erin")
    assert result.code == 1
    assert result.json["ok"] is False
    refused = result.json["refused"]
    assert (refused["reason"], refused["path"], refused["holder"], refused["mode"]) == (
        "path_locked",
        "README",
        "dana",
        "write",
    )
    assert [(c["path"], c["wanted"], c["holder"]) for c in refused["conflicts"]] == [
        ("README", "write", "dana")
    ]
    assert result.json["message"] == "dana holds README (no task)"


# --- installing ------------------------------------------------------------------


def test_foreign_hook_is_kept_runs_and_comes_back(lac: Lac, repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    foreign = '#!/bin/sh\necho foreign >> "$(git rev-parse --git-dir)/foreign.log"\n'
    (hooks / "pre-commit").write_text(foreign)
    (hooks / "pre-commit").chmod(0o755)
    first = lac_process(repo, "hooks", "install", "--json")
    assert {h["hook"]: h["action"] for h in first.json["hooks"]} == {
        "pre-commit": "chained",
        "pre-push": "installed",
        "pre-merge-commit": "installed",
        "post-commit": "installed",  # landing (issue 25): tells the board the claims' tips
        "commit-msg": "installed",  # and names the claims' tasks in the messages
    }
    again = lac_process(repo, "hooks", "install", "--json")
    assert {h["action"] for h in again.json["hooks"]} == {"unchanged"}
    assert (hooks / "pre-commit.legacy").read_text() == foreign
    (repo / "README").write_text("x\n")
    git(repo, "add", "README")
    assert run_git(repo, "commit", "-qm", "x", agent="erin").code == 0
    assert (repo / ".git" / "foreign.log").read_text() == "foreign\n"
    # A foreign hook that fails still stops the commit.
    (hooks / "pre-commit.legacy").write_text("#!/bin/sh\nexit 7\n")
    (repo / "README").write_text("y\n")
    git(repo, "add", "README")
    assert run_git(repo, "commit", "-qm", "y", agent="erin").code != 0
    (hooks / "pre-commit.legacy").write_text(foreign)
    removed = lac_process(repo, "hooks", "uninstall", "--json")
    assert {h["hook"]: h["action"] for h in removed.json["hooks"]} == {
        "pre-commit": "restored",
        "pre-push": "removed",
        "pre-merge-commit": "removed",
        "post-commit": "removed",
        "commit-msg": "removed",
    }
    assert (hooks / "pre-commit").read_text() == foreign
    assert not (hooks / "pre-push").exists() and not (hooks / "pre-commit.legacy").exists()


def test_install_refuses_to_lose_a_hook(lac: Lac, repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-push").write_text("#!/bin/sh\necho current\n")
    (hooks / "pre-push.legacy").write_text("#!/bin/sh\necho older\n")
    result = lac_process(repo, "hooks", "install")
    assert result.code == 1 and "pre-push.legacy already exists" in result.err
    assert not (hooks / "pre-commit").exists(), "nothing may be written when refusing"
    forced = lac_process(repo, "hooks", "install", "--force")
    assert forced.code == 0
    assert "echo current" in (hooks / "pre-push.legacy").read_text()


def test_core_hookspath_is_honoured(lac: Lac, repo: Path) -> None:
    git(repo, "config", "core.hooksPath", ".githooks")
    assert lac_process(repo, "hooks", "install").code == 0
    assert (repo / ".githooks" / "pre-commit").exists()
    assert lac("lock", "README", "--as", "dana").code == 0
    (repo / "README").write_text("x\n")
    git(repo, "add", "README")
    before = head(repo)
    assert_refused_commit(run_git(repo, "commit", "-qm", "x", agent="erin"), repo, before, "README")


def test_two_linked_worktrees_two_agents(guarded: Path, lac: Lac, tmp_path: Path) -> None:
    repo = guarded
    one, two = tmp_path / "wt-one", tmp_path / "wt-two"
    git(repo, "worktree", "add", "-q", "-b", "one", str(one))
    git(repo, "worktree", "add", "-q", "-b", "two", str(two))
    full = {k: v for k, v in os.environ.items() if k != "LAC_AGENT"}
    assert lac("lock", "core/auth.py", cwd=one, env={}).code == 0  # agent tester@wt-one
    for where, name in ((one, "tester@wt-one"), (two, "tester@wt-two")):
        (where / "core" / "auth.py").write_text(f"edit from {name}\n")
        git(where, "add", "core/auth.py")
    proc = subprocess.run(
        ["git", "commit", "-qm", "two"],
        cwd=two,
        capture_output=True,
        text=True,
        env={**full, "PATH": BIN + os.pathsep + full["PATH"]},
    )
    assert proc.returncode != 0 and "held by tester@wt-one" in proc.stderr
    proc = subprocess.run(
        ["git", "commit", "-qm", "one"],
        cwd=one,
        capture_output=True,
        text=True,
        env={**full, "PATH": BIN + os.pathsep + full["PATH"]},
    )
    assert proc.returncode == 0, proc.stderr


# --- pre-push --------------------------------------------------------------------


@pytest.fixture
def remote(guarded: Path, tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(guarded, "remote", "add", "origin", str(bare))
    git(guarded, "push", "-q", "--no-verify", "origin", "main")
    return bare


def commit_file(repo: Path, path: str, text: str, message: str) -> str:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    git(repo, "add", path)
    git(repo, "commit", "-qm", message, "--no-verify")
    return head(repo)


def remote_head(bare: Path, ref: str) -> str | None:
    proc = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", ref], cwd=bare, capture_output=True, text=True
    )
    return proc.stdout.strip() or None


def test_push_refused_naming_ref_commit_path_holder(guarded: Path, remote: Path, lac: Lac) -> None:
    repo = guarded
    sha = commit_file(repo, "core/auth.py", "offline edit\n", "edit")  # committed before the lock
    assert lac("lock", "core/", "--as", "dana").code == 0
    result = run_git(repo, "push", "origin", "main", agent="erin")
    assert result.code != 0
    assert "push refused" in result.err
    assert f"refs/heads/main {sha[:12]} core/auth.py  held by dana" in result.err
    assert remote_head(remote, "main") != sha
    assert run_git(repo, "push", "-q", "origin", "main", agent="dana").code == 0
    assert remote_head(remote, "main") == sha


def test_multi_ref_new_branch_force_push_and_deletion(
    guarded: Path, remote: Path, lac: Lac
) -> None:
    repo = guarded
    base = head(repo)
    free = commit_file(repo, "README", "free\n", "free change")
    git(repo, "checkout", "-q", "-b", "feature", base)
    held = commit_file(repo, "core/auth.py", "held change\n", "held change")
    git(repo, "checkout", "-q", "main")
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    # Two refs at once, one of them a new branch: the whole push is refused.
    both = run_git(repo, "push", "origin", "main", "feature", agent="erin")
    assert both.code != 0 and f"refs/heads/feature {held[:12]} core/auth.py" in both.err
    assert remote_head(remote, "main") == base and remote_head(remote, "feature") is None
    assert run_git(repo, "push", "-q", "origin", "main", agent="erin").code == 0
    # A force push that rewrites main to include the held change.
    git(repo, "checkout", "-q", "-B", "main", held)
    forced = run_git(repo, "push", "-f", "origin", "main", agent="erin")
    assert forced.code != 0 and "core/auth.py" in forced.err
    assert remote_head(remote, "main") == free
    # Deleting a branch pushes no commits: allowed.
    git(repo, "push", "-q", "--no-verify", "origin", f"{free}:refs/heads/old")
    deleted = run_git(repo, "push", "-q", "origin", ":old", agent="erin")
    assert deleted.code == 0, deleted.err
    assert remote_head(remote, "old") is None


# --- an unreachable board ----------------------------------------------------------

UNREACHABLE = "postgresql://nobody@127.0.0.1:1/nowhere"


@pytest.fixture
def offline_repo(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    assert lac_process(repo, "hooks", "install").code == 0
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "config", "lac.url", UNREACHABLE)
    return repo, bare


def test_unreachable_board_commit_warns_push_refuses(offline_repo: tuple[Path, Path]) -> None:
    repo, bare = offline_repo
    (repo / "README").write_text("offline\n")
    git(repo, "add", "README")
    commit = run_git(repo, "commit", "-qm", "offline", agent="erin")
    assert commit.code == 0, commit.err
    assert "cannot reach the board" in commit.err and "allowed unchecked" in commit.err
    push = run_git(repo, "push", "origin", "main", agent="erin")
    assert push.code != 0 and "push refused" in push.err
    assert remote_head(bare, "main") is None


def test_unreachable_board_policy_is_configurable(offline_repo: tuple[Path, Path]) -> None:
    repo, bare = offline_repo
    git(repo, "config", "lac.guard.offline", "refuse")
    (repo / "README").write_text("offline\n")
    git(repo, "add", "README")
    before = head(repo)
    commit = run_git(repo, "commit", "-qm", "offline", agent="erin")
    assert commit.code != 0 and "commit refused" in commit.err and head(repo) == before
    git(repo, "config", "lac.guard.offline", "warn")
    assert run_git(repo, "commit", "-qm", "offline", agent="erin").code == 0
    push = run_git(repo, "push", "-q", "origin", "main", agent="erin")
    assert push.code == 0 and "allowed unchecked" in push.err
    assert remote_head(bare, "main") == head(repo)


# --- the pre-commit framework --------------------------------------------------------


@pytest.mark.slow
def test_pre_commit_framework_runs_our_manifest_in_both_stages(
    repo: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Backend-independent, so on the embedded board only."""
    assert lac_process(repo, "init").code == 0
    project_rev = git(REPO_ROOT, "rev-parse", "HEAD").strip()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {REPO_ROOT}\n  rev: {project_rev}\n  hooks:\n"
        "  - id: lac-guard\n  - id: lac-guard-push\n"
    )
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-qm", "use pre-commit", "--no-verify")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    env = {"PRE_COMMIT_HOME": str(tmp_path_factory.getbasetemp() / "pre-commit-cache")}
    proc = subprocess.run(
        [str(Path(BIN) / "pre-commit"), "install", "-t", "pre-commit", "-t", "pre-push"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr
    assert lac_process(repo, "lock", "core/auth.py", "--as", "dana").code == 0

    (repo / "core" / "auth.py").write_text("erin's edit\n")
    git(repo, "add", "core/auth.py")
    before = head(repo)
    refused = run_git(repo, "commit", "-qm", "erin", agent="erin", env=env)
    assert refused.code != 0, refused
    assert "held by dana" in refused.out + refused.err and head(repo) == before

    sha = commit_file(repo, "core/auth.py", "committed around the hook\n", "no-verify")
    pushed = run_git(repo, "push", "origin", "main", agent="erin", env=env)
    assert pushed.code != 0, pushed
    assert f"{sha[:12]} core/auth.py  held by dana" in pushed.out + pushed.err
    assert remote_head(bare, "main") != sha
    allowed = run_git(repo, "push", "-q", "origin", "main", agent="dana", env=env)
    assert allowed.code == 0, allowed.out + allowed.err


def test_sqlite_hook_path_imports_neither_psycopg_nor_pygit2_nor_click(repo: Path) -> None:
    """Every commit pays for what the hook imports: on the embedded board, only the light parts."""
    assert lac_process(repo, "init").code == 0
    (repo / "README").write_text("staged\n")
    git(repo, "add", "README")
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "git_lacunari", "guard", "pre-commit"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "git_lacunari.store.sqlite" in imported, "the guard did not open the board"
    for heavy in ("psycopg", "pygit2", "click"):
        assert heavy not in imported, f"the hook path imported {heavy}"
