"""`git lac keeper` and `git lac drain`: stale claims back, a lane worked unattended."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..durations import parse_duration
from ..edge import Result
from ..session import Session

if TYPE_CHECKING:
    from ..board import Board
from . import parse_stale

Echo = Callable[[str], None]


def keeper(
    session: Session, *, once: bool, interval: str, stale_after: str | None, echo: Echo
) -> Result:
    from ..liveness import run_keeper

    every = parse_duration(interval)
    stale = parse_stale(stale_after)
    expired_locks: list[dict[str, object]] = []
    landed: list[dict[str, object]] = []
    board = session.board()
    expired = run_keeper(
        board,
        once=once,
        interval=every,
        stale_after=stale,
        echo=echo,
        expired_locks=expired_locks,
        land=_lander(session, board, landed),
    )
    quiet = not expired and not expired_locks and not landed
    return Result(
        {"expired": expired, "expired_locks": expired_locks, "landed": landed},
        "keeper: nothing stale" if quiet else "",
    )


def _lander(
    session: Session, board: Board, into: list[dict[str, object]]
) -> Callable[[], list[str]] | None:
    """The keeper's landing check: the landing claims whose work is in this
    repository's destination (as fetched; run `git fetch` beside it) are
    settled. None where there is no repository or destination to look at."""
    from ..errors import CannotWorkHere
    from ..landing import destination, settle

    try:
        repo = session.repo
        dest = destination(repo)
    except CannotWorkHere:
        return None
    if dest is None:
        return None

    def land() -> list[str]:
        said = []
        for s in settle(board, repo.toplevel, dest):
            into.append({"task": s.task.id, "how": str(s.how), "tip": s.task.tip})
            said.append(f"landed: task #{s.task.id} ({s.how} into {dest}); its locks are released")
        return said

    return land


def drain(
    session: Session,
    *,
    lane: str,
    once: bool,
    max_tasks: int | None,
    worktree: bool,
    command: tuple[str, ...],
    echo: Echo,
    as_json: bool,
) -> Result:
    from ..board import validate_lane
    from ..liveness import drain as drain_lane
    from ..liveness import max_attempts_of

    validate_lane(lane)
    repo = session.repo
    attempts = max_attempts_of(repo)
    report = drain_lane(
        # A board per use: the heartbeat thread needs a connection of its own,
        # and a drainer reconnects when its board's connection is cut.
        session.new_board,
        repo,
        lane=lane,
        command=command,
        once=once,
        max_tasks=max_tasks,
        worktree=worktree,
        max_attempts=attempts,
        echo=echo,
        # With --json, stdout is the one JSON object: the command's output goes to stderr.
        command_stdout=2 if as_json else None,
    )
    # --once exits with the task's outcome: 0 done, 1 failed (its status in the JSON).
    failed_once = once and report.failed and report.stopped_by is None
    return Result(
        {
            "done": report.done,
            "failed": report.failed,
            "parked": report.parked,
            "landing": report.landing,
            "exit_codes": {str(k): v for k, v in report.exit_codes.items()},
        },
        f"drained lane {lane!r}: {len(report.done)} done, {len(report.failed)} failed"
        + (f", {len(report.parked)} parked" if report.parked else "")
        + (f" ({len(report.landing)} landing)" if report.landing else ""),
        unfinished=(
            f"task #{report.failed[0]} failed (exit {report.exit_codes.get(report.failed[0])})"
            if failed_once
            else None
        ),
        stopped_by=report.stopped_by,
    )
