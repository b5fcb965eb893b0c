"""Forecast over live branches of real history, beside its budget, in one run.

    python bench/forecast.py [--lines 20] [--runs 5] [--no-cli] [--bundle PATH]

The corpus is the main branch of `requests`. The live lines are the second
parents of --lines consecutive two-parent merges (real feature branches), and
the destination is the first parent of the oldest of those merges: each line
is compared with every other and with what the destination did since the line
forked, as `git lac forecast` does. Printed: the median wall time of the whole
forecast (target: under 2 s for 20 lines), the pairs that met, and how many of
them git says conflict; beside it, the floor of the naive way: one `git
merge-tree --write-tree` process per pair of lines, every pair.

Then the commands themselves, on a SQLite board in the clone: each line is a
live claim of its own agent, on a branch at that tip (lac.target: the
destination above), and 20 more tasks are open, the first 10 declaring a file
a line changed, the rest a file none did. Printed: the median wall time of
`git lac forecast` (the whole process: board, git, rendering), and of `git lac
claim --next` with lac.next.avoid=prefer (which reads every live line's
changes to pass over the busy tasks) beside avoid=off, runs interleaved,
each claim released (untimed) before the next (target: at most 1.5x).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from git_lacunari.forecast import Line, forecast  # noqa: E402

BUNDLE = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "requests-main.bundle"
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bundle", type=Path, default=BUNDLE)
    parser.add_argument("--no-cli", action="store_true", help="the forecast function only")
    args = parser.parse_args()
    repo = Path(tempfile.mkdtemp(prefix="lac-forecast-bench-")) / "requests"
    git(repo.parent, "clone", "-q", "--no-checkout", str(args.bundle), str(repo))
    merges = [
        line.split()
        for line in git(repo, "rev-list", "--merges", "--parents", "origin/main").splitlines()
        if len(line.split()) == 3
    ]
    # Consecutive merges from the middle of the history: lines alive together.
    chosen = merges[len(merges) // 2 : len(merges) // 2 + args.lines]
    destination = chosen[-1][1]
    lines = [Line(f"line{n}", theirs) for n, (_m, _ours, theirs) in enumerate(chosen)]
    times, result = [], None
    for _ in range(args.runs):
        start = time.perf_counter()
        result = forecast(repo, destination, lines)
        times.append(time.perf_counter() - start)
    assert result is not None
    naive = []
    for _ in range(max(1, args.runs // 2)):
        start = time.perf_counter()
        for i, a in enumerate(lines):
            for b in lines[i + 1 :]:
                subprocess.run(
                    ["git", "merge-tree", "--write-tree", "--name-only", a.tip, b.tip],
                    cwd=repo,
                    capture_output=True,
                    check=False,
                )
        naive.append(time.perf_counter() - start)
    conflicting = sum(1 for m in result.meetings if m.conflicting)
    pairs = args.lines * (args.lines - 1) // 2 + args.lines
    print(
        f"forecast of {args.lines} live lines of real history ({pairs} pairs with the destination)"
    )
    print(f"  median {statistics.median(times):.3f} s over {args.runs} runs (target < 2 s)")
    print(f"  {len(result.meetings)} pairs meet on a file, {conflicting} of them conflict")
    print(
        f"  naive, one merge-tree per pair of lines: {statistics.median(naive):.3f} s "
        f"({statistics.median(naive) / statistics.median(times):.1f}x the forecast)"
    )
    if not args.no_cli:
        commands(repo, destination, [line.tip for line in lines], args.runs)


def lac(repo: Path, *args: str) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "git_lacunari", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "LAC_EDIT_HELPER": "off"},
    ).stdout
    return time.perf_counter() - start, out


def commands(repo: Path, destination: str, tips: list[str], runs: int) -> None:
    git(repo, "branch", "-f", "lac-destination", destination)
    git(repo, "config", "lac.target", "lac-destination")
    lac(repo, "init")
    changed: list[str] = []
    for n, tip in enumerate(tips):
        files = git(repo, "diff", "--name-only", f"{destination}...{tip}").split()
        # Each declares the first file it changes that no other line declared.
        declared = next((f for f in files if f not in changed), f"line{n}/")
        changed += [f for f in files if f not in changed]
        lac(repo, "task", "add", f"line {n}", "--write", declared)
        git(repo, "branch", "-f", f"line{n}", tip)
        git(repo, "symbolic-ref", "HEAD", f"refs/heads/line{n}")
        lac(repo, "claim", str(n + 1), "--as", f"agent{n}")
    quiet = [f for f in git(repo, "ls-tree", "-r", "--name-only", destination).split()]
    quiet = [f for f in quiet if f not in changed]
    for n, path in enumerate(changed[:10] + quiet[:10]):
        lac(repo, "task", "add", f"open {n}", "--write", path)
    git(repo, "symbolic-ref", "HEAD", "refs/heads/lac-destination")
    forecasts = [lac(repo, "forecast")[0] for _ in range(runs)]
    timed: dict[str, list[float]] = {"off": [], "prefer": []}
    passed: dict[str, int] = {"off": 0, "prefer": 0}
    for _ in range(max(runs, 7)):
        for policy in timed:
            git(repo, "config", "lac.next.avoid", policy)
            took, out = lac(repo, "claim", "--next", "--json", "--as", "bench")
            timed[policy].append(took)
            passed[policy] = len(json.loads(out).get("passed_over", []))
            lac(repo, "release", str(json.loads(out)["task"]["id"]), "--as", "bench")
    off, prefer = (statistics.median(timed[p]) for p in ("off", "prefer"))
    print(f"git lac forecast, {len(tips)} live claims on a SQLite board")
    print(f"  median {statistics.median(forecasts):.3f} s over {runs} runs (target < 2 s)")
    print(f"git lac claim --next beside {len(tips)} live claims, 20 open tasks")
    print(
        f"  avoid=prefer {prefer:.3f} s, avoid=off {off:.3f} s: {prefer / off:.2f}x "
        f"(target <= 1.5x; medians of {len(timed['off'])}; tasks passed over: "
        f"{passed['prefer']} with prefer, {passed['off']} with off)"
    )


if __name__ == "__main__":
    main()
