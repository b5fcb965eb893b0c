"""`git lac claim`, `release`, `done`, `heartbeat`."""

from __future__ import annotations

import click

from ..commands import claims, parse_max_age, parse_stale
from ..durations import parse_duration
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common, echo_to

# `--worktree` with no PATH: the default place ("" stays a PATH, refused as one)
DEFAULT_DESK = "\0default"


@click.command("claim", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID", required=False)
@click.option("--next", "next_", is_flag=True, help="Claim the best claimable task of the lane.")
@click.option("--lane", default="default", show_default=True, help="Lane for --next.")
@click.option("--write", "writes", multiple=True, metavar="P", help="Also lock P for writing.")
@click.option("--read", "reads", multiple=True, metavar="P", help="Also lock P for reading.")
@click.option("--wait", metavar="SECONDS", help="With --next: block up to SECONDS for a task.")
@click.option(
    "--stale-after", metavar="D", help="This claim is stale after D without heartbeat (e.g. 2h)."
)
@click.option(
    "--max-age",
    metavar="D",
    help="The keeper expires this claim D after it was made, heartbeats or not (e.g. 2h).",
)
@click.option(
    "--take-over",
    is_flag=True,
    help="My agent name holds it from another working tree: move it here (recorded).",
)
@click.option(
    "--worktree",
    "worktree",
    is_flag=False,
    flag_value=DEFAULT_DESK,
    default=None,
    metavar="[PATH]",
    help="Make the claim a desk: its own worktree at PATH (an empty or new directory; "
    "default beside drain's), on lac/task-ID, set up from .lacconfig.",
)
@click.option(
    "--branch", metavar="B", help="With --worktree: the desk's branch (default lac/task-ID)."
)
@click.option(
    "--resource",
    "resources",
    multiple=True,
    metavar="NAME[:N]",
    help="Also needs N (default 1) values of resource pool NAME, granted with the claim.",
)
@common
def claim(
    session: Session,
    as_json: bool,
    task_id: str | None,
    next_: bool,
    lane: str,
    writes: tuple[str, ...],
    reads: tuple[str, ...],
    wait: str | None,
    stale_after: str | None,
    max_age: str | None,
    take_over: bool,
    worktree: str | None,
    branch: str | None,
    resources: tuple[str, ...],
) -> Result:
    """Claim task ID (or --next in a lane) with its path locks, atomically.

    Of two workers racing for one task exactly one wins; the loser is told why
    (already claimed by whom, unmet dependency, missing capability, path held)
    and nothing is written for it. Claiming your own claim again succeeds.

    --next prefers tasks whose paths meet nothing other agents' live claims
    change, and says what it passed over (lac.next.avoid: prefer, strict,
    off). A task on what your own landing work changed is taken as a free
    one, and the claim names that landing line to start the work from.

    --worktree [PATH] makes the claim a desk: a linked worktree of its own
    (PATH: an empty or new directory outside the work tree; default
    .git/lacunari/worktrees/task-ID), on branch lac/task-ID or --branch B. A
    new branch starts at the destination's tip as last fetched (lac.target,
    else origin/HEAD, origin/main...), never at HEAD; an existing one is
    continued. The claim is held at the desk's instance, and the desk acts as
    the claimer (worktree config lac.agent). A refused claim makes no desk; a
    desk git cannot make leaves no claim (exit 3). Then, from the .lacconfig
    the desk checks out: lac.desk.copy and lac.desk.link (repeatable; paths or
    globs of the main work tree, copied or symlinked), and lac.desk.setup (a
    shell command run in the desk with LAC_TASK_ID and LAC_AGENT; its output on
    stderr and in .lac/setup.log). A setup that fails keeps the claim and the
    desk (exit 1, unfinished "desk_setup"). `.lac/env` holds `git lac env`'s
    lines. Put ID before --worktree: `claim 7 --worktree`.
    A task that needs resource values (task add --needs-resource, or
    --resource here) is granted that many distinct free values of each
    pool in the claim's transaction, or refused whole (resource_unavailable);
    --next passes such a task over. They are freed when the claim ends:
    release, done (landing too), task cancel, expiry.
    --max-age caps the claim's life from when it was made: past it the keeper
    expires it (an `expired` event with its max_age), however often it
    heartbeats; before it, a claim that heartbeats is never taken. Its holder
    is told by the next git lac command run in its working tree, and by the
    next edit hook call (README, "Honest leases").
    """
    if next_ == (task_id is not None):
        raise click.UsageError("give a task ID or --next, not both")
    stale = parse_stale(stale_after)
    cap = parse_max_age(max_age)
    if wait is not None and not next_:
        raise click.UsageError("--wait goes with --next")
    if take_over and next_:
        raise click.UsageError("--take-over goes with a task ID")
    if branch is not None and worktree is None:
        raise click.UsageError("--branch goes with --worktree")
    if take_over and worktree is not None:
        raise click.UsageError(
            "--take-over moves a claim to this working tree; --worktree makes a desk of its own"
        )
    if resources and next_:
        raise click.UsageError(
            "--resource goes with a task ID; a task's own needs (task add --needs-resource) "
            "go with --next"
        )
    wait_s = parse_duration(wait) if wait is not None else None
    if worktree is not None:
        from ..commands import desks

        return desks.claim_desk(
            session,
            task_id,
            next_=next_,
            lane=lane,
            writes=writes,
            reads=reads,
            stale=stale,
            wait=wait_s,
            path=None if worktree == DEFAULT_DESK else worktree,
            branch=branch,
            resources=resources,
            max_age=cap,
            echo=echo_to(err=True),
        )
    got = claims.claim(
        session,
        task_id,
        next_=next_,
        lane=lane,
        writes=writes,
        reads=reads,
        stale=stale,
        wait=wait_s,
        take_over=take_over,
        resources=resources,
        max_age=cap,
    )
    return claims.claimed(session, got)


@click.command("release", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@click.option("--force", is_flag=True, help="Release another agent's claim.")
@click.option("--reason", metavar="TEXT", help="Why (required with --force).")
@common
def release(
    session: Session, as_json: bool, task_id: str, force: bool, reason: str | None
) -> Result:
    """Give a claim back to the board, with its path locks.

    A landing claim another live claim is built on (stacked on its line) is
    refused without --force: released, the stacked line would land its
    commits while the task stood open to be done again.
    """
    return claims.release(session, task_id, force, reason)


@click.command("done", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@click.option(
    "--now",
    is_flag=True,
    help="Done at once, locks released, whether or not the work has landed.",
)
@common
def done(session: Session, as_json: bool, task_id: str, now: bool) -> Result:
    """Mark your claimed task done; its locks go when its work has landed.

    When the claim's branch tip is already in the destination (lac.target,
    else origin/HEAD, origin/main, origin/master, main, master) the task is
    done and its locks are released. Otherwise the claim is *landing*: its
    write locks stay, refusing others, until the work reaches the destination
    (every commit of the line: merged, rebased, cherry-picked or squashed), which the
    server's post-receive hook, `git lac sweep` and the keeper check.
    `git lac release ID` gives a landing claim up (the task is open again).
    """
    return claims.done(session, task_id, now)


@click.command("heartbeat", context_settings=CONTEXT)
@click.argument("task_ids", nargs=-1, metavar="[ID...]")
@common
def heartbeat(session: Session, as_json: bool, task_ids: tuple[str, ...]) -> Result:
    """Refresh the heartbeat of your claims (all of them, or ID...).

    If a claim or lock of yours was taken by force (release --force, unlock
    --force) since you last looked, it says by whom, when and why, once, and
    exits 1; status and done tell it too. A claim released by force is
    refused by `heartbeat ID` and `done ID` every time, naming who did it.
    """
    return claims.heartbeat(session, task_ids)
