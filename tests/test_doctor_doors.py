"""`git lac doctor` and the doors it vouches for, attacked (issue 22): a hook
that is there but cannot run, another tool's hook, a stale remote-tracking
ref behind a rewind, a bare server, a database whose own default isolation
is not READ COMMITTED, a board URL that names no board file, and `git lac
--help` from an editable install.

Real repositories, real hooks fired by real `git commit` / `git push`, bare
servers, real SQLite files and real PostgreSQL databases made and dropped."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from .conftest import Result, git, lac_process
from .test_doors import new_database
from .test_guard import head
from .test_server_guard import commit, write


def doctor(where: Path, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    said = lac_process(where, "doctor", "--json", env=env)
    assert said.code in (0, 1), said
    assert said.json["ok"] is (said.code == 0)
    return said.code, {c["check"]: c for c in said.json["checks"]}


def git_env() -> dict[str, str]:
    """What a real `git commit` / `git push` runs hooks with: git-lac on PATH."""
    return {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
    }


def run_git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env or git_env(), capture_output=True, text=True
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def not_executable(path: Path) -> None:
    path.chmod(path.stat().st_mode & ~(stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))


# --- 1. hooks that are there but do not guard ----------------------------------------


def test_a_hook_that_is_not_executable_fails_and_git_indeed_skips_it(repo: Path) -> None:
    assert lac_process(repo, "init").code == 0
    assert lac_process(repo, "hooks", "install").code == 0
    assert lac_process(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    code, checks = doctor(repo)
    assert code == 0 and checks["hooks"]["verdict"] == "ok", checks
    not_executable(repo / ".git" / "hooks" / "pre-commit")
    code, checks = doctor(repo)
    assert code == 1 and checks["hooks"]["verdict"] == "fail", checks
    assert "pre-commit is not executable, so git skips it" in checks["hooks"]["says"]
    # What doctor warns of: git runs no guard, and a held path is committed.
    (repo / "core" / "auth.py").write_text("erin\n")
    committed = run_git(repo, "commit", "-qam", "erin", env={**git_env(), "LAC_AGENT": "erin"})
    assert committed.code == 0, committed.err
    # `hooks install` makes it executable again (it used to call it "unchanged").
    again = lac_process(repo, "hooks", "install", "--json")
    assert {h["hook"]: h["action"] for h in again.json["hooks"]}["pre-commit"] == "installed"
    code, checks = doctor(repo)
    assert code == 0 and checks["hooks"]["verdict"] == "ok", checks
    (repo / "core" / "auth.py").write_text("erin again\n")
    refused = run_git(repo, "commit", "-qam", "erin", env={**git_env(), "LAC_AGENT": "erin"})
    assert refused.code == 1 and "held by dana" in refused.err, refused


def test_a_foreign_hook_fails_until_installed_beside_ours(repo: Path, tmp_path: Path) -> None:
    assert lac_process(repo, "init").code == 0
    assert lac_process(repo, "hooks", "install").code == 0
    hook = repo / ".git" / "hooks" / "pre-push"
    marker = tmp_path / "foreign-ran"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    hook.chmod(0o755)
    code, checks = doctor(repo)
    assert code == 1 and checks["hooks"]["verdict"] == "fail", checks
    said = checks["hooks"]["says"]
    assert "pre-push is another tool's hook and does not run git lac" in said
    assert "keeps it as pre-push.legacy" in said
    assert checks["hooks"]["facts"]["hooks"]["pre-push"]["problem"] == "foreign"
    # A .legacy already there: the fix needs --force, and doctor says so.
    (hook.parent / "pre-push.legacy").write_text("#!/bin/sh\nexit 0\n")
    code, checks = doctor(repo)
    assert code == 1 and "`git lac hooks install --force`" in checks["hooks"]["says"], checks
    (hook.parent / "pre-push.legacy").unlink()
    assert lac_process(repo, "hooks", "install").code == 0
    code, checks = doctor(repo)
    assert code == 0 and checks["hooks"]["verdict"] == "ok", checks
    assert "running the hooks that were there first: pre-push" in checks["hooks"]["says"]
    # The chained hook really runs on a real push.
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    pushed = run_git(repo, "push", "-q", str(bare), "main")
    assert pushed.code == 0, pushed.err
    assert marker.exists()
    # A chained hook that cannot run is said, but fails nothing (git skipped it before).
    not_executable(hook.parent / "pre-push.legacy")
    code, checks = doctor(repo)
    assert code == 0 and checks["hooks"]["verdict"] == "warn", checks
    assert "pre-push.legacy (the hook that was there) is not executable" in checks["hooks"]["says"]


def test_a_hook_whose_git_lac_is_gone(repo: Path) -> None:
    assert lac_process(repo, "init").code == 0
    assert lac_process(repo, "hooks", "install").code == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    text = hook.read_text()
    lines = [
        "LAC='/nonexistent/venv/bin/git-lac'" if line.startswith("LAC=") else line
        for line in text.splitlines()
    ]
    hook.write_text("\n".join(lines) + "\n")
    code, checks = doctor(repo)  # git-lac is still on PATH: said, not failed
    assert code == 0 and checks["hooks"]["verdict"] == "warn", checks
    assert "/nonexistent/venv/bin/git-lac, which is gone" in checks["hooks"]["says"]
    assert "not the hook this git-lacunari installs" not in checks["hooks"]["says"]
    # An older hook (here: one without the LAC_GUARD=off switch of the script itself).
    assert lac_process(repo, "hooks", "install").code == 0
    hook.write_text("".join(x for x in hook.read_text().splitlines(True) if "LAC_GUARD" not in x))
    code, checks = doctor(repo)
    assert code == 0 and checks["hooks"]["verdict"] == "warn", checks
    assert "pre-commit is not the hook this git-lacunari installs" in checks["hooks"]["says"]
    assert lac_process(repo, "hooks", "install").code == 0
    code, checks = doctor(repo)
    assert checks["hooks"]["verdict"] == "ok", checks


def test_a_pre_commit_framework_hook_with_lacs_hook_configured_passes(repo: Path) -> None:
    assert lac_process(repo, "init").code == 0
    assert lac_process(repo, "hooks", "install").code == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    # The framework's hook runs the configured hooks (here: the guard, as its
    # lac-guard hook would), without naming git lac in the script itself.
    hook.write_text(
        "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
        f"exec '{sys.executable}' -m git_lacunari guard pre-commit\n"
    )
    code, checks = doctor(repo)
    assert code == 1 and "pre-commit is another tool's hook" in checks["hooks"]["says"], checks
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: https://example.invalid/git-lacunari\n  rev: v0\n"
        "  hooks:\n  - id: lac-guard\n"
    )
    code, checks = doctor(repo)
    assert code == 0 and checks["hooks"]["verdict"] == "ok", checks
    assert checks["probe pre-commit"]["verdict"] == "ok", checks
    # A framework hook that runs nothing lets every commit through: the live probe fails.
    hook.write_text("#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n")
    code, checks = doctor(repo)
    assert code == 1 and checks["probe pre-commit"]["verdict"] == "fail", checks


def test_a_server_hook_that_is_not_executable_or_foreign_fails(tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    assert lac_process(bare, "hooks", "install", "--server").code == 0
    code, checks = doctor(bare)
    assert checks["hooks"]["verdict"] == "ok", checks
    not_executable(bare / "hooks" / "pre-receive")
    code, checks = doctor(bare)
    assert code == 1 and checks["hooks"]["verdict"] == "fail", checks
    assert "pre-receive is not executable" in checks["hooks"]["says"]
    assert "`git lac hooks install --server`" in checks["hooks"]["says"]
    (bare / "hooks" / "pre-receive").write_text("#!/bin/sh\nexit 0\n")
    (bare / "hooks" / "pre-receive").chmod(0o755)
    code, checks = doctor(bare)
    assert code == 1 and "pre-receive is another tool's hook" in checks["hooks"]["says"], checks
    # Only the after-the-fact hook missing: a warning.
    assert lac_process(bare, "hooks", "install", "--server").code == 0
    (bare / "hooks" / "post-receive").unlink()
    code, checks = doctor(bare)
    assert checks["hooks"]["verdict"] == "warn", checks
    (bare / "hooks" / "post-receive").write_text("#!/bin/sh\necho mail the team\n")
    (bare / "hooks" / "post-receive").chmod(0o755)
    code, checks = doctor(bare)
    assert checks["hooks"]["verdict"] == "warn", checks
    assert "post-receive is another tool's hook" in checks["hooks"]["says"]


# --- 2. the client pre-push guard judges against what git says the remote has ---------


@pytest.fixture
def rewound(lac: Any, repo: Path, tmp_path: Path) -> dict[str, Any]:
    """Erin's clone fetched dana's work on core/auth.py (``origin/main``);
    then someone else force-pushed origin's main back below it. Dana holds
    core/auth.py; erin's ``origin/main`` is stale."""
    assert lac_process(repo, "hooks", "install").code == 0
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(repo, "remote", "add", "origin", str(origin))
    base = head(repo)
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    work = commit(repo, "dana's work", write("core/auth.py", "dana's work\n"))
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    git(other, "push", "-q", "--no-verify", "--force", "origin", f"{base}:refs/heads/main")
    assert git(origin, "rev-parse", "main").strip() == base
    assert git(repo, "rev-parse", "origin/main").strip() == work  # stale
    return {"repo": repo, "origin": origin, "other": other, "base": base, "work": work}


def test_a_push_over_a_rewind_its_clone_has_not_seen_is_refused(rewound: dict[str, Any]) -> None:
    repo, origin = rewound["repo"], rewound["origin"]
    mine = commit(repo, "erin's docs", write("docs/notes.md", "erin\n"))
    # A fast-forward for git (origin is at base, an ancestor): only the guard stops it.
    refused = run_git(repo, "push", "origin", "main", env={**git_env(), "LAC_AGENT": "erin"})
    assert refused.code != 0, refused
    assert f"refs/heads/main {rewound['work'][:12]} core/auth.py  held by dana" in refused.err
    assert git(origin, "rev-parse", "main").strip() == rewound["base"]
    # The holder's own push passes, and brings her work back.
    own = run_git(repo, "push", "origin", "main", env={**git_env(), "LAC_AGENT": "dana"})
    assert own.code == 0, own.err
    assert git(origin, "rev-parse", "main").strip() == mine


def test_a_fetched_rewind_changes_nothing_for_clean_work(rewound: dict[str, Any]) -> None:
    """Once the clone has fetched the rewind, work on the rewound main that
    leaves the held path alone passes."""
    repo, origin = rewound["repo"], rewound["origin"]
    git(repo, "fetch", "-q", "origin")
    git(repo, "reset", "-q", "--hard", "origin/main")
    mine = commit(repo, "erin's docs", write("docs/notes.md", "erin\n"))
    pushed = run_git(repo, "push", "origin", "main", env={**git_env(), "LAC_AGENT": "erin"})
    assert pushed.code == 0, pushed.err
    assert git(origin, "rev-parse", "main").strip() == mine


def test_a_remote_side_the_clone_never_saw_is_said(rewound: dict[str, Any]) -> None:
    """The remote moved on to a commit this clone has not fetched: the guard
    cannot judge against it, judges against the tracking ref, and says so."""
    repo, other = rewound["repo"], rewound["other"]
    unseen = commit(other, "someone's docs", write("docs/other.md", "x\n"))
    git(other, "push", "-q", "--no-verify", "origin", "main")
    commit(repo, "erin's docs", write("docs/notes.md", "erin\n"))
    env = {**git_env(), "LAC_AGENT": "erin"}
    forced = run_git(repo, "push", "--force", "origin", "main", env=env)
    assert f"refs/heads/main on origin is at {unseen[:12]}, which this clone has not fetched" in (
        forced.err
    ), forced
    assert "judged against refs/remotes/origin/main" in forced.err
    assert forced.code == 0, forced.err  # origin/main has dana's work: nothing new changes it


# --- 3. a bare server repository is told what a server needs ---------------------------


def listing(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def test_a_bare_repository_is_pointed_at_the_server_install(tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    before, config = listing(bare), git(bare, "config", "--list")
    for verb in ("install", "uninstall"):
        said = lac_process(bare, "hooks", verb)
        assert said.code == 2, said
        assert said.out == "" and len(said.err.splitlines()) == 1, said
        assert f"`git lac hooks {verb} --server`" in said.err
        assert "git lac init" not in said.err
    # Any client command: one line that says what a server needs (exit 3, README).
    status = lac_process(bare, "status")
    assert status.code == 3 and len(status.err.splitlines()) == 1, status
    assert "a bare repository (a server)" in status.err
    assert "`git lac hooks install --server`" in status.err
    code, checks = doctor(bare)
    assert code == 1
    assert "`git config lac.url URL`" in checks["board"]["says"], checks
    assert "`git lac hooks install --server`" in checks["board"]["says"]
    assert (listing(bare), git(bare, "config", "--list")) == (before, config)
    # With a lac.url naming no board yet: the board is made from a clone.
    git(bare, "config", "lac.url", f"sqlite://{tmp_path / 'board.db'}")
    code, checks = doctor(bare)
    assert code == 1 and checks["board"]["verdict"] == "fail", checks
    assert "(a clone makes it: `git lac init --url URL`)" in checks["board"]["says"]
    # A PostgreSQL board of an older schema: migrated from a clone, too.
    assert "in a clone (not in this server repository)" in doctor_advice("`git lac init`")


def doctor_advice(says: str) -> str:
    from git_lacunari.commands.doctor import _advice

    return _advice(says, True)


# --- 5. a board URL that names no board file ---------------------------------------------


@pytest.mark.parametrize("target", ["/dev/null", "a directory"])
def test_a_board_url_naming_no_board_file_says_what_is_there(
    repo: Path, tmp_path: Path, target: str
) -> None:
    path = target
    if target == "a directory":
        (tmp_path / "boards").mkdir()
        path = str(tmp_path / "boards")
    git(repo, "config", "lac.url", f"sqlite://{path}")
    code, checks = doctor(repo)
    assert code == 1 and checks["reachable"]["verdict"] == "fail", checks
    kind = "a directory" if target == "a directory" else "not a regular file"
    assert f"the board URL names {path}, which is {kind}" in checks["reachable"]["says"]
    assert "no board yet" not in checks["reachable"]["says"]
    # Every other door says the same, and writes nothing there.
    init = lac_process(repo, "init")
    assert init.code == 3 and f"which is {kind}" in init.err, init
    if target == "a directory":
        assert list(Path(path).iterdir()) == []


# --- 4. the isolation a plain connection gets, from the server itself -------------------


@pytest.fixture
def pg_project(repo: Path, pg_server: str) -> Any:
    """A project whose board is in a database of its own (made and dropped)."""
    with new_database(pg_server) as url:
        assert lac_process(repo, "init", "--url", url).code == 0
        assert lac_process(repo, "hooks", "install").code == 0
        yield url


def sql(url: str, *statements: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def database_of(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def test_isolation_is_the_databases_own_default_whatever_pgoptions_says(
    repo: Path, pg_project: str
) -> None:
    url, name = pg_project, database_of(pg_project)
    code, checks = doctor(repo)
    assert checks["isolation"]["verdict"] == "ok", checks
    assert checks["isolation"]["facts"]["source"] == "default"
    sql(url, f"ALTER DATABASE \"{name}\" SET default_transaction_isolation = 'repeatable read'")
    # This shell's PGOPTIONS says read committed: a plain psql elsewhere gets
    # the database's default, and so does the report.
    rc = {"PGOPTIONS": r"-c default_transaction_isolation=read\ committed"}
    for env in (None, rc):
        code, checks = doctor(repo, env=env)
        iso = checks["isolation"]
        assert iso["verdict"] == "warn" and code == 0, checks
        assert iso["facts"]["default"] == "repeatable read"
        assert iso["facts"]["source"] == "database"
        assert iso["facts"]["guarded"] is True
        assert "repeatable read (ALTER DATABASE ... SET)" in iso["says"]
        assert "refuses any other caller's write (LAC02)" in iso["says"]
    # git lac itself still works there: its sessions set READ COMMITTED.
    assert lac_process(repo, "lock", "docs/", "--as", "dana").code == 0
    # The other way round: the database is fine, this shell's PGOPTIONS is not.
    sql(url, f'ALTER DATABASE "{name}" RESET default_transaction_isolation')
    code, checks = doctor(repo, env={"PGOPTIONS": "-c default_transaction_isolation=serializable"})
    iso = checks["isolation"]
    assert iso["verdict"] == "warn" and iso["facts"]["default"] == "read committed", checks
    assert iso["facts"]["yours"] == "serializable"
    assert "PGOPTIONS or the URL's options make it serializable" in iso["says"]


def test_isolation_names_a_role_of_its_own_and_fails_an_unguarded_board(
    repo: Path, pg_project: str
) -> None:
    import uuid

    url, name = pg_project, database_of(pg_project)
    role = "lac_dd_" + uuid.uuid4().hex[:10]
    sql(url, f'CREATE ROLE "{role}"')
    try:
        sql(
            url,
            f'ALTER ROLE "{role}" IN DATABASE "{name}" '
            "SET default_transaction_isolation = 'serializable'",
        )
        code, checks = doctor(repo)
        iso = checks["isolation"]
        assert iso["verdict"] == "warn", checks
        assert f"role {role} in {name} gets serializable" in iso["says"]
        # A board whose write functions let any level through: a stale grant is possible.
        board = git(repo, "config", "lac.board").strip()
        sql(url, f'DROP FUNCTION "{board}".lac_require_current()')
        code, checks = doctor(repo)
        assert code == 1 and checks["isolation"]["verdict"] == "fail", checks
        assert checks["isolation"]["facts"]["guarded"] is False
    finally:
        sql(url, f'DROP ROLE "{role}"')


# --- 6. `git lac --help` from an editable install ------------------------------------------


@pytest.mark.skipif(shutil.which("man") is None, reason="no man on this machine")
def test_git_lac_help_opens_the_man_page_of_an_editable_install(tmp_path: Path) -> None:
    """`pip install -e .` (into a prefix of its own, from a copy of this
    checkout, offline), then a real `git lac --help`: git runs `man git-lac`,
    which finds the page beside the install's bin/ and nowhere else."""
    from .conftest import REPO_ROOT
    from .test_install import SOURCE_IGNORED

    source, prefix = tmp_path / "source", tmp_path / "prefix"
    shutil.copytree(REPO_ROOT, source, ignore=SOURCE_IGNORED)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "install"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MANPATH")}
    # -I: beside this environment's own git-lacunari, which pip would uninstall.
    flags = ["-I", "--no-deps", "--no-build-isolation", "--no-index", "--prefix", str(prefix)]
    installed = subprocess.run(
        [*pip, *flags, "-e", str(source)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert installed.returncode == 0, installed.stderr
    assert (prefix / "share" / "man" / "man1" / "git-lac.1").is_file()
    # Only the install's bin/ and the system's: no other git-lac, no other page.
    env |= {"PATH": f"{prefix / 'bin'}:/usr/bin:/bin", "MANPAGER": "cat", "MANWIDTH": "80"}
    # (Its git-lac runs this interpreter, which imports this checkout's package.)
    helped = subprocess.run(
        ["git", "lac", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert helped.returncode == 0, helped
    assert "git-lac - claim tasks and lock paths on a shared board" in helped.stdout
    # `git lac help`: click's help, no man page needed; one command's too.
    said = subprocess.run(
        ["git", "lac", "help", "task", "add"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert said.returncode == 0 and said.stdout.startswith("Usage: git lac task add"), said
    wrong = subprocess.run(
        ["git", "lac", "help", "nosuch"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert wrong.returncode == 2 and wrong.stdout == "", wrong
    assert wrong.stderr == "git lac: no such command: git lac nosuch (`git lac help` lists them)\n"


# --- odd layouts --------------------------------------------------------------------------


def test_doctor_and_hooks_in_a_separate_git_dir_and_a_symlinked_hooks_dir(tmp_path: Path) -> None:
    work, gitdir = tmp_path / "work", tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", f"--separate-git-dir={gitdir}", str(work))
    (work / "a.txt").write_text("a\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "a")
    shared = tmp_path / "shared-hooks"
    shared.mkdir()
    (gitdir / "hooks").rename(tmp_path / "old-hooks")
    (gitdir / "hooks").symlink_to(shared)
    assert lac_process(work, "init").code == 0
    installed = lac_process(work, "hooks", "install")
    assert installed.code == 0, installed.err
    assert (shared / "pre-commit").is_file()
    code, checks = doctor(work)
    assert code == 0 and checks["hooks"]["verdict"] == "ok", checks
    assert checks["hooks"]["facts"]["directory"] == str(shared)
    # The hooks guard for real there.
    assert lac_process(work, "lock", "a.txt", "--as", "dana").code == 0
    (work / "a.txt").write_text("erin\n")
    refused = run_git(work, "commit", "-qam", "erin", env={**git_env(), "LAC_AGENT": "erin"})
    assert refused.code == 1 and "held by dana" in refused.err, refused


def test_a_hooks_dir_or_a_hook_that_is_no_file_is_said_in_one_line(
    repo: Path, tmp_path: Path
) -> None:
    assert lac_process(repo, "init").code == 0
    hooks = repo / ".git" / "hooks"
    shutil.rmtree(hooks)
    hooks.write_text("not a directory\n")
    code, checks = doctor(repo)
    assert code == 1 and "is not a directory: git runs none" in checks["hooks"]["says"], checks
    said = lac_process(repo, "hooks", "install")
    assert said.code == 3 and len(said.err.splitlines()) == 1, said
    assert "is not a directory" in said.err and "Traceback" not in said.err
    hooks.unlink()
    (hooks / "pre-commit").mkdir(parents=True)
    code, checks = doctor(repo)
    assert code == 1 and "pre-commit is not a file (a directory?)" in checks["hooks"]["says"]
    said = lac_process(repo, "hooks", "install")
    assert said.code == 2 and "is not a file (a directory?)" in said.err, said
    # Nothing written: the directory was not chained as pre-commit.legacy.
    assert sorted(p.name for p in hooks.iterdir()) == ["pre-commit"]
    assert (hooks / "pre-commit").is_dir()
    # A directory where our hook looks for the one it runs first: every commit
    # would fail; doctor says so.
    (hooks / "pre-commit").rename(hooks / "pre-commit.legacy")
    (hooks / "pre-commit.legacy" / "x").write_text("x\n")
    installed = lac_process(repo, "hooks", "install")
    assert installed.code == 2 and "pre-commit.legacy is not a file" in installed.err, installed
    (hooks / "pre-commit.legacy").rename(tmp_path / "aside")
    assert lac_process(repo, "hooks", "install").code == 0
    (tmp_path / "aside").rename(hooks / "pre-commit.legacy")
    code, checks = doctor(repo)
    assert code == 1 and "pre-commit.legacy is not a file" in checks["hooks"]["says"], checks
    failed = run_git(repo, "commit", "-q", "--allow-empty", "-m", "x")
    assert failed.code != 0, failed  # what doctor warned of


def test_a_relative_hooks_path_is_each_worktrees_own(repo: Path, tmp_path: Path) -> None:
    assert lac_process(repo, "init").code == 0
    git(repo, "config", "core.hooksPath", ".githooks")
    assert lac_process(repo, "hooks", "install").code == 0
    assert (repo / ".githooks" / "pre-commit").is_file()
    code, checks = doctor(repo)
    assert code == 0 and checks["hooks"]["verdict"] == "ok", checks
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked))
    code, checks = doctor(linked)
    assert code == 1 and checks["hooks"]["verdict"] == "fail", checks
    assert checks["hooks"]["facts"]["directory"] == str(linked / ".githooks")
    assert "core.hooksPath .githooks is relative" in checks["hooks"]["says"]
    # What doctor says is what git does: the linked worktree runs no guard.
    assert lac_process(repo, "lock", "README", "--as", "dana").code == 0
    (linked / "README").write_text("erin\n")
    env = {**git_env(), "LAC_AGENT": "erin"}
    assert run_git(linked, "commit", "-qam", "erin", env=env).code == 0


def test_a_server_that_denies_rewinds_guards_first_and_doctor_says_which(
    lac: Any, repo: Path, tmp_path: Path, board_url: str | None
) -> None:
    from .test_server_guard import server_for

    server = server_for(repo, tmp_path, board_url, "path")
    code, checks = doctor(server.bare)
    assert checks["repository"]["facts"]["deny_non_fast_forwards"] is False, checks
    assert "refused by the guard alone" in checks["repository"]["says"]
    denied = lac_process(server.bare, "hooks", "install", "--server", "--deny-non-fast-forwards")
    assert denied.code == 0, denied.err
    code, checks = doctor(server.bare)
    assert code == 0, checks
    assert checks["repository"]["facts"]["deny_non_fast_forwards"] is True
    assert "git refuses every rewind" in checks["repository"]["says"]
    base = head(repo)
    commit(repo, "dana's work", write("core/auth.py", "dana\n"))
    assert server.push("main").code == 0
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    back = f"{base}:refs/heads/main"
    erin = server.push("--force", back, "-o", "lac.agent=erin")
    assert erin.code != 0 and "(pre-receive hook declined)" in erin.err, erin
    assert "core/auth.py  held by dana" in erin.err
    dana = server.push("--force", back, "-o", "lac.agent=dana")  # the guard lets her; git does not
    assert dana.code != 0 and "(non-fast-forward)" in dana.err, dana
    assert "pre-receive hook declined" not in dana.err


def test_a_wheel_builds_from_the_sdist_with_the_editable_build_step(tmp_path: Path) -> None:
    """pyproject.toml names man/editable.py for every build: the sdist carries it."""
    from .conftest import REPO_ROOT
    from .test_install import SOURCE_IGNORED

    source, sdists, wheels = tmp_path / "source", tmp_path / "sdist", tmp_path / "wheel"
    shutil.copytree(REPO_ROOT, source, ignore=SOURCE_IGNORED)
    sdists.mkdir()
    wheels.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def build(kind: str, cwd: Path, out: Path) -> str:
        code = f"from setuptools import build_meta as b; print(b.build_{kind}({str(out)!r}))"
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout.strip().splitlines()[-1]

    sdist = build("sdist", source, sdists)
    subprocess.run(["tar", "xzf", str(sdists / sdist), "-C", str(sdists)], check=True)
    unpacked = sdists / sdist.removesuffix(".tar.gz")
    assert (unpacked / "man" / "editable.py").is_file()
    wheel = build("wheel", unpacked, wheels)
    import zipfile

    names = zipfile.ZipFile(wheels / wheel).namelist()
    assert any(n.endswith(".data/data/share/man/man1/git-lac.1") for n in names), names


# --- the server guard when its HEAD names no branch that exists ------------------------


def test_a_server_whose_head_is_unborn_still_guards_its_main(
    lac: Any, repo: Path, tmp_path: Path, board_url: str | None
) -> None:
    """`git init --bare` without init.defaultBranch points HEAD at master; the
    project pushes main. Deleting main and making it again at an old commit
    reverts the held path as surely as a rewind does."""
    from .test_server_guard import server_for

    server = server_for(repo, tmp_path, board_url, "path")
    git(server.bare, "symbolic-ref", "HEAD", "refs/heads/master")  # unborn
    base = head(repo)
    work = commit(repo, "dana's work", write("core/auth.py", "dana\n"))
    assert server.push("main").code == 0
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    deleted = server.push(":refs/heads/main", "-o", "lac.agent=erin")
    assert deleted.code != 0 and "core/auth.py  held by dana" in deleted.err, deleted
    assert server.has("main") == work
    # Made again beside it (a new branch at the old commit is judged against main).
    again = server.push(f"{base}:refs/heads/main2", "-o", "lac.agent=erin")
    assert again.code != 0 and "core/auth.py  held by dana" in again.err, again
    own = server.push(":refs/heads/main", "-o", "lac.agent=dana")
    assert own.code == 0, own.err


def test_doctor_fails_when_the_servers_board_was_made_for_another_repository(
    lac: Callable[..., Result], repo: Path, tmp_path: Path, board_url: str | None
) -> None:
    """The server of another project whose lac.url names this project's board:
    its pushes would be judged by this project's claims. Its own server is fine."""
    url = board_url or f"sqlite://{repo / '.git' / 'lacunari' / 'board.db'}"
    own = tmp_path / "own.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(own))
    git(own, "config", "lac.url", url)
    code, body = doctor(own)
    made_for = body["project"]
    assert made_for["verdict"] == "ok", made_for
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert made_for["facts"] == {"board_root": root, "repository_root": root}

    other = tmp_path / "other project"
    other.mkdir()
    git(other, "init", "-q")
    commit(other, "another project's root", write("README", "another project\n"))
    theirs = tmp_path / "other.git"
    git(tmp_path, "clone", "-q", "--bare", str(other), str(theirs))
    git(theirs, "config", "lac.url", url)
    code, body = doctor(theirs)
    assert code == 1, body
    made_for = body["project"]
    assert made_for["verdict"] == "fail", made_for
    assert "made for another repository" in made_for["says"], made_for
    other_root = git(other, "rev-list", "--max-parents=0", "HEAD").strip()
    assert made_for["facts"] == {"board_root": root, "repository_root": other_root}
    # A clone of that project pointed at the board is told the same.
    git(other, "config", "lac.url", url)
    code, body = doctor(other)
    assert code == 1 and body["project"]["verdict"] == "fail", body["project"]


def test_doctor_passes_a_board_made_before_it_recorded_its_repository(
    lac: Callable[..., Result], repo: Path, board_url: str | None
) -> None:
    """A board made by an older `git lac init` records no repository: doctor
    cannot compare, says so, and does not fail; `git lac init` records it."""
    from git_lacunari.store import open_store

    from .conftest import board_sql

    assert lac_process(repo, "hooks", "install").code == 0
    url = board_url or f"sqlite://{repo / '.git' / 'lacunari' / 'board.db'}"
    store = open_store(url, repo)
    try:
        board_sql(store, "DELETE FROM lac_settings WHERE name = 'repository_root'")
    finally:
        store.close()
    code, body = doctor(repo)
    assert code == 0 and body["project"]["verdict"] == "ok", body["project"]
    assert "records no repository" in body["project"]["says"], body["project"]
    assert body["project"]["facts"]["board_root"] is None
    assert lac("init").code == 0
    code, body = doctor(repo)
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert code == 0 and body["project"]["facts"]["board_root"] == root, body["project"]
