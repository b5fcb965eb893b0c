"""`git lac reconcile` (its plain forms take entry.py's fast path, to the same verb)."""

from __future__ import annotations

import click

from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.command("reconcile", context_settings=CONTEXT)
@click.argument("ref", metavar="REF", required=False)
@click.option("--base", "base_rev", metavar="REV", help="Merge every file from this base commit.")
@click.option("--dry-run", is_flag=True, help="Print what would happen per file; write nothing.")
@click.option("--abort", is_flag=True, help="Undo a reconcile with conflicts, exactly.")
@click.option(
    "--continue", "continue_", is_flag=True, help="Commit a resolved reconcile and record it."
)
@click.option(
    "--allow-markers",
    is_flag=True,
    help="With --continue: commit even though a path it left conflicted still holds "
    "conflict markers (also LAC_ALLOW_MARKERS=1).",
)
@common
def reconcile(
    session: Session,
    as_json: bool,
    ref: str | None,
    base_rev: str | None,
    dry_run: bool,
    abort: bool,
    continue_: bool,
    allow_markers: bool,
) -> Result:
    """Merge REF (an offline branch, a peer's fetched branch) into this worktree.

    The merge is git's own (`git merge-tree`: renames, modes, several merge
    bases), on the base each side started from: --base, else the blob
    recorded when a path was locked, else the merge base, else (unrelated
    histories) the newest version of each file both histories contain.
    The result is left as `git merge --no-commit` leaves it: staged, with
    MERGE_HEAD, so `git commit` records a merge. Conflicts are a real merge
    state (unmerged index entries and markers) and make it exit 1: resolve,
    `git add`, then `--continue`; `--abort` restores the state before.
    While it is in progress, a commit (the pre-commit hook, or `--continue`)
    that stages conflict markers in a path it left conflicted is refused,
    unless --allow-markers (or LAC_ALLOW_MARKERS=1) says they are meant.
    A path from REF that git would refuse to check out (`.git` in any
    spelling, `..`) is refused with exit 2; nothing is written over a path
    another agent holds, nor over uncommitted changes.
    """
    from ..reconcile.command import command
    from ..views.reconcile import reconcile_result

    return reconcile_result(
        command(
            session,
            ref,
            base_rev=base_rev,
            dry_run=dry_run,
            abort=abort,
            continue_=continue_,
            allow_markers=allow_markers,
        )
    )
