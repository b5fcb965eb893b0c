"""A fleet with and without locks that last until the work lands, in one run.

    python bench/landing.py [--agents 8] [--backlog 40] [--ticks 2000] [--seeds 5]
                            [--no-union] [--bundle PATH]

A model of the policy, not of the board's speed: time is in ticks, and every
arm below runs on the same seeds, so on the same stream of tasks with the
same durations. Its assumptions, all of them:

1. **Tasks are real commits.** Each task is the set of files one non-merge
   commit of `requests` (the shared corpus, its first 4,000 commits from
   origin/main, renames not followed) changed, 1 to 6 files, drawn uniformly
   from those commits (73% of them change one file). Commits of 7 files or
   more (reformattings, vendoring) are left out: a fleet would declare those
   with a broad glob, or run them alone.
2. **Declared and undeclared paths come from the same commit.** The task
   declares one file, its first .py file (else its first file): what a
   planner names when it writes the task. The commit's other files are
   changed undeclared: the co-change of real history is the part nobody
   declared.
3. **Changelogs merge by union.** HISTORY*, CHANGELOG*, CHANGES*, NEWS* and
   AUTHORS* (HISTORY.rst and AUTHORS.rst are in 10% of the corpus's tasks)
   never conflict, in every arm: append-only files are what a real project
   marks `merge=union` in .gitattributes, or lets a bot write. `--no-union`
   counts them as ordinary files (the model's first cut did).
4. **Time.** A task is worked for 3-6 ticks (uniform), then waits 2-8 ticks
   before it lands (review, CI, the merge queue); its worker is free as soon
   as the work is finished (`done`), in every arm. Each undeclared file shows
   on the line's tip (the commit hook records it) at one tick drawn uniformly
   within the work; the declared file is known from the claim.
5. **A backlog, not a finite queue.** There are always `--backlog` ready
   tasks (refilled from the stream as they are claimed, in order); the run
   lasts `--ticks` ticks. Throughput is tasks landed per 100 ticks. (A finite
   queue ends with a tail of tasks that all declare one file, served one at a
   time, which measures the queue's end, not the fleet.)
6. **An agent never idles while a task is claimable.** At every tick a free
   agent claims, as `claim --next` does, the first task of the backlog that
   is claimable (its declared file is not write-locked by another claim);
   with conflict-aware next, the first claimable task whose declared file
   meets no busy path (declared by a live claim, or observed on its tip),
   else (prefer) the first claimable one, or (strict) none. It idles only
   when nothing is claimable. An agent's own claims (a task of its own still
   landing) neither lock it out nor count as busy for it: the board's rule
   and claim --next's; it starts the next task from the destination, like
   every task, not from its own landing line.
7. **A conflict** is a landing that merges a file (not a union one) which
   another line changed and landed after this one was claimed: its base
   lacked that change, and git reconcile would meet both sides in that file.
   File level, not hunk level: it overcounts git's conflicts, equally in every
   arm. Nobody rebases to dodge it.

Arms: **before** (issue 25's "released too early": the write lock is freed at
`done`, next takes the first claimable task); **kept** (locks kept until the
work lands); **avoid** (released at done, conflict-aware next, prefer);
**after** (kept + avoid, prefer: the defaults on main); **strict** (kept +
avoid, strict). What-ifs, marked *, not built: **refuse*** (after, and
a landing claim's locks refuse its own holder's other tasks too, and count as
busy for it) and **stack*** (after, and an agent starts its next task from
its own landing lines, so their landing is no conflict for it; a line
stacked on another lands it too, so neither is a conflict for the other),
and **before-stack*** (before, with the same stacking, for fairness).
Printed: conflicting merges per 100 landed tasks,
throughput, agent-ticks idle and tasks passed over for each; the bound the
most declared file sets when a landing lock refuses everyone (Little's law: a
lock kept until landing holds a file for work + wait, not work alone); then
after against before with the issue's targets (conflicts reduced at least 5x,
at no less than 0.9x the throughput), met or missed, and the what-ifs against
their baselines. Nothing here is fitted to the targets: the durations, the
backlog and the fleet are the model's first cut's, or round numbers.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

BUNDLE = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "requests-main.bundle"
)
UNION = re.compile(r"(^|/)(HISTORY|CHANGELOG|CHANGES|NEWS|AUTHORS)([.-][^/]*)?$", re.IGNORECASE)
TARGET_REDUCTION, TARGET_THROUGHPUT = 5.0, 0.9
HOLD_DONE = (3 + 6) / 2  # mean ticks of work
HOLD_KEPT = HOLD_DONE + (2 + 8) / 2  # and of the wait to land


def co_change(bundle: Path, limit: int = 4000) -> tuple[list[list[str]], int]:
    """File sets of real commits (1 to 6 files, declared file first), and
    how many commits were read."""
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
    sets, commits = [], 0
    for chunk in out.split("\0"):
        files = [f for f in chunk.split("\n") if f.strip()]
        if not files:
            continue
        commits += 1
        if len(files) <= 6:
            code = [f for f in files if f.endswith(".py")]
            declared = code[0] if code else files[0]
            sets.append([declared, *(f for f in files if f != declared)])
    return sets, commits


@dataclass(eq=False)  # a task is itself: two tasks from one commit are two
class Task:
    files: list[str]
    work: int
    wait: int
    seen_at: list[int] = field(default_factory=list)  # tick offset each file shows on the tip
    claimed: int = -1
    done: int = -1
    agent: int = -1
    serial: int = 0
    stacked: frozenset[int] = frozenset()  # serials of the own lines it started from

    @property
    def declared(self) -> str:
        return self.files[0]


def stream(sets: list[list[str]], seed: int) -> Iterator[Task]:
    rng = random.Random(seed)
    serial = 0
    while True:
        files = rng.choice(sets)
        work, wait = rng.randint(3, 6), rng.randint(2, 8)
        seen = [0] + [rng.randint(1, work) for _ in files[1:]]
        serial += 1
        yield Task(list(files), work, wait, seen, serial=serial)


@dataclass(frozen=True)
class Arm:
    name: str
    kept: bool  # write locks kept until the work lands
    avoid: str  # off | prefer | strict
    own: str = "free"  # free (the board's rule) | refuse | stack: what-ifs


ARMS = (
    Arm("before", False, "off"),
    Arm("kept", True, "off"),
    Arm("avoid", False, "prefer"),
    Arm("after", True, "prefer"),
    Arm("strict", True, "strict"),
    Arm("refuse*", True, "prefer", own="refuse"),
    Arm("stack*", True, "prefer", own="stack"),
    Arm("before-stack*", False, "off", own="stack"),
)


@dataclass
class Run:
    landed: int = 0
    conflicts: int = 0
    idle: int = 0  # agent-ticks with nothing claimable
    passed_over: int = 0


def simulate(
    sets: list[list[str]],
    arm: Arm,
    *,
    agents: int,
    backlog: int,
    ticks: int,
    seed: int,
    union: bool,
) -> Run:
    tasks = stream(sets, seed)
    ready = [next(tasks) for _ in range(backlog)]
    live: list[Task] = []  # claimed, not landed
    working: set[int] = set()  # agents busy
    # file -> the lines that landed it lately: (tick, serial, what it stacked on)
    landings: dict[str, list[tuple[int, int, frozenset[int]]]] = {}
    run = Run()

    def merges(path: str) -> bool:
        return not (union and UNION.search(path))

    for tick in range(ticks):
        for task in list(live):  # work finishes, then lands, in claim order
            if task.done < 0 and tick >= task.claimed + task.work:
                task.done = tick
                working.discard(task.agent)
            if task.done >= 0 and tick >= task.done + task.wait:
                live.remove(task)
                run.landed += 1
                mine = [f for f in task.files if merges(f)]
                if any(
                    at > task.claimed and line not in task.stacked and task.serial not in under
                    for f in mine
                    for at, line, under in landings.get(f, ())
                ):
                    run.conflicts += 1
                for f in mine:  # a line lives at most 6 + 8 ticks: older ones never count
                    kept = [x for x in landings.get(f, ()) if x[0] > tick - 16]
                    landings[f] = [*kept, (tick, task.serial, task.stacked)]
        # An agent's own claims never refuse it, nor count as busy for it
        # (the board's rule, and claim --next's): only the others' do.
        holding = [t for t in live if arm.kept or t.done < 0]
        for agent in range(agents):
            if agent in working:
                continue
            others = [t for t in live if t.agent != agent or arm.own == "refuse"]
            locked = {t.declared for t in holding if t in others}
            busy = {
                f
                for t in others
                for f, at in zip(t.files, t.seen_at, strict=True)
                if tick >= t.claimed + at
            }
            claimable = [t for t in ready if t.declared not in locked]
            pick = claimable[0] if claimable else None
            if arm.avoid != "off":
                clear = next((t for t in claimable if t.declared not in busy), None)
                if clear is not None and clear is not pick:
                    run.passed_over += 1
                pick = clear if clear is not None or arm.avoid == "strict" else pick
            if pick is None:
                run.idle += 1
                continue
            ready.remove(pick)
            ready.append(next(tasks))
            pick.claimed, pick.agent = tick, agent
            if arm.own == "stack":  # its branch starts from its own landing lines
                pick.stacked = frozenset(t.serial for t in live if t.agent == agent)
            live.append(pick)
            holding.append(pick)
            working.add(agent)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--backlog", type=int, default=40, help="ready tasks at any time")
    parser.add_argument("--ticks", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--no-union", action="store_true", help="changelogs conflict too")
    parser.add_argument("--bundle", type=Path, default=BUNDLE)
    args = parser.parse_args()
    sets, commits = co_change(args.bundle)
    union = not args.no_union
    touched = sum(1 for s in sets if any(UNION.search(f) for f in s))
    print(
        f"tasks: {len(sets)} real commits of 1-6 files (of {commits} read; "
        f"{sum(1 for s in sets if len(s) > 1)} change undeclared files; "
        f"{touched} touch a changelog, {'merged by union' if union else 'counted as ordinary'})"
    )
    print(
        f"fleet: {args.agents} agents, backlog {args.backlog}, {args.ticks} ticks, "
        f"{args.seeds} seeds (mean)"
    )
    print(
        f"{'arm':<14} {'locks':<10} {'next':<7} {'conflicts/100':>13} {'throughput':>11} "
        f"{'idle%':>6} {'passed':>7}"
    )
    rows: dict[str, tuple[float, float]] = {}
    for arm in ARMS:
        conflicts, throughput, idle, passed = [], [], [], []
        for seed in range(args.seeds):
            run = simulate(
                sets,
                arm,
                agents=args.agents,
                backlog=args.backlog,
                ticks=args.ticks,
                seed=seed,
                union=union,
            )
            conflicts.append(100 * run.conflicts / max(run.landed, 1))
            throughput.append(100 * run.landed / args.ticks)
            idle.append(100 * run.idle / (args.agents * args.ticks))
            passed.append(run.passed_over)
        rows[arm.name] = (statistics.mean(conflicts), statistics.mean(throughput))
        print(
            f"{arm.name:<14} {'landed' if arm.kept else 'done':<10} {arm.avoid:<7} "
            f"{rows[arm.name][0]:13.2f} {rows[arm.name][1]:11.2f} "
            f"{statistics.mean(idle):6.1f} {statistics.mean(passed):7.0f}"
        )
    # Little's law: a declared file is held for work + wait when locks are
    # kept (work alone when freed at done); the file most tasks declare
    # bounds the fleet, however many agents or however large the backlog.
    top = Counter(s[0] for s in sets).most_common(1)[0]
    share = top[1] / len(sets)
    print(
        f"bound: {top[0]} is declared by {100 * share:.1f}% of tasks; held {HOLD_KEPT:g} ticks "
        f"on average until it lands, a landing lock that refuses everyone (refuse*) caps "
        f"in the long run a fleet that serves the tasks as drawn at "
        f"{100 / (HOLD_KEPT * share):.0f} tasks/100 ticks, {100 / (HOLD_DONE * share):.0f} "
        f"freed at done ({100 * args.agents / HOLD_DONE:.0f} for {args.agents} agents)"
    )
    (c0, t0), (c1, t1) = rows["before"], rows["after"]
    reduced = c0 / c1 if c1 else float("inf")
    ratio = t1 / t0
    met = reduced >= TARGET_REDUCTION and ratio >= TARGET_THROUGHPUT
    print(
        f"after vs before: conflicts reduced {reduced:.1f}x (target >= {TARGET_REDUCTION:g}x), "
        f"throughput {ratio:.2f}x (target >= {TARGET_THROUGHPUT:g}x): "
        f"{'target met' if met else 'target MISSED'}"
    )
    for what_if, base in (("refuse*", "before"), ("stack*", "before"), ("stack*", "before-stack*")):
        (cb, tb), (cw, tw) = rows[base], rows[what_if]
        print(
            f"what-if {what_if} vs {base}: conflicts reduced "
            f"{cb / cw if cw else float('inf'):.1f}x, throughput {tw / tb:.2f}x"
        )


if __name__ == "__main__":
    main()
