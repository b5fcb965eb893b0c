"""The command-line contract: output, --json, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from git_lacunari.cli import cli

from .conftest import Result, git, lac_inprocess, lac_process, make_repo

Lac = Callable[..., Result]


def test_walkthrough_human_and_json(lac: Lac, repo: Path) -> None:
    added = lac("task", "add", "Fix login", "--write", "core/auth.py", "--priority", "2")
    assert added.code == 0 and added.out.strip() == "1"
    as_json = lac("task", "add", "Docs", "--after", "1", "--json")
    assert as_json.code == 0 and as_json.json["ok"] is True and as_json.json["id"] == 2

    claimed = lac("claim", "1", "--as", "dana")
    assert claimed.code == 0
    assert "claimed: task #1 Fix login" in claimed.out and "write lock core/auth.py" in claimed.out

    lost = lac("--as", "erin", "claim", "1", "--json")
    assert lost.code == 1
    assert lost.json == {
        "ok": False,
        "message": "task #1 is already claimed by dana",
        "refused": {"reason": "already_claimed", "task": 1, "holder": "dana", "where": None},
    }
    assert lost.err.strip() == "refused: task #1 is already claimed by dana"

    check = lac("check", "core/auth.py", "README", "--as", "erin")
    assert check.code == 1
    # The same message as the lock refusal: one vocabulary, one message per reason.
    assert check.err.strip() == "refused: dana holds core/auth.py on task #1"
    assert lac("check", "README", "--as", "erin").code == 0

    locked = lac("lock", "core/", "--as", "erin", "--json")
    assert locked.code == 1 and locked.json["refused"]["reason"] == "path_locked"
    assert locked.json["refused"]["holder"] == "dana" and locked.json["refused"]["task"] == 1

    tasks = lac("tasks", "--json")
    assert [t["state"] for t in tasks.json["tasks"]] == ["claimed", "open"]
    assert "heartbeat" in lac("tasks").out
    shown = lac("show", "1")
    assert "state     claimed by dana" in shown.out and "writes    core/auth.py" in shown.out

    assert lac("done", "1", "--as", "dana").code == 0
    nxt = lac("claim", "--next", "--as", "erin", "--json")
    assert nxt.code == 0 and nxt.json["task"]["id"] == 2
    kinds = [e["kind"] for e in lac("log", "--json").json["events"]]
    # A PostgreSQL board's history starts with the settings init records: its
    # case rule and the repository it was made for.
    on_postgres = "lac.url=postgresql" in git(repo, "config", "--list")
    first = ["setting", "setting"] if on_postgres else []
    assert kinds == [*first, "created", "created", "claimed", "locked", "done", "claimed"]
    assert "claimed" in lac("log", "1").out


def test_whoami_sources(lac: Lac, repo: Path) -> None:
    default = lac("whoami", "--json").json
    assert (default["agent"], default["source"]) == ("tester", "default from user.email")
    git(repo, "config", "lac.agent", "configured")
    assert lac("whoami", "--json").json["agent"] == "configured"
    env = lac("whoami", "--json", env={"LAC_AGENT": "from-env", "LAC_CAPS": "gpu, linux"}).json
    assert (env["agent"], env["source"], env["capabilities"]) == (
        "from-env",
        "environment LAC_AGENT",
        ["gpu", "linux"],
    )
    flag = lac("whoami", "--as", "flagged", "--json", env={"LAC_AGENT": "from-env"}).json
    assert (flag["agent"], flag["source"]) == ("flagged", "--as")


def test_linked_worktrees_get_distinct_stable_names_and_share_the_board(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt1"))
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt2"))
    names = {lac("whoami", cwd=tmp_path / w, env={}).out.splitlines()[0] for w in ("wt1", "wt2")}
    assert names == {"tester@wt1", "tester@wt2"}
    assert lac("whoami", cwd=tmp_path / "wt1").out.splitlines()[0] == "tester@wt1"
    assert lac("task", "add", "shared", cwd=tmp_path / "wt1").code == 0
    assert lac("claim", "1", cwd=tmp_path / "wt1").code == 0
    lost = lac("claim", "1", "--json", cwd=tmp_path / "wt2")
    assert lost.code == 1 and lost.json["refused"]["holder"] == "tester@wt1"


def test_worktree_config_identity_is_honoured(lac: Lac, repo: Path, tmp_path: Path) -> None:
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    git(tmp_path / "wt", "config", "--worktree", "lac.agent", "robot-7")
    assert lac("whoami", cwd=tmp_path / "wt").out.splitlines()[0] == "robot-7"
    assert lac("whoami").out.splitlines()[0] == "tester"


def test_paths_relative_to_cwd(lac: Lac, repo: Path) -> None:
    got = lac("lock", "auth.py", "--json", cwd=repo / "core")
    assert got.json["locks"][0]["pattern"] == "core/auth.py"


@pytest.mark.parametrize(
    "args",
    [
        ["claim", "-1"],
        ["claim", "abc"],
        ["claim", "0"],
        ["show", "12x"],
        ["claim"],
        ["claim", "1", "--next"],
        ["task", "add", ""],
        ["task", "add", "x" * 100_000],
        ["task", "add", "t", "--after", "99"],
        ["task", "add", "t", "--write", "/abs/path"],
        ["task", "add", "t", "--write", "../escape"],
        ["task", "add", "t", "--read", "bad\x01name"],
        ["task", "add", "t", "--lane", ""],
        ["tasks", "--state", "finished"],
        ["lock", "/etc/passwd"],
        ["claim", "--next", "--stale-after", "-5m"],
        ["claim", "--next", "--stale-after", "soon"],
        ["release", "1", "--force"],
        ["unlock"],
        ["frobnicate"],
    ],
)
def test_bad_input_exit_2_one_line_nothing_written(lac: Lac, args: list[str]) -> None:
    before = lac("log", "--json").json["events"]
    result = lac(*args)
    assert result.code == 2, result
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert lines and "Traceback" not in result.err
    assert lac("log", "--json").json["events"] == before
    as_json = lac(*args, "--json")
    assert as_json.code == 2 and json.loads(as_json.out)["ok"] is False


def test_unknown_task_is_refused_not_found(lac: Lac) -> None:
    for args in (["claim", "7"], ["show", "7"], ["done", "7"], ["release", "7"], ["log", "7"]):
        result = lac(*args, "--json")
        assert result.code == 1 and result.json["refused"] == {
            "reason": "not_found",
            "task": 7,
            "lane": None,
            "blocked_by_paths": [],
            "blocked_by_resources": [],
        }


def test_outside_a_repository_exit_3(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    result = lac_inprocess(plain, "tasks")
    assert result.code == 3 and result.err.startswith("git lac: not a git repository")
    assert len(result.err.strip().splitlines()) == 1
    as_json = lac_inprocess(plain, "tasks", "--json")
    assert as_json.code == 3 and as_json.json["error"]["kind"] == "not_a_repository"


def test_unreachable_postgres_exit_3_one_line(repo: Path) -> None:
    url = "postgresql://nobody@127.0.0.1:1/nowhere"
    result = lac_process(repo, "init", "--url", url)
    assert result.code == 3, result
    assert result.err.startswith(f"git lac: cannot reach the board at {url}")
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert "lac.url" not in git(repo, "config", "--list")
    git(repo, "config", "lac.url", url)
    tasks = lac_inprocess(repo, "tasks", "--json")
    assert tasks.code == 3 and tasks.json["error"]["kind"] == "board_unreachable"


def test_postgres_board_must_be_initialised(repo: Path, pg_server: str) -> None:
    from .conftest import pg_schema

    with pg_schema(pg_server) as url:
        git(repo, "config", "lac.url", url)
        result = lac_inprocess(repo, "tasks")
        assert result.code == 3 and "run `git lac init --url URL` first" in result.err


def test_init_is_idempotent(lac: Lac, repo: Path) -> None:
    lac("task", "add", "keep me")
    again = lac("init", "--json")
    assert again.code == 0 and again.json["schema_version"] >= 1
    assert [t["title"] for t in lac("tasks", "--json").json["tasks"]] == ["keep me"]


def test_board_newer_than_code_refuses(lac: Lac, repo: Path, boards: object) -> None:
    from .conftest import Boards, board_sql

    assert isinstance(boards, Boards)
    store = boards.store()
    if store.dialect == "sqlite":
        board_sql(store, "INSERT INTO lac_schema_version VALUES (999, 'future', 0)")
    else:
        board_sql(store, "INSERT INTO lac_schema_version (version, name) VALUES (999, 'future')")
    result = lac("tasks")
    assert result.code == 3 and "newer than this git-lacunari knows" in result.err


def test_real_git_lac_process(lac: Lac, repo: Path) -> None:
    """`git lac` as git runs it: git finds git-lac on PATH."""
    result = lac_process(repo, "task", "add", "via git")
    assert result.code == 0 and result.out.strip() == "1"
    assert lac_process(repo, "claim", "1", "--json").json["task"]["owner"] == "tester"


def test_help_for_every_command() -> None:
    def walk(group: object, prefix: list[str]) -> list[list[str]]:
        import click

        found = []
        assert isinstance(group, click.Group)
        for name, command in group.commands.items():
            found.append([*prefix, name])
            if isinstance(command, click.Group):
                found += walk(command, [*prefix, name])
        return found

    commands = walk(cli, [])
    groups = [["task"], ["guard"], ["hooks"], ["team"], ["instance"], ["resource"]]
    assert len(commands) >= 15
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for path in commands:
        result = lac_inprocess(Path(os.getcwd()), *path, "-h")
        assert result.code == 0 and "Usage: git lac" in result.out, path
        if path not in groups:
            assert "--json" in result.out, path
        assert f"git lac {' '.join(path)}" in readme, f"README does not document {path}"


def test_not_a_repo_is_checked_before_anything_else(tmp_path: Path) -> None:
    make_repo(tmp_path / "r")
    (tmp_path / "r" / ".git" / "HEAD").write_text("garbage")
    result = lac_inprocess(tmp_path / "r", "tasks")
    assert result.code == 3


def test_man_page_is_current_and_renders() -> None:
    """`git lac --help` opens `man git-lac`: the shipped page must match the help."""
    import shutil
    import subprocess
    import tomllib

    from git_lacunari.manpage import render

    root = Path(__file__).resolve().parent.parent
    page = root / "man" / "git-lac.1"
    assert page.read_text() == render(), "run: python -m git_lacunari.manpage > man/git-lac.1"
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["data-files"]["share/man/man1"] == ["man/git-lac.1"]
    if shutil.which("man"):
        shown = subprocess.run(
            ["man", "-l", str(page)],
            capture_output=True,
            text=True,
            env={**os.environ, "MANPAGER": "cat"},
        )
        assert shown.returncode == 0 and "git lac claim" in shown.stdout


def test_ages_come_from_the_boards_clock_not_this_machines(
    lac: Lac, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker whose clock runs a day ahead still sees the board's ages:
    "heartbeat 0s ago" and STALE are measured against one clock, the board's."""
    import re
    import time

    lac("task", "add", "auth", "--write", "README")
    assert lac("claim", "1", "--as", "dana").code == 0
    (repo / "README").write_text("changed\n")
    git(repo, "add", "README")
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 86400.0)
    fresh = re.compile(r"heartbeat [0-9]s ago")
    listed = lac("tasks", "--as", "obs")
    assert fresh.search(listed.out) and "STALE" not in listed.out, listed.out
    shown = lac("show", "1", "--as", "obs")
    assert fresh.search(shown.out) and "1d" not in shown.out, shown.out  # created, locked since
    guard = lac("guard", "pre-commit", "--as", "erin")
    assert guard.code == 1 and fresh.search(guard.err), guard.err


def test_a_refusal_over_many_held_paths_names_a_few_and_counts_the_rest(lac: Lac) -> None:
    """A claim of thousands of paths refused by one `lock dir/` was one line
    naming every holding (a megabyte); it names the first few and how many
    more there are, and --json still lists every conflict."""
    held = [f"deep/f{i}.txt" for i in range(10)]
    assert lac("lock", *held, "--as", "dana").code == 0
    refused = lac("lock", "deep/", "--as", "erin")
    assert refused.code == 1, refused
    lines = refused.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("refused: dana holds deep/f0.txt"), lines
    assert lines[0].count("dana holds") == 3 and "and 7 more" in lines[0], lines[0]
    as_json = json.loads(lac("lock", "deep/", "--as", "erin", "--json").out)
    assert len(as_json["refused"]["conflicts"]) == 10, as_json


def test_a_reader_that_goes_away_gets_no_traceback(lac: Lac, repo: Path) -> None:
    """`git lac tasks --limit 0 | head -1` printed a BrokenPipeError traceback."""
    import signal
    import subprocess
    import sys

    for n in range(3):
        assert lac("task", "add", f"task {n}").code == 0
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ["PATH"]}
    for args in (["tasks", "--limit", "0"], ["tasks", "--limit", "0", "--json"]):
        proc = subprocess.Popen(
            ["git", "lac", *args],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # gone before the command writes a byte
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 128 + signal.SIGPIPE
        assert err == ""
