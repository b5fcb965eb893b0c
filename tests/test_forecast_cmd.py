"""`git lac forecast` on real history (the shared corpus): the live claims'
tips, recorded by the board, against each other and the destination; its
verdicts are git's own merge's."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import REPO_ROOT, Boards, Result, git

Lac = Callable[..., Result]
BUNDLE = REPO_ROOT.parent / "shared" / "corpus" / "requests-main.bundle"
if not BUNDLE.exists():  # a worktree beside main: /work/wt-NAME
    BUNDLE = Path("/work/shared/corpus/requests-main.bundle")


@pytest.fixture
def corpus(lac: Lac, repo: Path) -> str:
    """The corpus's main as origin/main of the test repository; its commit
    from 200 commits back, where the lines fork."""
    if not BUNDLE.exists():
        pytest.skip("no corpus bundle")
    git(repo, "fetch", "-q", str(BUNDLE), "main:refs/remotes/origin/main")
    git(repo, "config", "lac.target", "origin/main")
    return git(repo, "rev-parse", "origin/main~200").strip()


def line(repo: Path, lac: Lac, agent: str, task: int, fork: str, edit: Callable[[str], str]) -> str:
    """``agent`` claims ``task`` on a branch from ``fork`` and commits an
    edit of requests/models.py, which its task does not declare."""
    git(repo, "checkout", "-q", "-b", f"{agent}-line", fork)
    assert lac("claim", str(task), "--as", agent).code == 0
    path = repo / "requests" / "models.py"
    path.write_text(edit(path.read_text()))
    git(repo, "commit", "-qam", f"{agent}'s edit", "--no-verify")
    assert lac("heartbeat", "--as", agent).code == 0  # records the tip
    return git(repo, "rev-parse", "HEAD").strip()


def git_merges(repo: Path, a: str, b: str) -> bool:
    """What `git merge` of the two says, in a scratch worktree."""
    where = repo.parent / f"merge-{a[:7]}-{b[:7]}"
    git(repo, "worktree", "add", "-q", "--detach", str(where), a)
    proc = subprocess.run(
        ["git", "merge", "--no-edit", "-q", b], cwd=where, capture_output=True, text=True
    )
    subprocess.run(["git", "merge", "--abort"], cwd=where, capture_output=True)
    git(repo, "worktree", "remove", "--force", str(where))
    return proc.returncode == 0


def first_line_changed(text: str, new: str) -> str:
    lines = text.split("\n")
    for n, old in enumerate(lines):
        if old.startswith("import "):
            lines[n] = new
            return "\n".join(lines)
    raise AssertionError("no import line")


@pytest.mark.parametrize("clash", [True, False])
def test_two_claims_editing_one_undeclared_file_are_reported_as_git_merges_them(
    lac: Lac, repo: Path, corpus: str, clash: bool
) -> None:
    assert lac("task", "add", "dana's", "--write", "requests/api.py").code == 0
    assert lac("task", "add", "erin's", "--write", "docs/").code == 0
    a = line(repo, lac, "dana", 1, corpus, lambda t: first_line_changed(t, "import datetime  # a"))
    if clash:
        b = line(repo, lac, "erin", 2, corpus, lambda t: first_line_changed(t, "import sys  # b"))
    else:
        b = line(repo, lac, "erin", 2, corpus, lambda t: t + "\n# erin's note at the end\n")
    got = lac("forecast", "--json")
    assert got.code == 0, got.err
    between = [m for m in got.json["meetings"] if {m["first"], m["second"]} == {1, 2}]
    assert len(between) == 1, got.json["meetings"]
    meeting = between[0]
    assert meeting["both"] == ["requests/models.py"]
    assert meeting["undeclared"] == ["requests/models.py"]
    assert meeting["conflicting"] is (not git_merges(repo, a, b))
    assert meeting["conflicting"] is clash
    assert meeting["conflicts"] == (["requests/models.py"] if clash else [])
    shown = lac("forecast")
    assert "#1 dana and #2 erin" in shown.out
    assert "undeclared   requests/models.py" in shown.out
    assert ("would conflict: requests/models.py" in shown.out) is clash


def test_a_line_against_what_the_destination_did_since_it_forked(
    lac: Lac, repo: Path, corpus: str
) -> None:
    # dana forks 200 commits back and edits a file main changed since.
    # main moved it to src/ since: a rename, which git's merge follows.
    changed = git(repo, "diff", "--no-renames", "--name-only", f"{corpus}..origin/main").split()
    assert "requests/models.py" in changed
    assert lac("task", "add", "dana's", "--write", "requests/models.py").code == 0
    tip = line(repo, lac, "dana", 1, corpus, lambda t: first_line_changed(t, "import os  # a"))
    got = lac("forecast", "--json").json
    [meeting] = [m for m in got["meetings"] if m["first"] is None]
    assert meeting["second"] == 1 and "requests/models.py" in meeting["both"]
    assert meeting["undeclared"] == []  # declared by its claim
    dest = git(repo, "rev-parse", "origin/main").strip()
    assert meeting["conflicting"] is (not git_merges(repo, dest, tip))


def test_forecast_without_destination_or_with_a_tip_not_here(
    lac: Lac, repo: Path, boards: Boards
) -> None:
    git(repo, "branch", "-m", "main", "trunk")
    refused = lac("forecast")
    assert refused.code == 2 and "no destination" in refused.err
    git(repo, "branch", "main")
    assert lac("task", "add", "t").code == 0
    assert lac("claim", "1", "--as", "dana").code == 0
    # A tip only another clone has (recorded by its heartbeat there).
    boards.sql("UPDATE lac_tasks SET tip = :tip, branch = 'elsewhere' WHERE id = 1", tip="f" * 40)
    got = lac("forecast", "--json")
    assert got.code == 0, got.err
    assert got.json["missing"] == [{"task": 1, "owner": "dana", "tip": "f" * 40}]
    assert "is not here (fetch)" in lac("forecast").out
