"""`git lac reconcile`, click-free: the one body the command line and
entry.py's fast path share. It returns what happened as data
(:data:`model.ReconcileOutcome`); :mod:`git_lacunari.views.reconcile` turns
that into the text and JSON people see."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import InvalidInput, PathLocked
from ..repo import Repo
from .merge import compute
from .model import Merged, ReconcileOutcome, Reconciliation
from .worktree import abort_reconcile, apply, finish, preflight, settle

if TYPE_CHECKING:  # the board's module is imported only once a board is opened
    from ..board import Board
    from ..session import Session


def refuse_held(board: Board, recon: Reconciliation) -> None:
    """Refuse, before writing anything, a path another agent holds."""
    held = board.held_by_others(recon.written)
    if held:
        raise PathLocked(held, advice=f"reconcile would write {held[0].path}")


def reconcile(
    repo: Repo,
    open_board: Callable[[], Board],
    ref: str,
    *,
    base_rev: str | None,
    dry_run: bool,
) -> Reconciliation:
    """Merge ``ref`` into the work tree. The board is opened only once REF is
    known to be safe, so a refused tree leaves no trace, not even a board."""
    opened: list[Board] = []

    def board() -> Board:
        if not opened:
            opened.append(open_board())
        return opened[0]

    settle(repo, board)
    recon = compute(repo, ref, base_rev=base_rev, lock_bases=lambda p: board().lock_bases(p))
    if not recon.written:
        return recon  # their work is already here: nothing to write or record
    refuse_held(board(), recon)
    preflight(repo, recon)  # a dry run says what a real run would refuse, too
    if not dry_run:
        # The `reconciled` event is recorded when the merge is committed
        # (--continue, or a plain commit noticed by the next reconcile): an
        # aborted reconcile leaves no trace on the board.
        apply(repo, recon)
    return recon


def command(
    session: Session,
    ref: str | None,
    *,
    base_rev: str | None,
    dry_run: bool,
    abort: bool,
    continue_: bool,
    allow_markers: bool = False,
) -> ReconcileOutcome:
    """`git lac reconcile` without click: the fast path in :mod:`entry` calls
    it directly, so a reconcile pays for no command-line framework."""
    if sum((abort, continue_, ref is not None)) != 1:
        raise InvalidInput("give exactly one of REF, --abort and --continue")
    if (abort or continue_) and (dry_run or base_rev):
        raise InvalidInput("--abort and --continue take no REF, --base or --dry-run")
    if allow_markers and not continue_:
        raise InvalidInput("--allow-markers goes with --continue")
    settle(session.repo, session.board)
    if abort:
        return abort_reconcile(session.repo)
    if continue_:
        return finish(session.repo, session.board(), allow_markers=allow_markers)
    assert ref is not None
    # The board must answer: reconcile never writes a path it cannot prove free.
    merged = reconcile(session.repo, session.board, ref, base_rev=base_rev, dry_run=dry_run)
    return Merged(merged, dry_run)
