"""`git lac sweep`, `git lac forecast`."""

from __future__ import annotations

import click

from ..commands import landing
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.command("sweep", context_settings=CONTEXT)
@click.option("--fetch", is_flag=True, help="Fetch the destination's remote first.")
@common
def sweep(session: Session, as_json: bool, fetch: bool) -> Result:
    """Settle landing claims whose work has reached the destination.

    A claim marked done before its branch reached the destination (lac.target,
    else origin/HEAD, origin/main, origin/master, main, master) keeps its write
    locks as *landing*. This checks each landing claim against the destination
    as this repository sees it: every commit of its line must be in it, by
    ancestry (merged), by patch id (rebased, or cherry-picked out of order),
    or inside a squash that covers the line's diff and names the task
    (`Lac-Task: ID`); one commit of a line picked alone lands nothing.
    Those are done and their locks released, with a `landed` event. The
    server's post-receive hook (`git lac hooks install --server`) and the
    keeper do the same.
    """
    return landing.sweep(session, fetch=fetch)


@click.command("forecast", context_settings=CONTEXT)
@common
def forecast(session: Session, as_json: bool) -> Result:
    """Show the collisions coming between live claims, declared or not.

    Each claim with a known tip (recorded by claim, heartbeat and the hooks)
    is a line of work. Every pair of lines, and each line against what the
    destination did since it forked, that change a common file is listed:
    the files both change, those a claim did not declare, and the files
    `git merge-tree --write-tree` says would conflict (no working tree, index
    or ref is touched). A tip this clone lacks is named, not guessed at
    (`git fetch`). "first"/"second" in --json are task ids, null for the
    destination.
    """
    return landing.forecast(session)
