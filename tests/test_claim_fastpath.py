"""`git lac claim --next` skips click (entry.py, issue 24: the whole process
is timed in bench/claims.py), and answers exactly as the full command line."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import lac_process


def _init(repo: Path, board_url: str | None, tasks: int) -> None:
    assert lac_process(repo, "init", *(["--url", board_url] if board_url else [])).code == 0
    for n in range(tasks):
        added = lac_process(repo, "task", "add", f"t{n}", "--lane", "l", "--priority", str(n))
        assert added.code == 0, added


def test_fast_path_and_full_command_line_agree(repo: Path, board_url: str | None) -> None:
    _init(repo, board_url, 2)
    fast = lac_process(repo, "claim", "--next", "--lane", "l", "--json", "--as", "ann")
    full = lac_process(repo, "--json", "--as", "bob", "claim", "--next", "--lane=l")
    assert fast.code == full.code == 0, (fast, full)
    got, want = json.loads(fast.out), json.loads(full.out)
    assert got["task"]["title"] == "t1" and want["task"]["title"] == "t0"  # best first
    assert got["task"]["owner"] == "ann" and want["task"]["owner"] == "bob"
    assert set(got) == set(want) and set(got["task"]) == set(want["task"])
    # The empty lane: the same refusal, the same exit code, either way.
    fast = lac_process(repo, "claim", "--next", "--lane", "l")
    full = lac_process(repo, "--as", "ann", "claim", "--next", "--lane", "l")
    assert fast.code == full.code == 1
    assert (fast.out, fast.err) == (full.out, full.err)


def test_bad_input_is_the_same_and_writes_nothing(repo: Path) -> None:
    _init(repo, None, 1)
    board = repo / ".git" / "lacunari" / "board.db"
    with sqlite3.connect(board) as db:
        before = db.execute("SELECT * FROM lac_agents").fetchall()
    for args in (["--lane", "a b"], ["--as", ""], ["--lane", "x\x1b[2J"]):
        fast = lac_process(repo, "claim", "--next", *args)
        full = lac_process(repo, "claim", "--next", "--next", *args)  # click's way
        assert fast.code == full.code == 2, (args, fast, full)
        assert fast.err == full.err and "\x1b" not in fast.err
    with sqlite3.connect(board) as db:  # not even a sign of life
        assert db.execute("SELECT * FROM lac_agents").fetchall() == before


def test_the_fast_path_imports_no_click(repo: Path) -> None:
    _init(repo, None, 1)
    probe = (
        "import sys; sys.argv = ['git-lac', 'claim', '--next', '--lane', 'l']\n"
        "from git_lacunari import entry\n"
        "try:\n    entry.main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "print(code, 'click' in sys.modules, 'psycopg' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, check=True
    )
    assert proc.stdout.split()[-3:] == ["0", "False", "False"], proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "args",
    [["-h"], ["--wait", "1"], ["--lane"], ["--lane", "l", "--lane", "m"], ["7"], ["--bogus"]],
)
def test_words_it_does_not_know_go_to_click(repo: Path, args: list[str]) -> None:
    _init(repo, None, 0)
    result = lac_process(repo, "claim", "--next", *args)
    if args == ["-h"]:
        assert result.code == 0 and "Usage: git lac claim" in result.out
    elif args in (["--wait", "1"], ["--lane", "l", "--lane", "m"]):  # click: the last wins
        assert result.code == 1 and "no claimable task" in result.err
    else:
        assert result.code == 2, (args, result)
