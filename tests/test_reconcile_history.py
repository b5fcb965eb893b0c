"""Reconcile against git's own merge, on the real history of a public project.

The corpus is the main branch of `requests` (1,612 two-parent merges). For a
sample of them, every criss-cross merge included, reconcile runs from the
first parent onto the second through the command line and is compared with
`git merge-tree --write-tree` of the same two commits: the same outcome, the
same tree when clean, the same unmerged paths when not. `bench/fidelity.py`
makes the same comparison over every merge.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import REPO_ROOT, git, lac_inprocess

BUNDLE = REPO_ROOT.parent / "shared" / "corpus" / "requests-main.bundle"
EVERY = 60  # one merge in EVERY, plus every criss-cross merge


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not BUNDLE.exists():
        pytest.skip(f"corpus not found at {BUNDLE}")
    clone = tmp_path_factory.mktemp("history") / "requests"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(BUNDLE), str(clone)], check=True)
    yield clone


def merges(repo: Path) -> list[tuple[str, str, str]]:
    out = git(repo, "rev-list", "--merges", "--parents", "refs/remotes/origin/main")
    return [tuple(line.split()) for line in out.splitlines() if len(line.split()) == 3]  # type: ignore[misc]


def expected(repo: Path, ours: str, theirs: str) -> tuple[bool, str, set[str]]:
    proc = subprocess.run(
        ["git", "merge-tree", "--write-tree", "--name-only", "-z", ours, theirs],
        cwd=repo,
        capture_output=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    tree, _, rest = proc.stdout.partition(b"\0")
    conflicted = set()
    for name in rest.split(b"\0"):
        if not name:
            break
        conflicted.add(name.decode())
    return proc.returncode == 0, tree.decode(), conflicted


def test_reconcile_equals_git_merge_tree_on_real_merges(history: Path) -> None:
    all_merges = merges(history)
    assert len(all_merges) > 1500
    criss_cross = [
        m for m in all_merges if len(git(history, "merge-base", "--all", m[1], m[2]).split()) > 1
    ]
    assert criss_cross, "the corpus has criss-cross merges; the scan must find them"
    sample = sorted(set(all_merges[::EVERY]) | set(criss_cross))
    counts = {"clean": 0, "conflicted": 0}
    for _merge, ours, theirs in sample:
        git(history, "checkout", "-q", "--force", "--detach", ours)
        git(history, "clean", "-qfdx")
        clean, tree, conflicted = expected(history, ours, theirs)
        result = lac_inprocess(history, "reconcile", theirs, "--json")
        label = f"{ours[:10]} <- {theirs[:10]}"
        if clean:
            assert result.code == 0, (label, result.err)
            assert git(history, "write-tree").strip() == tree, label
        else:
            assert result.code == 1, (label, result.out, result.err)
            assert set(result.json["conflicts"]) == conflicted, label
            unmerged = git(history, "diff", "--name-only", "--diff-filter=U").split("\n")
            assert {p for p in unmerged if p} == conflicted, label
        counts["clean" if clean else "conflicted"] += 1
        if tree == git(history, "rev-parse", f"{ours}^{{tree}}").strip():
            continue  # their side is already in ours: nothing was written, nothing to abort
        assert lac_inprocess(history, "reconcile", "--abort").code == 0, label
        assert git(history, "status", "--porcelain", "--untracked-files=no") == "", label
    assert counts["clean"] > 0 and counts["conflicted"] > 0, counts
