"""`git lac lock`, `unlock`, `locks`, `check`."""

from __future__ import annotations

import click

from ..commands import locks as verbs
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.command("lock", context_settings=CONTEXT)
@click.argument("patterns", nargs=-1, required=True, metavar="PATTERN...")
@click.option(
    "--read", "read_mode", is_flag=True, help="Shared read lock (default: exclusive write)."
)
@click.option("--task", "task_id", metavar="ID", help="Attach the locks to your claimed task ID.")
@common
def lock(
    session: Session, as_json: bool, patterns: tuple[str, ...], read_mode: bool, task_id: str | None
) -> Result:
    """Lock paths: files, dir/ subtrees or globs. All or nothing.

    A landing claim's locks (done, not in the destination yet) do not refuse
    a branch built on its tip: with --task, when HEAD contains it, the lock
    is taken beside theirs.
    """
    return verbs.lock(session, patterns, read_mode, task_id)


@click.command("unlock", context_settings=CONTEXT)
@click.argument("patterns", nargs=-1, metavar="PATTERN...")
@click.option("--task", "task_id", metavar="ID", help="Release every lock of your task ID.")
@click.option("--force", is_flag=True, help="Remove anyone's locks on exactly PATTERN...")
@click.option("--reason", metavar="TEXT", help="Why (required with --force).")
@common
def unlock(
    session: Session,
    as_json: bool,
    patterns: tuple[str, ...],
    task_id: str | None,
    force: bool,
    reason: str | None,
) -> Result:
    """Release your locks on PATTERN..., or every lock of --task ID.

    With --force --reason TEXT, remove every agent's lock on exactly
    PATTERN..., recorded as `force_unlocked` with each previous holder.
    """
    if bool(patterns) == (task_id is not None):
        raise click.UsageError("give PATTERN... or --task ID")
    if force and task_id is not None:
        raise click.UsageError("--force takes PATTERN...; release --force frees a task's locks")
    if reason is not None and not force:
        raise click.UsageError("--reason goes with --force")
    return verbs.unlock(session, patterns, task_id, force, reason)


@click.command("locks", context_settings=CONTEXT)
@click.option("--mine", is_flag=True, help="Only my locks.")
@click.option("--path", metavar="P", help="Only locks overlapping P.")
@common
def locks(session: Session, as_json: bool, mine: bool, path: str | None) -> Result:
    """List active path locks."""
    return verbs.locks(session, mine, path)


@click.command("check", context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@common
def check(session: Session, as_json: bool, paths: tuple[str, ...]) -> Result:
    """May I write these paths? Exit 1 naming each holder if not.

    A landing claim whose tip HEAD contains is no holder: the guards let a
    change built on it through.
    """
    return verbs.check(session, paths)
