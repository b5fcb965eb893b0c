"""`git lac tasks`, `show`, `log`."""

from __future__ import annotations

import click

from ..commands import listing
from ..edge import Result
from ..model import STATES
from ..session import Session
from .options import CONTEXT, DEFAULT_LIMIT, INT, LIMIT_HELP, common


@click.command("tasks", context_settings=CONTEXT)
@click.option(
    "--state",
    "states",
    multiple=True,
    metavar="S",
    help=f"Only tasks in state S ({', '.join(STATES)}); repeat or comma-separate for several.",
)
@click.option("--all", "every", is_flag=True, help="Also done and cancelled tasks.")
@click.option("--lane", help="Only tasks of this lane.")
@click.option("--mine", is_flag=True, help="Only tasks I have claimed.")
@click.option("--limit", type=INT, default=DEFAULT_LIMIT, metavar="N", help=LIMIT_HELP)
@common
def tasks(
    session: Session,
    as_json: bool,
    states: tuple[str, ...],
    every: bool,
    lane: str | None,
    mine: bool,
    limit: int,
) -> Result:
    """List tasks in id order, with owner and heartbeat age of each claim.

    Done and cancelled tasks are hidden unless --all or --state asks for them.
    At most --limit tasks are shown; a last line (on stderr) says how many
    more there are. With --json, "more" counts them (up to 10,000:
    "more_exact" is false beyond) and --limit 0 prints every task.
    """
    return listing.tasks(
        session, states=states, every=every, lane=lane, mine=mine, limit=limit, as_json=as_json
    )


@click.command("show", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@common
def show(session: Session, as_json: bool, task_id: str) -> Result:
    """Show one task: state, owner, dependencies, declared paths, locks."""
    return listing.show(session, task_id)


@click.command("log", context_settings=CONTEXT)
@click.argument("task_id", metavar="[ID]", required=False)
@click.option("--limit", type=INT, default=DEFAULT_LIMIT, metavar="N", help=LIMIT_HELP)
@common
def log(session: Session, as_json: bool, task_id: str | None, limit: int) -> Result:
    """Print the event history, of one task or of the whole board.

    The newest --limit events, oldest first; a last line (on stderr) says how
    many earlier ones there are. --limit 0 prints the whole history.
    """
    return listing.log(session, task_id, limit, as_json=as_json)
