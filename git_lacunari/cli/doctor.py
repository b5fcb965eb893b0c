"""`git lac doctor`."""

from __future__ import annotations

import click

from ..commands import doctor as verb
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.command("doctor", context_settings=CONTEXT)
@common
def doctor(session: Session, as_json: bool) -> Result:
    """Say which board each door of this repository uses, and whether it can
    guard it: hooks installed, the board (and where that choice came from),
    whether clones find the same one, its schema, the database's default
    isolation, the case rule, who this worktree claims as. In a bare
    repository: the server's guard.

    Read-only. One verdict per line (ok, warn, FAIL); exit 0 when nothing
    fails, 1 when something does (3 when it cannot look at all).
    """
    return verb.run(session)
