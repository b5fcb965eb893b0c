"""`git lac ready`, `git lac status`."""

from __future__ import annotations

import click

from ..commands import status as verbs
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.command("ready", context_settings=CONTEXT)
@click.option("--lane", default="default", show_default=True, help="The lane to look at.")
@common
def ready(session: Session, as_json: bool, lane: str) -> Result:
    """The tasks you could claim now, in the order `claim --next` takes them;
    for every other open task of the lane, why not."""
    return verbs.ready(session, lane)


@click.command("status", context_settings=CONTEXT)
@common
def status(session: Session, as_json: bool) -> Result:
    """What you hold: claims with heartbeat age and time until stale, your
    locks, whether this clone's guard hooks are installed, and the board."""
    return verbs.status(session)
