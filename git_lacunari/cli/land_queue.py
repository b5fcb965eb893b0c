"""`git lac land`, `git lac lander`."""

from __future__ import annotations

import click

from ..commands import land_queue
from ..durations import parse_duration
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.command("land", context_settings=CONTEXT)
@click.argument("task_id", metavar="[ID]", required=False)
@click.option("--wait", is_flag=True, help="Wait for the outcome: exit 0 landed, 1 returned.")
@click.option(
    "--timeout",
    metavar="D",
    default="10m",
    show_default=True,
    help="With --wait: give up waiting after D (exit 1, still queued).",
)
@common
def land(session: Session, as_json: bool, task_id: str | None, wait: bool, timeout: str) -> Result:
    """Hand your finished line to the lander: done, and landed for you.

    `land` is `done` and the hand-over in one: the claim is landing (its
    write locks kept), and its branch tip goes to the landing queue, which
    merges it onto the destination without a work tree (git merge-tree),
    batching lines of disjoint paths into one ref update, keeping whatever
    others pushed meanwhile. Nobody rebases by hand. With a remote
    destination (origin/main) the line is pushed to the server's
    refs/lac/land/ID and the server's post-receive runs the lander; with a
    local one (worktrees of one clone) the lander runs here, now.

    A line that conflicts with the destination, or fails lac.land.check on
    the merged tree, is *returned*: still yours, in work, with its locks,
    and status, heartbeat and show say why. Fix it and `land` again.
    ID defaults to your one claim here.
    """
    return land_queue.land(session, task_id, wait=wait, timeout=parse_duration(timeout))


@click.command("lander", context_settings=CONTEXT)
@click.option("--once", is_flag=True, help="One pass over the queue, then exit.")
@click.option("--interval", metavar="D", default="2s", show_default=True, help="Between passes.")
@common
def lander(session: Session, as_json: bool, once: bool, interval: str) -> Result:
    """Land the queued lines of this repository (refs/lac/land/*).

    The server's post-receive starts one by itself (`git lac hooks install
    --server`), and `land` runs one in a clone whose destination is a local
    branch: this command is for resuming a queue by hand (--once) or for a
    server without the hooks. One lander works a repository at a time.
    """
    return land_queue.lander(session, once=once, interval=parse_duration(interval))
