"""Forecast over live branches of real history, beside its budget, in one run.

    python bench/forecast.py [--lines 20] [--runs 5] [--bundle PATH]

The corpus is the main branch of `requests`. The live lines are the second
parents of --lines consecutive two-parent merges (real feature branches), and
the destination is the first parent of the oldest of those merges: each line
is compared with every other and with what the destination did since the line
forked, as `git lac forecast` does. Printed: the median wall time of the whole
forecast (target: under 2 s for 20 lines), the pairs that met, and how many of
them git says conflict; beside it, the floor of the naive way: one `git
merge-tree --write-tree` process per pair of lines, every pair.
"""

from __future__ import annotations

import argparse
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


if __name__ == "__main__":
    main()
