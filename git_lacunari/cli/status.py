"""`git lac ready`, `git lac status`."""

from __future__ import annotations

import click

from ..commands import status as verbs
from ..edge import Result
from ..session import Session
from .options import CONTEXT, DEFAULT_LIMIT, LIMIT_HELP, common


@click.command("ready", context_settings=CONTEXT)
@click.option("--lane", default="default", show_default=True, help="The lane to look at.")
@click.option("--limit", type=int, default=DEFAULT_LIMIT, metavar="N", help=LIMIT_HELP)
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Every open task of the lane, each row written as it is read "
    "(--json: one JSON object a line).",
)
@common
def ready(session: Session, as_json: bool, lane: str, limit: int, every: bool) -> Result:
    """The tasks you could claim now, in the order `claim --next` takes them;
    for every other open task of the lane, why not.

    The first --limit open tasks are judged (ready ones listed first); a last
    line (on stderr) says how many more open tasks there are. With --json each
    task carries its paths, locks and depends_on, and "more" counts the rest
    (up to 10,000 beyond the page: "more_exact" is false beyond). --all reads
    the whole lane 500 tasks at a time and writes each row as it comes, in
    claim order (ready and blocked mixed), without collecting them.
    """
    return verbs.ready(session, lane, limit=limit, every=every, as_json=as_json)


@click.command("status", context_settings=CONTEXT)
@common
def status(session: Session, as_json: bool) -> Result:
    """What you hold: claims with heartbeat age and time until stale, your
    locks, whether this clone's guard hooks are installed, and the board."""
    return verbs.status(session)
