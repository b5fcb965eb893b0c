"""`git lac keeper`, `git lac drain`."""

from __future__ import annotations

import click

from ..commands import liveness
from ..edge import Result
from ..session import Session
from .options import CONTEXT, AsciiIntRange, common, echo_to


@click.command("keeper", context_settings=CONTEXT)
@click.option("--once", is_flag=True, help="Sweep once and exit (exit 1 if another keeper runs).")
@click.option(
    "--interval", default="30s", show_default=True, metavar="D", help="Time between sweeps."
)
@click.option(
    "--stale-after", metavar="D", help="Override the board's stale-after for this keeper."
)
@common
def keeper(
    session: Session, as_json: bool, once: bool, interval: str, stale_after: str | None
) -> Result:
    """Give stale claims and their path locks back to the board.

    A claim is stale when its heartbeat is older than its stale-after (set per
    claim, else per board: `git lac init --stale-after D`); a claim made with
    `claim --max-age D` goes too once D has passed since it was made, however
    often it heartbeats. Its task goes back to open with its attempt count, and
    `expired` is recorded with the previous holder, where it was held, how long
    it had been silent and why (stale, or max_age); its holder is told by its
    next command there. A lock taken without a task goes
    back (`locks_expired`) once its agent has run no command for the stale
    period. One keeper works a board at a time:
    a second one waits (or, with --once, says who holds it and exits 1).
    """
    return liveness.keeper(
        session, once=once, interval=interval, stale_after=stale_after, echo=echo_to(err=as_json)
    )


@click.command("drain", context_settings={**CONTEXT, "ignore_unknown_options": False})
@click.option("--lane", required=True, help="The lane to work.")
@click.option("--once", is_flag=True, help="Work one task, then exit (exit 1 if the lane is busy).")
@click.option("--max", "max_tasks", type=AsciiIntRange(min=1), help="Work at most N tasks.")
@click.option("--worktree", is_flag=True, help="Run each task in a fresh worktree on lac/task-ID.")
@click.argument("command", nargs=-1, required=True, metavar="-- COMMAND...")
@common
def drain(
    session: Session,
    as_json: bool,
    lane: str,
    once: bool,
    max_tasks: int | None,
    worktree: bool,
    command: tuple[str, ...],
) -> Result:
    """Work a lane unattended: claim the next task, run COMMAND, repeat.

    COMMAND gets LAC_TASK_ID, LAC_TASK_TITLE, LAC_LANE, LAC_AGENT and
    LAC_TASK_PATHS (JSON [[pattern, mode], ...]) in its environment. Exit 0
    marks the task done as `git lac done` does (landing, its write locks kept,
    while commits it left are not in the destination); anything else releases it
    with a `failed` event, and a task that failed lac.maxAttempts times (3) is
    parked. The claim heartbeats while COMMAND runs; SIGINT/SIGTERM release it
    at once. One drainer works a lane at a time, across machines; a second waits
    (--once: exits 1). It stops when the lane has no claimable task left. With
    --once it exits with the task's outcome (1 when it failed); with --json
    COMMAND's output goes to stderr. COMMAND runs in its own process group and,
    on Linux, is killed if the drainer dies. --worktree continues lac/task-ID on
    a retry (never reset: every attempt's commits stay on it).
    """
    return liveness.drain(
        session,
        lane=lane,
        once=once,
        max_tasks=max_tasks,
        worktree=worktree,
        command=command,
        echo=echo_to(err=True),
        as_json=as_json,
    )
