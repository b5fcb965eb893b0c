"""`git lac wait PATH… [--timeout D] [--lock]`, with real processes for the waiters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Result

Lac = Callable[..., Result]
LAC = str(Path(sys.executable).parent / "git-lac")


def waiter(repo: Path, agent: str, *args: str, json_out: bool = True) -> subprocess.Popen[str]:
    """A real `git lac wait` in the background; returns once it is waiting
    (its first line on stderr says so: it is in line by then)."""
    env = {**os.environ, "LAC_AGENT": agent}
    proc = subprocess.Popen(
        [LAC, "wait", *(["--json"] if json_out else []), *args],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert line.startswith("waiting: "), line
    return proc


def finish(proc: subprocess.Popen[str]) -> tuple[int, dict[str, object]]:
    out, _ = proc.communicate(timeout=120)
    return proc.returncode, json.loads(out)


def test_free_paths_return_at_once(lac: Lac) -> None:
    result = lac("wait", "README", "core/", "--json")
    assert result.code == 0, result.err
    assert result.json["paths"] == ["README", "core/"] and result.json["locked"] == []


def test_timeout_is_exit_1_naming_the_holder(lac: Lac) -> None:
    assert lac("lock", "README", env={"LAC_AGENT": "dana"}).code == 0
    result = lac("wait", "README", "--timeout", "0.3", "--json")
    assert result.code == 1
    assert result.json["refused"]["reason"] == "path_locked"
    assert result.json["refused"]["holder"] == "dana"
    assert "waiting: dana holds README (no task)" in result.err
    assert lac("wait", "--timeout", "x", "README").code == 2
    assert lac("wait", "/abs").code == 2
    assert lac("wait", "README", "--task", "1").code == 2


def test_a_release_wakes_the_waiter(lac: Lac, repo: Path) -> None:
    assert lac("task", "add", "t", "--write", "core/auth.py").code == 0
    assert lac("claim", "1", env={"LAC_AGENT": "dana"}).code == 0
    proc = waiter(repo, "bob", "core/auth.py", "--timeout", "60")
    assert lac("done", "1", env={"LAC_AGENT": "dana"}).code == 0
    code, body = finish(proc)
    assert code == 0 and body["locked"] == []
    # the holder finished: its work is what the path was held for
    assert body["finished"] == [1]


def test_a_wait_names_the_finished_holders_and_only_those(lac: Lac, repo: Path) -> None:
    """Freed by a release, nothing to bring in; freed by done (here and
    with --lock), the waiter is told to bring that task's work in before it
    changes the path, which is the conflict it waited to avoid."""
    assert lac("task", "add", "one", "--write", "core/auth.py").code == 0
    assert lac("task", "add", "two", "--write", "core/auth.py").code == 0
    dana = {"LAC_AGENT": "dana"}
    assert lac("claim", "1", env=dana).code == 0
    proc = waiter(repo, "bob", "core/auth.py", "--timeout", "60")
    assert lac("release", "1", env=dana).code == 0
    code, body = finish(proc)
    assert code == 0 and body["finished"] == []

    assert lac("claim", "2", env=dana).code == 0
    proc = waiter(repo, "bob", "core/auth.py", "--timeout", "60", json_out=False)
    assert lac("done", "2", env=dana).code == 0
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("free: core/auth.py (waited "), out
    assert lines[1] == (
        "task #2 finished meanwhile: bring its work into your branch before you change "
        "these paths (e.g. git pull --rebase, once it has landed)"
    )

    assert lac("claim", "1", env=dana).code == 0
    proc = waiter(repo, "bob", "core/auth.py", "--lock", "--timeout", "60")
    assert lac("done", "1", env=dana).code == 0
    code, body = finish(proc)
    assert code == 0 and body["finished"] == [1]
    locked = body["locked"]
    assert isinstance(locked, list) and [lk["agent"] for lk in locked] == ["bob"]


def test_a_reader_that_finished_is_not_named(lac: Lac, repo: Path) -> None:
    """A read lock holds the path too, but its task changed nothing there:
    its done is nothing to bring in."""
    assert lac("task", "add", "look", "--read", "docs/guide.md").code == 0
    dana = {"LAC_AGENT": "dana"}
    assert lac("claim", "1", env=dana).code == 0
    proc = waiter(repo, "bob", "docs/guide.md", "--timeout", "60")
    assert lac("done", "1", env=dana).code == 0
    code, body = finish(proc)
    assert code == 0 and body["finished"] == []


def test_lock_goes_to_the_oldest_waiter(lac: Lac, repo: Path) -> None:
    """Two waiters with --lock: the release gives the path to the one that
    waited longest, in one grant; the other keeps waiting and, when its time
    runs out, is refused naming the winner."""
    assert lac("lock", "core/auth.py", env={"LAC_AGENT": "dana"}).code == 0
    first = waiter(repo, "bob", "core/auth.py", "--lock", "--timeout", "60")
    second = waiter(repo, "carol", "core/auth.py", "--lock", "--timeout", "8")
    assert lac("unlock", "core/auth.py", env={"LAC_AGENT": "dana"}).code == 0
    code, body = finish(first)
    assert code == 0, body
    locked = body["locked"]
    assert isinstance(locked, list) and [lk["agent"] for lk in locked] == ["bob"]
    code, body = finish(second)
    assert code == 1
    refused = body["refused"]
    assert isinstance(refused, dict) and refused["holder"] == "bob"
    holders = [lk["agent"] for lk in lac("locks", "--json").json["locks"]]
    assert holders == ["bob"]


def test_a_wait_from_a_subdirectory_means_the_paths_it_names(lac: Lac, repo: Path) -> None:
    """Paths resolve from the current directory once, as everywhere: held
    sub/s.py is held when waited for as s.py from sub/, and --lock takes
    sub/s.py itself (not sub/sub/s.py). So does the edit hook's advice,
    spelled from where the agent stands."""
    sub = repo / "sub"
    sub.mkdir()
    assert lac("lock", "sub/s.py", env={"LAC_AGENT": "erin"}).code == 0
    refused = lac("wait", "s.py", "--timeout", "0.2", "--json", cwd=sub)
    assert refused.code == 1 and refused.json["refused"]["holder"] == "erin", refused.out
    assert lac("wait", "../sub/s.py", "--timeout", "0.2", cwd=sub).code == 1
    assert lac("unlock", "sub/s.py", env={"LAC_AGENT": "erin"}).code == 0
    took = lac("wait", "s.py", "--lock", "--json", cwd=sub)
    assert took.code == 0, took.err
    assert took.json["paths"] == ["sub/s.py"]
    assert [lk["pattern"] for lk in lac("locks", "--json").json["locks"]] == ["sub/s.py"]


def test_wait_lock_refuses_at_once_what_it_could_never_do(lac: Lac, repo: Path) -> None:
    """Too many paths for a line each, or a --task that is not our claim:
    one line, nothing taken, at once (not after the paths come free)."""
    many = [f"g{n}.py" for n in range(257)]
    result = lac("wait", *many, "--lock", "--timeout", "60")
    assert result.code == 2
    assert result.err.strip() == (
        "git lac: wait --lock takes at most 256 paths (each waits its turn in a line of its "
        "own), not 257: name their directory or a glob"
    )
    assert lac("lock", "a.py", env={"LAC_AGENT": "erin"}).code == 0
    result = lac("wait", "a.py", "--lock", "--task", "99", "--timeout", "60", "--json")
    assert result.code == 1 and result.json["refused"]["reason"] == "not_found", result.out
    assert [lk["agent"] for lk in lac("locks", "--json").json["locks"]] == ["erin"]


def test_a_line_leaves_nothing_behind(lac: Lac, repo: Path, backend: str) -> None:
    """The waiters' line of a path (SQLite: a directory of tickets beside the
    board) is gone when its last waiter leaves."""
    if backend != "sqlite":
        pytest.skip("PostgreSQL's line is advisory locks, gone with their session")
    for n in range(3):
        assert lac("wait", f"p{n}.py", "q.py", "--lock").code == 0
        assert lac("unlock", f"p{n}.py", "q.py").code == 0
    turns = repo / ".git" / "lacunari" / "turns"
    assert not turns.exists() or list(turns.iterdir()) == []
