"""`git lac claim`, `release`, `done`, `heartbeat`."""

from __future__ import annotations

import click

from ..commands import claims, parse_max_age, parse_stale
from ..durations import parse_duration
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


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
) -> Result:
    """Claim task ID (or --next in a lane) with its path locks, atomically.

    Of two workers racing for one task exactly one wins; the loser is told why
    (already claimed by whom, unmet dependency, missing capability, path held)
    and nothing is written for it. Claiming your own claim again succeeds.

    --next prefers tasks whose paths meet nothing other agents' live claims
    change, and says what it passed over (lac.next.avoid: prefer, strict,
    off). A task on what your own landing work changed is taken as a free
    one, and the claim names that landing line to start the work from.

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
    wait_s = parse_duration(wait) if wait is not None else None
    return claims.claim(
        session,
        task_id,
        next_=next_,
        lane=lane,
        writes=writes,
        reads=reads,
        stale=stale,
        wait=wait_s,
        take_over=take_over,
        max_age=cap,
    )


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
