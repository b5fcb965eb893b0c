"""`git lac task add | after | edit | cancel | reopen`."""

from __future__ import annotations

import click

from ..commands import task as verbs
from ..edge import Result
from ..session import Session
from .options import CONTEXT, INT, common, read_body


@click.group("task", context_settings=CONTEXT)
def task() -> None:
    """Add tasks to the board and wire their dependencies."""


@task.command("add", context_settings=CONTEXT)
@click.argument("title")
@click.option("--body", default="", help="Longer description.")
@click.option("--body-file", metavar="FILE", help="Read the body from FILE (- for stdin).")
@click.option("--lane", default="default", show_default=True, help="Lane (queue) of the task.")
@click.option("--priority", type=INT, default=0, show_default=True, help="Higher is claimed first.")
@click.option(
    "--after", "after", multiple=True, metavar="ID", help="Claimable only once task ID is done."
)
@click.option("--needs", multiple=True, metavar="CAP", help="Capability a claimer must have.")
@click.option(
    "--write",
    "writes",
    multiple=True,
    metavar="PATTERN",
    help="Path it will write (locked at claim).",
)
@click.option(
    "--read", "reads", multiple=True, metavar="PATTERN", help="Path it will read (shared lock)."
)
@click.option(
    "--needs-resource",
    "resources",
    multiple=True,
    metavar="NAME[:N]",
    help="Its claim is granted N (default 1) values of resource pool NAME.",
)
@common
def task_add(
    session: Session,
    as_json: bool,
    title: str,
    body: str,
    body_file: str | None,
    lane: str,
    priority: int,
    after: tuple[str, ...],
    needs: tuple[str, ...],
    writes: tuple[str, ...],
    reads: tuple[str, ...],
    resources: tuple[str, ...],
) -> Result:
    """Add a task; prints the new id.

    --needs-resource NAME[:N] (repeatable): a claim of it is granted N
    distinct free values of pool NAME (`git lac resource add`), or refused
    whole, and holds them until it ends.
    """
    return verbs.add(
        session,
        title,
        body=lambda: read_body(body or None, body_file),
        lane=lane,
        priority=priority,
        after=after,
        needs=needs,
        writes=writes,
        reads=reads,
        resources=resources,
    )


@task.command("after", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@click.argument("deps", nargs=-1, required=True, metavar="DEP...")
@common
def task_after(session: Session, as_json: bool, task_id: str, deps: tuple[str, ...]) -> Result:
    """Make task ID wait until every DEP is done (cycles are refused)."""
    return verbs.after(session, task_id, deps)


@task.command("edit", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@click.option("--title", help="New title.")
@click.option("--body", help="New body.")
@click.option("--body-file", metavar="FILE", help="Read the new body from FILE (- for stdin).")
@click.option("--lane", help="Move it to this lane.")
@click.option("--priority", type=INT, help="New priority (higher is claimed first).")
@click.option("--needs", multiple=True, metavar="CAP", help="Replace the capabilities it needs.")
@click.option("--no-needs", is_flag=True, help="It needs no capability any more.")
@click.option("--write", "writes", multiple=True, metavar="PATTERN", help="Declare a write path.")
@click.option("--read", "reads", multiple=True, metavar="PATTERN", help="Declare a read path.")
@click.option("--drop-path", multiple=True, metavar="PATTERN", help="Drop a declared path.")
@click.option("--after", multiple=True, metavar="DEP", help="Also wait on task DEP.")
@click.option("--not-after", multiple=True, metavar="DEP", help="Stop waiting on task DEP.")
@click.option("--reason", metavar="TEXT", help="Why, for the history.")
@common
def task_edit(
    session: Session,
    as_json: bool,
    task_id: str,
    title: str | None,
    body: str | None,
    body_file: str | None,
    lane: str | None,
    priority: int | None,
    needs: tuple[str, ...],
    no_needs: bool,
    writes: tuple[str, ...],
    reads: tuple[str, ...],
    drop_path: tuple[str, ...],
    after: tuple[str, ...],
    not_after: tuple[str, ...],
    reason: str | None,
) -> Result:
    """Change an open task, or your own claim: one `edited` event.

    A path declared on a claim is locked at once (or the edit is refused
    whole); a dropped one is unlocked. Another agent's claim is not yours to
    edit; a done, cancelled or parked task is reopened first.
    """
    if needs and no_needs:
        raise click.UsageError("give --needs or --no-needs, not both")
    return verbs.edit(
        session,
        task_id,
        title=title,
        body=lambda: read_body(body, body_file),
        lane=lane,
        priority=priority,
        needs=() if no_needs else (needs or None),
        writes=writes,
        reads=reads,
        drop_paths=drop_path,
        add_after=after,
        drop_after=not_after,
        reason=reason,
    )


@task.command("cancel", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@click.option("--reason", metavar="TEXT", help="Why, for the history.")
@common
def task_cancel(session: Session, as_json: bool, task_id: str, reason: str | None) -> Result:
    """Cancel an open or parked task, or your own claim (its locks are freed).

    Tasks that wait on a cancelled task stay blocked (cancelled is not done):
    `task edit ID --not-after DEP` frees them, `task reopen DEP` revives it.
    """
    return verbs.cancel(session, task_id, reason)


@task.command("reopen", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@click.option("--reason", metavar="TEXT", help="Why, for the history.")
@common
def task_reopen(session: Session, as_json: bool, task_id: str, reason: str | None) -> Result:
    """Put a done, cancelled or parked task back on the board, attempts reset to 0."""
    return verbs.reopen(session, task_id, reason)
