"""Reconcile against git on every two-parent merge of a real history.

    python bench/fidelity.py [--bundle PATH] [--every N]

For each merge (or one in N), from its first parent: `git lac reconcile P2`
in one clone, `git merge --no-commit --no-ff P2` in another, and
`git merge-tree --write-tree P1 P2` as the reference. Compared: the outcome
(clean or conflicted), the index tree when clean, the unmerged paths when
not. Prints the counts and every difference; exits 1 if any.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from git_lacunari.cli import run as lac_run  # noqa: E402

ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.com",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.com",
}


def git(repo: Path, *args: str, ok: tuple[int, ...] = (0,)) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, env=ENV, capture_output=True, text=True)
    if proc.returncode not in ok:
        raise SystemExit(f"git {' '.join(args)}: {proc.stderr}")
    return proc.stdout


def lac(repo: Path, *args: str) -> int:
    old = os.getcwd()
    os.chdir(repo)
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            return lac_run(list(args))
    finally:
        os.chdir(old)


def outcome(repo: Path) -> tuple[bool, str]:
    unmerged = sorted(set(git(repo, "diff", "--name-only", "--diff-filter=U").split("\n")) - {""})
    if unmerged:
        return False, " ".join(unmerged)
    return True, git(repo, "write-tree").strip()


def reference(repo: Path, ours: str, theirs: str) -> tuple[bool, str]:
    proc = subprocess.run(
        ["git", "merge-tree", "--write-tree", "--name-only", "-z", ours, theirs],
        cwd=repo,
        env=ENV,
        capture_output=True,
    )
    tree, _, rest = proc.stdout.partition(b"\0")
    if proc.returncode == 0:
        return True, tree.decode()
    names = []
    for name in rest.split(b"\0"):
        if not name:
            break
        names.append(name.decode())
    return False, " ".join(sorted(set(names)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bundle", type=Path, default=ROOT.parent / "shared" / "corpus" / "requests-main.bundle"
    )
    parser.add_argument("--every", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lac-fidelity-"))
    ours_clone, git_clone = work / "lac", work / "git"
    for clone in (ours_clone, git_clone):
        subprocess.run(
            ["git", "clone", "-q", str(args.bundle), str(clone)],
            env=ENV,
            check=True,
            capture_output=True,
        )
    lac(ours_clone, "init")
    lines = git(git_clone, "rev-list", "--merges", "--parents", "refs/remotes/origin/main")
    merges = [line.split() for line in lines.splitlines() if len(line.split()) == 3][:: args.every]
    counts = {
        "merges": 0,
        "criss-cross": 0,
        "clean": 0,
        "conflicted": 0,
        "equal to merge-tree": 0,
        "equal to git merge": 0,
    }
    differences = []
    for merge, p1, p2 in merges:
        counts["merges"] += 1
        if len(git(git_clone, "merge-base", "--all", p1, p2).split()) > 1:
            counts["criss-cross"] += 1
        want = reference(git_clone, p1, p2)
        counts["clean" if want[0] else "conflicted"] += 1
        for clone in (ours_clone, git_clone):
            git(clone, "checkout", "-q", "--force", "--detach", p1)
            git(clone, "clean", "-qfdx")
        code = lac(ours_clone, "reconcile", p2)
        ours = outcome(ours_clone)
        git(git_clone, "merge", "-q", "--no-commit", "--no-ff", p2, ok=(0, 1))
        theirs = outcome(git_clone)
        if ours == want and code == (0 if want[0] else 1):
            counts["equal to merge-tree"] += 1
        else:
            differences.append(f"{merge[:10]}: reconcile {code} {ours} vs merge-tree {want}")
        if theirs == want:
            counts["equal to git merge"] += 1
        else:
            differences.append(f"{merge[:10]}: git merge {theirs} vs merge-tree {want}")
        for clone in (ours_clone, git_clone):
            git(clone, "merge", "--abort", ok=(0, 128))
        lac(ours_clone, "reconcile", "--abort")
    for key, value in counts.items():
        print(f"{key:<22} {value}")
    for line in differences:
        print("DIFF", line)
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
