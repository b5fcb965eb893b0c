"""A fleet with and without locks that last until the work lands, in one run.

    python bench/landing.py [--agents 8] [--tasks 300] [--seeds 5] [--bundle PATH]

A model of the policy, not of the board's speed: time is in ticks. Tasks are
the co-change of real history: each is the set of files one non-merge commit
of `requests` (the shared corpus) changed, 2 to 6 of them; the task declares
one (its first .py file, else its first file) and changes the others
undeclared. N agents take tasks in queue order; a task is worked for 3-6
ticks, then waits 2-8 ticks before it lands (review, CI, the merge queue).

- **before** (issue 25's "released too early"): `done` frees the declared
  lock when the work is finished, before it lands; `claim --next` takes the
  first task whose declared path is not locked.
- **after**: write locks are kept until the work lands (landing), and
  `claim --next` passes over tasks whose declared path meets a path a live
  line changes, declared or observed (lac.next.avoid=prefer: when every task
  meets one, it takes the first anyway).

A landing conflicts when it merges a file that another line changed and
landed after this one started (its base lacked that change): the conflicts
`git lac reconcile` would meet. Printed, per policy: conflicting landings per
100 tasks and throughput (tasks landed per 100 ticks), and the ratios
(target: conflicts reduced at least 5x, at no less than 0.9x the throughput).
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

BUNDLE = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "requests-main.bundle"
)


def co_change(bundle: Path, limit: int = 4000) -> list[list[str]]:
    """File sets of real commits: what changes together."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "clone", "-q", str(bundle), tmp], check=True, capture_output=True)
        out = subprocess.run(
            [
                "git",
                "log",
                "origin/main",
                "--no-merges",
                "--no-renames",
                "--name-only",
                "--format=%x00",
                f"-n{limit}",
            ],
            cwd=tmp,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    sets = []
    for chunk in out.split("\0"):
        files = [f for f in chunk.split("\n") if f.strip()]
        if 2 <= len(files) <= 6:
            # The task declares the code it is about (its first .py file),
            # not the changelog it also touches: that one is undeclared.
            code = [f for f in files if f.endswith(".py")]
            if code:
                files.remove(code[0])
                files.insert(0, code[0])
            sets.append(files)
    return sets


@dataclass
class Task:
    files: list[str]
    claimed: int = -1
    done: int = -1
    landed: int = -1
    agent: int = -1
    work: int = 0
    wait: int = 0

    @property
    def declared(self) -> str:
        return self.files[0]


@dataclass
class Run:
    landed: list[Task] = field(default_factory=list)
    conflicts: int = 0
    ticks: int = 0
    passed_over: int = 0


def simulate(sets: list[list[str]], agents: int, n: int, seed: int, after: bool) -> Run:
    rng = random.Random(seed)
    queue = [
        Task(list(rng.choice(sets)), work=rng.randint(3, 6), wait=rng.randint(2, 8))
        for _ in range(n)
    ]
    run = Run()
    busy_agent: dict[int, Task] = {}
    live: list[Task] = []  # claimed, not landed
    tick = 0
    while len(run.landed) < n and tick < 100_000:
        # Work finishes, then lands.
        for task in list(live):
            if task.done < 0 and tick >= task.claimed + task.work:
                task.done = tick
                busy_agent.pop(task.agent, None)
            if task.done >= 0 and tick >= task.done + task.wait:
                task.landed = tick
                live.remove(task)
                run.landed.append(task)
                if any(
                    other.landed > task.claimed and set(other.files) & set(task.files)
                    for other in run.landed[:-1]
                ):
                    run.conflicts += 1
        # Locks: the declared path of every claim still holding it.
        holding = [t for t in live if after or t.done < 0]
        locked = {t.declared for t in holding}
        observed = {f for t in live for f in t.files} | locked  # tips show what lines change
        for agent in range(agents):
            if agent in busy_agent or not queue:
                continue
            free = [t for t in queue if t.declared not in locked]
            pick = None
            if after:
                pick = next((t for t in free if t.declared not in observed), None)
                if pick is not None and free and pick is not free[0]:
                    run.passed_over += 1
            if pick is None:
                pick = free[0] if free else None
            if pick is None:
                continue
            queue.remove(pick)
            pick.claimed, pick.agent = tick, agent
            busy_agent[agent] = pick
            live.append(pick)
            locked.add(pick.declared)
            observed |= set(pick.files)
        tick += 1
    run.ticks = tick
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--bundle", type=Path, default=BUNDLE)
    args = parser.parse_args()
    sets = co_change(args.bundle)
    print(
        f"co-change: {len(sets)} real commits of 2-6 files; {args.agents} agents, "
        f"{args.tasks} tasks, {args.seeds} seeds"
    )
    rows = {}
    for after in (False, True):
        conflicts, throughput = [], []
        for seed in range(args.seeds):
            run = simulate(sets, args.agents, args.tasks, seed, after)
            conflicts.append(100 * run.conflicts / args.tasks)
            throughput.append(100 * len(run.landed) / run.ticks)
        rows[after] = (statistics.mean(conflicts), statistics.mean(throughput))
        name = "after (kept + avoid)" if after else "before (released at done)"
        print(
            f"{name:<27} conflicting merges per 100 tasks {rows[after][0]:6.2f}   "
            f"throughput {rows[after][1]:6.2f} tasks/100 ticks"
        )
    (c0, t0), (c1, t1) = rows[False], rows[True]
    reduced = c0 / c1 if c1 else float("inf")
    print(
        f"conflicts reduced {reduced:.1f}x (target >= 5x); throughput {t1 / t0:.2f}x "
        "(target >= 0.9x)"
    )


if __name__ == "__main__":
    main()
