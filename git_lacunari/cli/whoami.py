"""`git lac whoami`."""

from __future__ import annotations

import click

from ..commands import whoami as verb
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.command("whoami", context_settings=CONTEXT)
@common
def whoami(session: Session, as_json: bool) -> Result:
    """Print the agent name this worktree acts as, where it came from, and
    this working tree's instance (claims are held by an agent at an instance).
    On a team board: the database role (and the board's record of its
    capabilities)."""
    return verb.run(session)
