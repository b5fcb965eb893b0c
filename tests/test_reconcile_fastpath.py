"""`git lac reconcile` skips click (entry.py), and says exactly what the full
command line says. A global option before the verb (`git lac --json
reconcile …`) always takes the full command line, so the two are compared
side by side on the same repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import git, lac_process

LINES = "".join(f"line {n}\n" for n in range(1, 21))


def fork(repo: Path) -> None:
    (repo / "doc.txt").write_text(LINES)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "doc")
    git(repo, "checkout", "-qb", "offline")
    (repo / "doc.txt").write_text(LINES.replace("line 5\n", "theirs\n"))
    git(repo, "commit", "-qam", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "doc.txt").write_text(LINES.replace("line 5\n", "ours\n"))
    git(repo, "commit", "-qam", "ours")


READ_ONLY = [
    ["offline", "--dry-run"],
    ["--dry-run", "offline", "--base", "HEAD~1"],
    ["offline", "--base=HEAD~1", "--dry-run"],
    ["no-such-ref"],
    ["--abort"],
    ["--continue"],
    ["offline", "--abort"],
    [],
]


@pytest.mark.parametrize("args", READ_ONLY, ids=lambda a: " ".join(a) or "none")
def test_fast_path_and_full_command_line_agree(repo: Path, args: list[str]) -> None:
    fork(repo)
    assert lac_process(repo, "init").code == 0
    fast = lac_process(repo, "reconcile", *args, "--json")
    full = lac_process(repo, "--json", "reconcile", *args)
    assert (fast.code, json.loads(fast.out), fast.err) == (
        full.code,
        json.loads(full.out),
        full.err,
    )
    assert git(repo, "status", "--porcelain") == ""


def test_a_conflicted_reconcile_is_the_same_either_way(repo: Path, tmp_path: Path) -> None:
    fork(repo)
    twin = tmp_path / "twin"
    git(tmp_path, "clone", "-q", str(repo), str(twin))
    git(twin, "branch", "-q", "offline", "origin/offline")
    fast = lac_process(repo, "reconcile", "offline")
    full = lac_process(twin, "--as", "tester", "reconcile", "offline")
    assert fast.code == full.code == 1
    assert (fast.out, fast.err) == (full.out, full.err)
    assert git(repo, "status", "--porcelain") == git(twin, "status", "--porcelain")


def test_the_fast_path_imports_no_click(repo: Path) -> None:
    probe = (
        "import sys; sys.argv = ['git-lac', 'reconcile', 'HEAD']\n"
        "from git_lacunari import entry\n"
        "try:\n    entry.main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "print(code, 'click' in sys.modules, 'git_lacunari.board' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, check=True
    )
    assert proc.stdout.split()[-3:] == ["0", "False", "False"], proc.stdout + proc.stderr


def test_words_it_does_not_know_go_to_click(repo: Path) -> None:
    for args in (["-h"], ["--help"], ["offline", "--bogus"], ["a", "b"], ["--base"]):
        result = lac_process(repo, "reconcile", *args)
        if args[0] in ("-h", "--help"):
            assert result.code == 0 and "Usage: git lac reconcile" in result.out
        else:
            assert result.code == 2, (args, result)
