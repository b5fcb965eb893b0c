"""`git lac instance list | adopt ID`."""

from __future__ import annotations

import click

from ..commands import instance as verbs
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.group("instance", context_settings=CONTEXT)
def instance() -> None:
    """The working trees (instances) this agent acts from.

    A claim is held by an agent at an instance: one working tree of one
    clone. `git worktree move` and `git worktree repair` keep a tree's
    instance; a copied or new clone, or another machine, is a new one. What
    an old instance still holds is listed here and can be adopted.
    """


@instance.command("list", context_settings=CONTEXT)
@common
def instance_list(session: Session, as_json: bool) -> Result:
    """List this agent's instances on the board, the most recent first: id,
    host:path, when last seen, and the claims and locks each holds now
    (`*`: this working tree)."""
    return verbs.list_instances(session)


@instance.command("adopt", context_settings=CONTEXT)
@click.argument("instance_id", metavar="ID")
@common
def instance_adopt(session: Session, as_json: bool, instance_id: str) -> Result:
    """Move every claim this agent holds at instance ID here, with its locks,
    each recorded as `taken_over` (`claim --take-over`, for all of them).
    Locks taken with `git lac lock` belong to no claim and stay there."""
    return verbs.adopt(session, instance_id)
