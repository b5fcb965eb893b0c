"""`git lac init`, `git lac boards`."""

from __future__ import annotations

import click

from ..commands import setup
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.command("init", context_settings=CONTEXT)
@click.option(
    "--url", metavar="URL", help="postgresql://host/db for a team board (else the embedded SQLite)."
)
@click.option(
    "--stale-after", metavar="D", help="Claims are stale after D without heartbeat (30m)."
)
@click.option(
    "--landing-period",
    metavar="D",
    help="A landing claim (done, not yet in lac.target) expires after D of silence (24h).",
)
@click.option(
    "--fleet",
    is_flag=True,
    help="Presets for an unattended fleet: claims stale after 10m, landing claims "
    "expire after 2h, lac.edit.undeclared lock (run a keeper beside it).",
)
@click.option(
    "--board",
    "board_name",
    metavar="NAME",
    help="With --url: this project's board in the database (default: from the root commit).",
)
@click.option(
    "--share",
    is_flag=True,
    help="Write the board's name to .lacconfig and stage it, for clones and the server.",
)
@click.option(
    "--case",
    type=click.Choice(["fold", "exact"]),
    help="The board's case rule: fold (README and readme are one path; "
    "a new PostgreSQL board's default) or exact.",
)
@common
def init(
    session: Session,
    as_json: bool,
    url: str | None,
    stale_after: str | None,
    landing_period: str | None,
    board_name: str | None,
    share: bool,
    case: str | None,
    fleet: bool,
) -> Result:
    """Create or migrate the board; with --url, record it as lac.url (and the
    board as lac.board).

    A PostgreSQL database holds one board per project: clones that name the
    same board share it; unrelated repositories never do. Without --board the
    name comes from the repository's root commit, which every clone shares.
    A URL carrying a password is refused: use PGPASSWORD, ~/.pgpass or a
    service file. Idempotent: running it again on a current board changes nothing.
    With --share the board's name (never the URL) goes into a committed
    .lacconfig, where shallow clones and the server's guard find it.
    """
    return setup.init(session, url, stale_after, board_name, share, case, landing_period, fleet)


@click.command("boards", context_settings=CONTEXT)
@common
def boards(session: Session, as_json: bool) -> Result:
    """List the boards of this repository's database (one per project).

    The current one (lac.board) is marked with *.
    """
    return setup.boards(session)
