"""sql/ and hooks/ sit beside the package in the repository, yet ship inside
the wheel: build it, install it into a bare directory, and run from that copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from git_lacunari.shipped import shipped

from .conftest import REPO_ROOT, git, make_repo

SOURCE_IGNORED = shutil.ignore_patterns(
    ".git", ".venv", "tests", "bench", "build", "dist", "*.egg-info", "__pycache__", ".*_cache"
)


def test_this_checkout_finds_sql_and_hooks_beside_the_package() -> None:
    assert shipped("sql") == REPO_ROOT / "sql"
    assert shipped("hooks") == REPO_ROOT / "hooks"
    assert not (REPO_ROOT / "git_lacunari" / "sql").exists()
    assert not (REPO_ROOT / "git_lacunari" / "hooks").exists()


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{cmd} failed: {proc.stdout}\n{proc.stderr}"
    return proc


def test_wheel_installed_elsewhere_runs_init_and_the_guard(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LAC_AGENT")}
    # Build from a copy, offline, so this test neither writes into the checkout
    # nor races another one building beside it.
    source = tmp_path / "source"
    shutil.copytree(REPO_ROOT, source, ignore=SOURCE_IGNORED)
    sql_files = sorted(str(p.relative_to(source / "sql")) for p in (source / "sql").rglob("*.sql"))
    assert any("/functions/" in f for f in sql_files) and any("/queries/" in f for f in sql_files)
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(wheels), "."],
        source,
        env,
    )
    [wheel] = wheels.glob("git_lacunari-*.whl")
    target = tmp_path / "installed"
    run(
        [*pip, "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        tmp_path,
        env,
    )
    shutil.rmtree(source)  # nothing may come from the source any more

    # Every SQL file of the checkout ships, subfolders (functions/, queries/) included.
    shipped_sql = target / "git_lacunari" / "sql"
    assert sorted(p.name for p in shipped_sql.iterdir()) == ["README.md", "postgres", "sqlite"]
    assert sorted(str(p.relative_to(shipped_sql)) for p in shipped_sql.rglob("*.sql")) == sql_files
    assert (shipped_sql / "postgres" / "functions" / "casemap.sql").is_file()
    assert (target / "git_lacunari" / "hook_scripts" / "hook.template").is_file()
    env["PYTHONPATH"] = str(target)
    where = run(
        [
            sys.executable,
            "-c",
            "import git_lacunari.shipped as s; "
            "print(s.PACKAGE, s.shipped('sql'), s.shipped('hooks'), sep='\\n')",
        ],
        tmp_path,
        env,
    ).stdout.split()
    package = target / "git_lacunari"
    assert where == [str(package), str(package / "sql"), str(package / "hook_scripts")]

    lac = str(target / "bin" / "git-lac")
    repo = make_repo(tmp_path / "scratch")
    init = run([lac, "init"], repo, env)
    assert "board ready" in init.stdout + init.stderr
    run([lac, "hooks", "install"], repo, env)
    hook = (repo / ".git" / "hooks" / "pre-commit").read_text()
    assert lac in hook, "the hook runs the installed copy"
    run([lac, "--as", "dana", "lock", "core/auth.py"], repo, env)

    (repo / "core" / "auth.py").write_text("changed\n")
    git(repo, "add", "core/auth.py")
    before = git(repo, "rev-parse", "HEAD")
    refused = subprocess.run(
        ["git", "commit", "-qm", "erin"],
        cwd=repo,
        env={**env, "LAC_AGENT": "erin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 1, refused
    assert "core/auth.py  held by dana" in refused.stderr
    assert git(repo, "rev-parse", "HEAD") == before
    allowed = subprocess.run(
        ["git", "commit", "-qm", "dana"],
        cwd=repo,
        env={**env, "LAC_AGENT": "dana"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert allowed.returncode == 0, allowed
