"""Reconcile beside `git merge`, measured side by side in one run.

    python bench/reconcile.py [--files 1000] [--runs 3] [--largest 15] [--bundle PATH]

1. Synthetic: both branches edit every one of --files files in regions that
   do not overlap, so every file needs a real three-way merge. Each run
   clones the prepared repository twice and times `git lac reconcile theirs`
   in one and `git merge --no-edit theirs` in the other; beside them, the
   floor of the old engine: one bare `git merge-file` process per file.
2. Real history: the --largest two-parent merges (by files changed) of the
   corpus bundle; for each, `git lac reconcile P2` from P1 and
   `git merge --no-commit P2` from P1, alternately, in two clones; the median
   of the per-merge ratios is printed.
3. The fixed cost: `git lac reconcile HEAD` (nothing to do) beside `git
   rev-parse HEAD`, the cheapest git process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.com",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.com",
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True)


def body(n: int, edit: dict[int, str]) -> str:
    return "".join(edit.get(i, f"file {n} line {i}") + "\n" for i in range(30))


def prepare(files: int) -> Path:
    repo = Path(tempfile.mkdtemp(prefix="lac-rec-bench-")) / "origin"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")

    def write_all(edit: dict[int, str]) -> None:
        for n in range(files):
            path = repo / f"pkg{n % 20}" / f"mod{n}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body(n, edit))

    write_all({})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-q", "-b", "theirs")
    write_all({25: "edited by them"})
    git(repo, "commit", "-qam", "theirs")
    git(repo, "checkout", "-q", "main")
    write_all({3: "edited by us"})
    git(repo, "commit", "-qam", "ours")
    return repo


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed: {proc.stdout.decode()[-500:]} {proc.stderr.decode()}")
    return elapsed


def merge_file_floor(files: int) -> float:
    """What one `git merge-file` process per file costs by itself here: the
    same number of bare runs on small files, as many at a time as cores."""
    from concurrent.futures import ThreadPoolExecutor

    scratch = Path(tempfile.mkdtemp(prefix="lac-floor-"))
    for name, edit in (("ours", {3: "us"}), ("base", {}), ("theirs", {25: "them"})):
        (scratch / name).write_text(body(0, edit))

    def one(_: int) -> None:
        subprocess.call(
            [
                "git",
                "merge-file",
                "-p",
                str(scratch / "ours"),
                str(scratch / "base"),
                str(scratch / "theirs"),
            ],
            stdout=subprocess.DEVNULL,
        )

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(one, range(files)))
    return time.perf_counter() - start


def run_quiet(cmd: list[str], cwd: Path) -> None:
    subprocess.run(cmd, cwd=cwd, env=ENV, check=True, capture_output=True)


def real_history(bundle: Path, largest: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="lac-rec-hist-"))
    lac_clone, git_clone = work / "lac", work / "git"
    for clone in (lac_clone, git_clone):
        run_quiet(["git", "clone", "-q", str(bundle), str(clone)], work)
    run_quiet([str(BIN / "git-lac"), "init"], lac_clone)
    out = subprocess.run(
        ["git", "rev-list", "--merges", "--parents", "refs/remotes/origin/main"],
        cwd=git_clone,
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pairs = [line.split()[1:] for line in out.splitlines() if len(line.split()) == 3]

    def size(pair: list[str]) -> int:
        names = subprocess.run(
            ["git", "diff", "--name-only", pair[0], pair[1]],
            cwd=git_clone,
            env=ENV,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return len(names.splitlines())

    chosen = sorted(pairs, key=size, reverse=True)[:largest]
    ratios, lac_times, git_times = [], [], []
    for ours, theirs in chosen:
        for clone in (lac_clone, git_clone):
            run_quiet(["git", "checkout", "-q", "--force", "--detach", ours], clone)
            run_quiet(["git", "clean", "-qfdx", "-e", ".git"], clone)
        lac_s = timed_any([str(BIN / "git-lac"), "reconcile", theirs], lac_clone)
        git_s = timed_any(["git", "merge", "-q", "--no-commit", "--no-ff", theirs], git_clone)
        # Each undone its own way, so no state is left behind to tidy next time.
        subprocess.run(
            [str(BIN / "git-lac"), "reconcile", "--abort"],
            cwd=lac_clone,
            env=ENV,
            capture_output=True,
        )
        subprocess.run(["git", "merge", "--abort"], cwd=git_clone, env=ENV, capture_output=True)
        lac_times.append(lac_s)
        git_times.append(git_s)
        ratios.append(lac_s / git_s)
    print(f"\nreal history: the {len(chosen)} largest merges of {bundle.name}")
    print(f"git lac reconcile  median {statistics.median(lac_times):7.3f} s")
    print(f"git merge          median {statistics.median(git_times):7.3f} s")
    print(f"ratio              median {statistics.median(ratios):7.2f}x  (target: at most 2x)")


def timed_any(cmd: list[str], cwd: Path) -> float:
    """Timed; exit 1 (conflicts) is a result here, not a failure."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {proc.stderr.decode()}")
    return elapsed


def fixed_cost(runs: int) -> None:
    repo = Path(tempfile.mkdtemp(prefix="lac-rec-noop-"))
    git(repo, "init", "-q", "-b", "main")
    (repo / "f").write_text("x\n")
    git(repo, "add", "f")
    git(repo, "commit", "-qm", "one")
    run_quiet([str(BIN / "git-lac"), "init"], repo)
    lac = [timed([str(BIN / "git-lac"), "reconcile", "HEAD"], repo) for _ in range(runs)]
    bare = [timed(["git", "rev-parse", "HEAD"], repo) for _ in range(runs)]
    print("\nfixed cost: `git lac reconcile HEAD` with nothing to do")
    print(
        f"git lac reconcile  median {statistics.median(lac) * 1000:7.1f} ms  (target: under 120 ms)"
    )
    print(f"git rev-parse      median {statistics.median(bare) * 1000:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--largest", type=int, default=15)
    parser.add_argument(
        "--bundle",
        type=Path,
        default=Path(__file__).resolve().parent.parent.parent
        / "shared"
        / "corpus"
        / "requests-main.bundle",
    )
    args = parser.parse_args()
    origin = prepare(args.files)
    ours, merges = [], []
    for run in range(args.runs):
        lac_clone = origin.parent / f"lac{run}"
        git_clone = origin.parent / f"git{run}"
        for clone in (lac_clone, git_clone):
            subprocess.run(["git", "clone", "-q", str(origin), str(clone)], env=ENV, check=True)
            git(clone, "branch", "-q", "theirs", "origin/theirs")
        subprocess.run(
            [str(BIN / "git-lac"), "init"], cwd=lac_clone, env=ENV, check=True, capture_output=True
        )
        ours.append(timed([str(BIN / "git-lac"), "reconcile", "theirs"], lac_clone))
        merges.append(timed(["git", "merge", "-q", "--no-edit", "theirs"], git_clone))
        merged = (lac_clone / "pkg0" / "mod0.txt").read_text()
        assert "edited by us" in merged and "edited by them" in merged, "not merged"
    lac_s, git_s = statistics.median(ours), statistics.median(merges)
    floor_s = merge_file_floor(args.files)
    print(f"{args.files} files edited on both sides (non-overlapping), median of {args.runs}")
    print(f"git lac reconcile  {lac_s:7.3f} s")
    print(f"git merge          {git_s:7.3f} s")
    print(f"ratio              {lac_s / git_s:7.2f}x git merge")
    print(
        f"merge-file floor   {floor_s:7.3f} s  = {floor_s / git_s:.2f}x git merge: "
        f"{args.files} bare `git merge-file` runs alone, {os.cpu_count()} at a time"
    )
    print(f"reconcile / floor  {lac_s / floor_s:7.2f}x  (target: within 1.2x)")
    fixed_cost(max(args.runs, 10))
    if args.bundle.exists():
        real_history(args.bundle, args.largest)
    else:
        print(f"\nreal history: skipped, no bundle at {args.bundle}")


if __name__ == "__main__":
    main()
