"""The installed hooks when git-lac is gone, in repositories with no board,
and under a global core.hooksPath."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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


# --- LAC_GUARD=off when git-lac is gone or cannot start (issue 22) -----------------

SKIPPED = "git lac: {hook} guard skipped (LAC_GUARD=off)"


@pytest.fixture
def broken_venv(repo: Path, tmp_path: Path) -> Path:
    """Hooks installed by a git-lac whose package is then gone from its venv
    (`pip uninstall` of the package under a console script that stays, a venv
    rebuilt without it): the script runs, its import fails."""
    bare = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    script = bare / "bin" / "git-lac"
    # pip's own console script, pointed at the venv that lacks the package.
    original = (Path(BIN) / "git-lac").read_text().splitlines(keepends=True)
    script.write_text(f"#!{bare / 'bin' / 'python'}\n" + "".join(original[1:]))
    script.chmod(0o755)
    probe = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'git_lacunari'" in probe.stderr
    assert lac_process(repo, "init").code == 0
    assert lac_process(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    installed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from git_lacunari.entry import main; main()",
            "hooks",
            "install",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stderr
    # Point the installed hooks at the broken script, as its own install would have.
    for name in ("pre-commit", "pre-push", "pre-merge-commit"):
        hook = repo / ".git" / "hooks" / name
        text = hook.read_text()
        assert "\nLAC='" in text
        start = text.index("\nLAC='") + len("\nLAC='")
        end = text.index("'\n", start)
        hook.write_text(text[:start] + str(script) + text[end:])
    return repo


@pytest.mark.parametrize("value", ["off", "OFF", " Off ", "0", "false", "No"])
def test_lac_guard_off_passes_when_git_lac_is_gone_and_offline_refuses(
    uninstalled: Path, tmp_path: Path, value: str
) -> None:
    repo = uninstalled
    git(repo, "config", "lac.guard.offline", "refuse")
    (repo / "core" / "auth.py").write_text("held by dana; erin switched the guard off\n")
    git(repo, "add", "core/auth.py")
    before = head(repo)
    env = {**os.environ, "PATH": NO_LAC_PATH, "LAC_AGENT": "erin", "LAC_GUARD": value}
    done = subprocess.run(
        ["git", "commit", "-qm", "x"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [SKIPPED.format(hook="pre-commit")]
    assert head(repo) != before
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    pushed = subprocess.run(
        ["git", "push", "-q", str(bare), "main"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert pushed.returncode == 0, pushed.stderr
    assert pushed.stderr.strip().splitlines() == [SKIPPED.format(hook="pre-push")]


@pytest.mark.parametrize("value", ["", "on", "1", "o ff", "offf", "yes"])
def test_other_lac_guard_values_do_not_skip_the_missing_git_lac_policy(
    uninstalled: Path, value: str
) -> None:
    repo = uninstalled
    git(repo, "config", "lac.guard.offline", "refuse")
    (repo / "README").write_text("x\n")
    git(repo, "add", "README")
    before = head(repo)
    env = {**os.environ, "PATH": NO_LAC_PATH, "LAC_AGENT": "erin", "LAC_GUARD": value}
    result = subprocess.run(
        ["git", "commit", "-qm", "x"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0 and head(repo) == before
    assert result.stderr.strip().splitlines() == [
        f"{NOTICE} (commit refused: lac.guard.offline = refuse)"
    ]


def test_lac_guard_off_passes_when_git_lac_cannot_start(broken_venv: Path, tmp_path: Path) -> None:
    """The package is gone, its script is not: without LAC_GUARD the script's
    own failure refuses the commit (git-lac is there, and nothing was
    checked); LAC_GUARD=off gets out, merges too, with one line each."""
    repo = broken_venv
    git(repo, "config", "lac.guard.offline", "refuse")
    (repo / "core" / "auth.py").write_text("changed\n")
    git(repo, "add", "core/auth.py")
    before = head(repo)
    stuck = plain_git(repo, "commit", "-qm", "x", path=NO_LAC_PATH)
    assert stuck.code != 0 and head(repo) == before
    env = {**os.environ, "PATH": NO_LAC_PATH, "LAC_AGENT": "erin", "LAC_GUARD": "off"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)

    done = run("commit", "-qm", "x")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [SKIPPED.format(hook="pre-commit")]
    git(repo, "checkout", "-qb", "side", "HEAD~1")
    (repo / "README").write_text("side\n")
    git(repo, "commit", "-qam", "side", "--no-verify")
    merged = run("merge", "-q", "--no-edit", "main")
    assert merged.returncode == 0, merged.stderr
    assert merged.stderr.strip().splitlines() == [SKIPPED.format(hook="pre-merge-commit")]


def test_lac_guard_off_still_runs_the_chained_hook(uninstalled: Path) -> None:
    """LAC_GUARD switches lac's guard off, not the user's own hook kept beside it."""
    repo = uninstalled
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit.legacy").write_text("#!/bin/sh\necho 'legacy says no' >&2\nexit 7\n")
    (hooks / "pre-commit.legacy").chmod(0o755)
    (repo / "README").write_text("x\n")
    git(repo, "add", "README")
    env = {**os.environ, "PATH": NO_LAC_PATH, "LAC_GUARD": "off"}
    result = subprocess.run(
        ["git", "commit", "-qm", "x"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0 and result.stderr.strip() == "legacy says no"


def test_the_server_hook_never_obeys_lac_guard(repo: Path, tmp_path: Path) -> None:
    """pre-receive, git-lac gone: LAC_GUARD=off from the pusher changes nothing."""
    server = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(server))
    bindir = tmp_path / "gone-bin"
    bindir.mkdir()
    shutil.copy2(Path(BIN) / "git-lac", bindir / "git-lac")
    installed = subprocess.run(
        [str(bindir / "git-lac"), "hooks", "install", "--server"],
        cwd=server,
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stderr
    (bindir / "git-lac").unlink()
    env = {**os.environ, "PATH": NO_LAC_PATH, "LAC_GUARD": "off"}
    pushed = subprocess.run(
        ["git", "push", "-q", str(server), "main"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert pushed.returncode != 0
    assert "git-lac is not installed on the server; push refused" in pushed.stderr
