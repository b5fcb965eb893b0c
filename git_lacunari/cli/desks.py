"""`git lac desks`, `git lac env`."""

from __future__ import annotations

import click

from ..commands import desks as verb
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.command("desks", context_settings=CONTEXT)
@click.option(
    "--prune",
    is_flag=True,
    help="Remove each desk whose claim is over and which holds no uncommitted work.",
)
@common
def desks(session: Session, as_json: bool, prune: bool) -> Result:
    """List this clone's desks (`claim --worktree`): path, task, branch, the
    claim's state and holder, and `clean` or what is uncommitted.

    --prune removes a desk only when its claim is over (done, released,
    expired, cancelled; not claimed or landing) and it holds no uncommitted
    work (no modified tracked file, no staged change, no untracked file git
    does not ignore), with `git worktree remove` (never --force). Its branch
    is deleted only when the destination contains its tip. Each desk is said
    removed or kept, and why.
    """
    return verb.desks(session, prune=prune)


@click.command("env", context_settings=CONTEXT)
@click.argument("task_id", metavar="[ID]", required=False)
@common
def env(session: Session, as_json: bool, task_id: str | None) -> Result:
    """Print a claim's variables as sh-quoted NAME=VALUE lines: LAC_TASK_ID,
    LAC_AGENT.

    Without ID: the claim of the desk this runs in, else the one claim held
    here (none or several: exit 2, name one). `set -a; . .lac/env` loads a
    desk's own copy.
    """
    return verb.env(session, task_id)
