"""A fleet with and without locks that last until the work lands, in one run.

    python bench/landing.py [--agents 8] [--backlog 40] [--ticks 2000] [--seeds 5]
                            [--first-seed 0] [--no-union] [--bundle PATH] [--board]

``--board`` runs the fleet on a real board (SQLite, in a temporary
directory): every task added to it, every claim its ``claim_next`` (given
what ``landing.steering_facts`` would give it), its locks refusing, ``done``
(``--now``, or ``land`` with a made-up tip) and the landing settled through
it. The arms it has no switch for (avoid-own*, refuse*, edit-fresh*,
edit-stack*) are left out; edit-lock and stacking ask the board's grants for
their locks (when the model takes one, and when a wait runs out; stacking
with the lines the branch is built on) and assert each answer is the
model's. Its
figures are the model's, to the digit, every column (the model's lock
rule is the board's).

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
   agent claims what `claim --next` would: the board's own order,
   `git_lacunari.rules.steer` (imported, not copied), over the backlog's
   claimable tasks (its declared file is not write-locked by another
   agent's claim: an agent's own locks never refuse it, the board's rule).
   It is given what `landing.steering_facts` gives the board: the busy paths
   of the other agents' claims on the board (declared, and each undeclared
   file once it has shown on the tip) and, locks kept, its own landing
   lines with their files. With conflict-aware next, a task that meets no
   busy path, or only its own landing lines, is taken in the backlog's
   order; else (prefer) the first that meets others' work, or (strict)
   none. When the claim names own landing lines to start from
   (`start_from`), the agent starts its branch from them, so their landing
   is no conflict for it; a line stacked on another lands it too, and what
   that one was built on. It idles
   only when nothing is claimable. A task done with its locks freed at
   once is off the board: nobody steers by it.
7. **A conflict** is a landing that merges a file (not a union one) which
   another line changed and landed after this one was claimed: its base
   lacked that change, and git reconcile would meet both sides in that file.
   File level, not hunk level: it overcounts git's conflicts, equally in every
   arm. Nobody rebases to dodge it.

Arms: **before** ("released too early": the write lock is freed at
`done`, next takes the first claimable task); **kept** (locks kept until the
work lands); **avoid** (released at done, conflict-aware next, prefer);
**after-free** (kept + avoid, but an agent's own landing lines neither steer
it nor are started from: the board of the last session); **after** (kept +
avoid, prefer, own landing lines steer: the defaults on main now);
**strict** (after, strict); **edit-lock** (after, and the agents' edit hook
set to ``lac.edit.undeclared = lock``: an undeclared file is write-locked
when first changed, kept until the work lands; an edit of a file another
claim holds is refused, the agent does the rest of its task, then waits for
the file (``git lac wait``; a wait runs out after WAIT_TIMEOUT ticks, only
in a cycle of waits, and the file is then changed unlocked) and, told by
the wait that the holder landed it, rebases before changing it: a landed
change in a file it had already changed is a conflict met in that rebase).
**stacking** (edit-lock, and the board's stacking rule: a landing claim's
write locks do not refuse a line built on its tip. Every agent's clone has
the other agents' landing tips (worktrees of one clone share them; across
machines, pushed branches fetched), so claim --next is given every landing
line, takes a task whose declared file only landing claims hold, and starts
it from their lines; an edit refused only by landing claims merges their
tips at once, as the edit hook's advice says (a file this branch changed
already that their lines changed too is a conflict met in that merge), and
is locked beside them. A line built on another lands that one too; the
model still lands the other at its own tick, which can only overcount).
What-ifs, marked *, not built: **edit-fresh*** (edit-lock, and a file
that landed since the branch's base is rebased onto before its first
change); **edit-stack*** (edit-fresh, and an edit of a file held only by
landing claims builds on their lines at once instead of waiting); **avoid-own***
(after, but tasks meeting only one's own landing work are passed over like
others', `rules.steer(avoid_own=True)`); **refuse*** (a landing claim's
locks refuse its own holder's other tasks too, and count as busy for it);
**stack*** (after-free, and an agent starts every task from all its own
landing lines), and **before-stack*** (before, with the same stacking, for
fairness). Printed, medians over the seeds: conflicting merges per 100
landed tasks, throughput, agent-ticks idle, claims that passed over a task,
and the share of conflicts only on files the task did not declare (blind%:
no claim-time rule sees those); the bound the most declared file sets when
a landing lock refuses everyone (Little's law: a lock kept until landing
holds a file for work + wait, not work alone); then after (the defaults)
and stacking (``lac.edit.undeclared = lock``) against before with the
issue's targets (conflicts reduced at least 5x, at no less than 0.9x the
throughput), met or missed, each ratio the median of the seeds'
ratios; what is left of after's conflicts that no claim-time rule could
avoid; and the other arms against their baselines. Nothing here is fitted
to the targets: the durations, the backlog and the fleet are the model's
first cut's, or round numbers.
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
from typing import Any

from git_lacunari.rules import LandingLine, Meeting, steer

BUNDLE = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "requests-main.bundle"
)
UNION = re.compile(r"(^|/)(HISTORY|CHANGELOG|CHANGES|NEWS|AUTHORS)([.-][^/]*)?$", re.IGNORECASE)
TARGET_REDUCTION, TARGET_THROUGHPUT = 5.0, 0.9
HOLD_DONE = (3 + 6) / 2  # mean ticks of work
HOLD_KEPT = HOLD_DONE + (2 + 8) / 2  # and of the wait to land
# How long an agent refused an edit waits (git lac wait --timeout) before it
# changes the file anyway, unlocked: longer than the longest a claim works
# and lands (6 + 8 ticks), so only a wait in a cycle of waits runs out.
WAIT_TIMEOUT = 16


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
    stacked: frozenset[int] = frozenset()  # serials of the landing lines its branch contains
    base: int = -1  # the tick its branch is based on: its claim, or its last rebase
    edited: dict[str, int] = field(default_factory=dict)  # file -> tick it shows on the tip
    edit_locks: set[str] = field(default_factory=set)  # undeclared files the edit hook locked
    paused: int = 0  # ticks it stood still at the end of its work, waiting for a file
    waiting: str = ""  # a file its edit was refused, still held by another claim
    waited: int = 0  # ticks it has stood still
    refused: set[str] = field(default_factory=set)  # files an edit of was refused
    conflicted: bool = False  # a rebase met a landed change in a file it had changed

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
    avoid: str  # off | prefer | strict (lac.next.avoid)
    # What an agent's own landing lines do to its claim --next: steer (the
    # board's rule now: passed over, else started from as the claim names);
    # free (last session's board: nothing); what-ifs refuse and stack.
    own: str = "steer"
    # What the agent's edit hook does with a file the claim did not declare
    # (lac.edit.undeclared): off (allow: nothing); lock (a write lock under
    # the claim, kept until it lands; an edit of a file another claim holds
    # is refused: the agent goes on with the rest, then waits for it and,
    # as git lac wait advises when its holder landed, rebases first).
    # What-ifs, not built: fresh (lock, and a file that landed since the
    # branch's base is rebased onto before it is changed); stack (fresh, and
    # a file held only by landing claims is built on their lines at once).
    edit: str = "off"
    # The board's stacking rule: a landing claim's write locks do
    # not refuse a line built on its tip. claim --next is given every landing
    # line (others' too: their tips fetched) and starts a task meeting only
    # landing lines from them; the edit hook, refused only by landing claims,
    # has the agent merge their tips (git merge, as its advice says) and
    # locks beside them.
    stack: bool = False


ARMS = (
    Arm("before", False, "off"),
    Arm("kept", True, "off"),
    Arm("avoid", False, "prefer"),
    Arm("after-free", True, "prefer", own="free"),
    Arm("after", True, "prefer"),
    Arm("strict", True, "strict"),
    Arm("edit-lock", True, "prefer", edit="lock"),
    Arm("stacking", True, "prefer", edit="lock", stack=True),
    Arm("edit-fresh*", True, "prefer", edit="fresh"),
    Arm("edit-stack*", True, "prefer", edit="stack"),
    Arm("avoid-own*", True, "prefer", own="avoid"),
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
    blind: int = 0  # conflicts only on files the task did not declare
    refused: int = 0  # edits refused (the agent waited)
    timeouts: int = 0  # waits that ran out (the agent edited unlocked)


def tip(task: Task) -> str:
    """The made-up tip a landing task's line is recorded at."""
    return f"{task.serial:040x}"


def landing_line(task: Task, agent: int) -> LandingLine:
    """A landing task's line as steering_facts gives it to ``agent``."""
    holder = None if task.agent == agent else f"agent{task.agent}"
    return LandingLine(task.serial, None, tip(task), tuple(task.files), holder)


class RealBoard:
    """A real board (SQLite, in a temporary directory) the fleet claims on:
    one Board per agent, a task added as it enters the backlog (so its id is
    its serial), claimed with claim_next given what steering_facts would
    give, done --now or landing (a made-up tip; nothing reads it), settled
    when the model lands it."""

    def __init__(self, where: Path, agents: int) -> None:
        from git_lacunari.board import Board
        from git_lacunari.identity import Identity
        from git_lacunari.store import open_store

        self.store = open_store(None, where, create=True)
        self.boards = [
            Board(self.store, Identity(f"agent{n}", "bench", (), "bench")) for n in range(agents)
        ]
        self.landing: dict[int, Any] = {}

    def add(self, task: Task) -> None:
        made = self.boards[0].add_task(f"task {task.serial}", writes=[task.declared])
        assert made.id == task.serial, (made.id, task.serial)

    def claim_next(
        self, agent: int, busy: list[str], own: list[LandingLine], *, strict: bool
    ) -> tuple[int, list[int], bool] | None:
        from git_lacunari.errors import NotFound

        try:
            got = self.boards[agent].claim_next(busy=busy, own=own, strict=strict)
        except NotFound:
            return None
        return got.task.id, [line.task for line in got.start_from], bool(got.passed_over)

    def edit_lock(self, task: Task, path: str, built_on: list[LandingLine]) -> bool:
        """What the edit hook does under lac.edit.undeclared = lock: a write
        lock on the file under the claim, or refused (another claim holds it,
        and the branch is not built on its landing tip)."""
        from git_lacunari.errors import PathLocked
        from git_lacunari.paths import literal

        try:
            self.boards[task.agent].lock([literal(path)], task_id=task.serial, built_on=built_on)
        except PathLocked:
            return False
        return True

    def done(self, task: Task, *, kept: bool) -> None:
        board = self.boards[task.agent]
        if kept:
            self.landing[task.serial] = board.land(task.serial, branch=None, tip=tip(task))
        else:
            board.done(task.serial)

    def landed(self, task: Task) -> None:
        settled = self.boards[task.agent].settle_landed(self.landing.pop(task.serial), "merged")
        assert settled is not None, task.serial

    def close(self) -> None:
        self.store.close()


def simulate(
    sets: list[list[str]],
    arm: Arm,
    *,
    agents: int,
    backlog: int,
    ticks: int,
    seed: int,
    union: bool,
    board: RealBoard | None = None,
) -> Run:
    """One arm on one seed. ``board``: claims, locks, done and landing go
    through a real board (its claim_next, its lock rule); else the model's
    own lock rule and rules.steer directly."""
    tasks = stream(sets, seed)
    ready = [next(tasks) for _ in range(backlog)]
    if board is not None:
        for task in ready:
            board.add(task)
    live: list[Task] = []  # claimed, not landed
    working: set[int] = set()  # agents busy
    # file -> the lines that landed it lately: (tick, serial, what it stacked on)
    landings: dict[str, list[tuple[int, int, frozenset[int]]]] = {}
    run = Run()

    def merges(path: str) -> bool:
        return not (union and UNION.search(path))

    def landed_since(task: Task, path: str) -> bool:
        return any(
            at > task.base and line not in task.stacked and task.serial not in under
            for at, line, under in landings.get(path, ())
        )

    def rebase(task: Task, tick: int) -> None:
        """Onto the destination now: a landed change in a file it has
        already changed is a conflict, met here rather than at landing."""
        if any(merges(f) and landed_since(task, f) for f in task.edited):
            task.conflicted = True
        task.base = tick

    def edit(task: Task, tick: int) -> None:
        """The files whose time has come are changed; with the edit hook
        locking, one another claim holds is refused, and the agent goes on
        with the rest of the task, trying it again each tick (git lac wait
        in the background). Once it gets it, it rebases first."""
        task.waiting = ""
        for f, at in zip(task.files, task.seen_at, strict=True):
            if f in task.edited or tick < task.claimed + task.paused + at:
                continue
            if arm.edit != "off" and f != task.declared:
                holders = [
                    t
                    for t in live
                    if t.agent != task.agent
                    and (arm.kept or t.done < 0)
                    and (t.declared == f or f in t.edit_locks)
                    and t.serial not in task.stacked
                ]
                landing = [t for t in holders if t.done >= 0]
                if (arm.edit == "stack" or arm.stack) and holders == landing and holders:
                    # every holder is landing: build on their lines (git merge
                    # their tips), which lands them too. Their line changed a
                    # file this branch changed already: that merge conflicts.
                    if any(merges(g) and g in task.edited for t in holders for g in t.edited):
                        task.conflicted = True
                    task.stacked = task.stacked | {t.serial for t in holders}
                    for t in holders:
                        task.stacked |= t.stacked
                    holders = []
                held = bool(holders)
                if board is not None and not (held and task.waited < WAIT_TIMEOUT):
                    # the board's grant says what the model's rule said
                    built_on = [
                        landing_line(t, task.agent) for t in live if t.serial in task.stacked
                    ]
                    assert board.edit_lock(task, f, built_on) is not held, (task.serial, f)
                if held and task.waited < WAIT_TIMEOUT:
                    if f not in task.refused:
                        run.refused += 1
                        task.refused.add(f)
                    task.waiting = f
                    continue
                if held:  # the wait ran out: changed without the lock
                    run.timeouts += 1
                else:
                    task.edit_locks.add(f)
                if f in task.refused or (
                    arm.edit in ("fresh", "stack") and merges(f) and landed_since(task, f)
                ):
                    rebase(task, tick)
            task.edited[f] = tick

    for tick in range(ticks):
        for task in list(live):  # work finishes, then lands, in claim order
            if task.done < 0:
                edit(task, tick)
            if task.done < 0 and tick >= task.claimed + task.work + task.paused:
                if task.waiting:  # the rest is done: it waits for the file it was refused
                    task.paused, task.waited = task.paused + 1, task.waited + 1
                    continue
                task.done = tick
                working.discard(task.agent)
                if board is not None:
                    board.done(task, kept=arm.kept)
            if task.done >= 0 and tick >= task.done + task.wait:
                live.remove(task)
                run.landed += 1
                if board is not None and arm.kept:
                    board.landed(task)
                mine = [f for f in task.files if merges(f)]
                met = [f for f in mine if landed_since(task, f)]
                if met or task.conflicted:
                    run.conflicts += 1
                    # only on files the task did not declare: no claim --next sees those
                    run.blind += bool(met) and task.declared not in met
                for f in mine:  # a line lives at most 6 + 8 ticks: older ones never count
                    kept = [x for x in landings.get(f, ()) if x[0] > tick - 16]
                    landings[f] = [*kept, (tick, task.serial, task.stacked)]
        # What the board knows: claims in work, and (locks kept) landing
        # claims; a task done at once (locks freed at done) is off the board.
        holding = [t for t in live if arm.kept or t.done < 0]
        for agent in range(agents):
            if agent in working:
                continue
            # An agent's own claims never refuse it (the board's rule); its
            # landing lines steer it (own="steer", the board's claim --next).
            others = [t for t in holding if t.agent != agent or arm.own == "refuse"]
            # Stacking: every landing line can be built on, so only claims in
            # work lock a file and make it busy (steering_facts, with the
            # other agents' tips fetched).
            blocking = [t for t in others if not (arm.stack and t.done >= 0)]
            locked = {t.declared for t in blocking} | {f for t in blocking for f in t.edit_locks}
            busy = sorted({f for t in blocking for f in t.edited})
            lines = [t for t in holding if (t.agent == agent or arm.stack) and t.done >= 0]
            own = [landing_line(t, agent) for t in lines]
            busy = busy if arm.avoid != "off" else []
            own = own if arm.avoid != "off" and arm.own in ("steer", "avoid") else []
            chosen: tuple[int, list[int], bool] | None
            if board is not None:  # the board's claim --next, its locks
                chosen = board.claim_next(agent, busy, own, strict=arm.avoid == "strict")
            else:  # the model's lock rule, claim --next's order (rules.steer)
                claimable = [t for t in ready if t.declared not in locked]
                passed: list[Meeting] = []
                steering = steer(
                    ((t.serial, [t.declared]) for t in claimable),
                    busy,
                    own,
                    passed,
                    strict=arm.avoid == "strict",
                    avoid_own=arm.own == "avoid",
                )
                got = next(steering, None)
                chosen = (
                    None
                    if got is None
                    # passed over: those met other than the one taken (the claim's passed_over)
                    else (
                        got[0],
                        got[1].mine if got[1] else [],
                        any(m.task != got[0] for m in passed),
                    )
                )
            if chosen is None:
                run.idle += 1
                continue
            serial, start_from, passed_any = chosen
            run.passed_over += passed_any
            pick = next(t for t in ready if t.serial == serial)
            ready.remove(pick)
            ready.append(next(tasks))
            if board is not None:
                board.add(ready[-1])
            pick.claimed, pick.agent, pick.base = tick, agent, tick
            pick.edited[pick.declared] = tick
            if arm.own in ("steer", "avoid"):  # as the claim says (start_from)
                # with what those lines were built on: their tips contain it
                pick.stacked = frozenset(start_from).union(
                    *(t.stacked for t in live if t.serial in start_from)
                )
            elif arm.own == "stack":  # what-if: from every own landing line
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
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--no-union", action="store_true", help="changelogs conflict too")
    parser.add_argument("--bundle", type=Path, default=BUNDLE)
    parser.add_argument(
        "--board",
        action="store_true",
        help="claim, lock, land on a real SQLite board (its claim_next, its grants); arms "
        "it has no switch for (avoid-own*, refuse*, edit-fresh*, edit-stack*) are left out",
    )
    args = parser.parse_args()
    arms = [
        a
        for a in ARMS
        if not args.board or (a.own not in ("avoid", "refuse") and a.edit in ("off", "lock"))
    ]
    sets, commits = co_change(args.bundle)
    union = not args.no_union
    touched = sum(1 for s in sets if any(UNION.search(f) for f in s))
    print(
        f"tasks: {len(sets)} real commits of 1-6 files (of {commits} read; "
        f"{sum(1 for s in sets if len(s) > 1)} change undeclared files; "
        f"{touched} touch a changelog, {'merged by union' if union else 'counted as ordinary'})"
    )
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(
        f"fleet: {args.agents} agents, backlog {args.backlog}, {args.ticks} ticks, "
        f"seeds {seeds.start}-{seeds.stop - 1} (medians), "
        + ("on a real board (SQLite)" if args.board else "the model's lock rule")
    )
    print(
        f"{'arm':<14} {'locks':<7} {'next':<7} {'own':<7} {'conflicts/100':>13} "
        f"{'throughput':>10} {'idle%':>6} {'passed':>7} {'blind%':>7}"
    )
    # per seed: conflicts/100, throughput, conflicts/100 on undeclared files only
    rows: dict[str, list[tuple[float, float, float]]] = {}
    for arm in arms:
        idle, passed, blind, refused, timeouts = [], [], [], [], []
        rows[arm.name] = []
        for seed in seeds:
            with tempfile.TemporaryDirectory() as where:
                board = RealBoard(Path(where), args.agents) if args.board else None
                try:
                    run = simulate(
                        sets,
                        arm,
                        agents=args.agents,
                        backlog=args.backlog,
                        ticks=args.ticks,
                        seed=seed,
                        union=union,
                        board=board,
                    )
                finally:
                    if board is not None:
                        board.close()
            landed = max(run.landed, 1)
            rows[arm.name].append(
                (
                    100 * run.conflicts / landed,
                    100 * run.landed / args.ticks,
                    100 * run.blind / landed,
                )
            )
            idle.append(100 * run.idle / (args.agents * args.ticks))
            passed.append(run.passed_over)
            blind.append(100 * run.blind / max(run.conflicts, 1))
            refused.append(run.refused)
            timeouts.append(run.timeouts)
        med = statistics.median
        print(
            f"{arm.name:<14} {'landed' if arm.kept else 'done':<7} {arm.avoid:<7} "
            f"{arm.own if arm.avoid != 'off' or arm.own == 'stack' else '-':<7} "
            f"{med(r[0] for r in rows[arm.name]):13.2f} {med(r[1] for r in rows[arm.name]):10.2f} "
            f"{med(idle):6.1f} {med(passed):7.0f} {med(blind):7.1f}"
            + (
                f"  (edits refused {med(refused):.0f}, waits run out {med(timeouts):.0f})"
                if arm.edit != "off"
                else ""
            )
        )

    def versus(arm: str, base: str) -> tuple[float, float]:
        """Medians over the seeds of each seed's conflicts reduction and
        throughput ratio (the same tasks and durations in both arms)."""
        pairs = list(zip(rows[base], rows[arm], strict=True))
        return (
            statistics.median(b[0] / w[0] if w[0] else float("inf") for b, w in pairs),
            statistics.median(w[1] / b[1] for b, w in pairs),
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
    for name in ("after", "stacking"):  # the defaults; and lac.edit.undeclared = lock
        reduced, ratio = versus(name, "before")
        met = reduced >= TARGET_REDUCTION and ratio >= TARGET_THROUGHPUT
        print(
            f"{name} vs before: conflicts reduced {reduced:.1f}x "
            f"(target >= {TARGET_REDUCTION:g}x), throughput {ratio:.2f}x "
            f"(target >= {TARGET_THROUGHPUT:g}x): "
            f"{'target met' if met else 'target MISSED'}"
        )
    # Conflicts on files the task never declared are out of any claim-time
    # rule's sight (nobody knows them before the work): were every other
    # conflict of after gone, at the same throughput, this is what remains.
    ceiling = statistics.median(
        b[0] / w[2] if w[2] else float("inf")
        for b, w in zip(rows["before"], rows["after"], strict=True)
    )
    print(
        f"after: {statistics.median(r[2] for r in rows['after']):.2f} conflicts/100 only on files "
        f"the task did not declare; without any other, conflicts reduced at most {ceiling:.1f}x"
    )
    for name, base in (
        ("after-free", "before"),
        ("after", "before-stack*"),
        ("strict", "before"),
        ("edit-lock", "before"),
        ("edit-fresh*", "before"),
        ("edit-stack*", "before"),
        ("avoid-own*", "before"),
        ("refuse*", "before"),
        ("stack*", "before"),
    ):
        if name not in rows:
            continue
        cr, tr = versus(name, base)
        print(f"{name} vs {base}: conflicts reduced {cr:.1f}x, throughput {tr:.2f}x")


if __name__ == "__main__":
    main()
