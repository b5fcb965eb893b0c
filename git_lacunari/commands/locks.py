"""`git lac lock`, `unlock`, `locks` and `check`: path locks."""

from __future__ import annotations

from ..edge import Result
from ..errors import PathLocked
from ..model import LockMode
from ..session import Session
from ..views import shown
from ..views.tasks import lock_line
from .task import task_id


def lock(session: Session, patterns: tuple[str, ...], read_mode: bool, task: str | None) -> Result:
    board = session.board()
    mode = LockMode.READ if read_mode else LockMode.WRITE
    got = board.lock(patterns, mode=mode, task_id=task_id(task) if task else None)
    now = board.now()
    return Result(
        {"locks": [lk.to_json() for lk in got], "now": now},
        "\n".join(f"locked: {lock_line(lk, now)}" for lk in got),
    )


def unlock(
    session: Session, patterns: tuple[str, ...], task: str | None, force: bool, reason: str | None
) -> Result:
    """``force``: anyone's locks on exactly ``patterns`` (the command line
    has checked that the options go together)."""
    board = session.board()
    if force:
        freed = board.force_unlock(patterns, reason=reason)
    else:
        freed = board.unlock_task(task_id(task)) if task else board.unlock(patterns)
    return Result(
        {"unlocked": [lk.to_json() for lk in freed]},
        "\n".join(f"unlocked: {shown(lk.pattern)}" for lk in freed) or "no locks to release",
    )


def locks(session: Session, mine: bool, path: str | None) -> Result:
    board = session.board()
    found = board.locks(mine=mine, path=path)
    now = board.now()
    return Result(
        {"locks": [lk.to_json() for lk in found], "now": now},
        "\n".join(lock_line(lk, now) for lk in found) or "no locks",
    )


def check(session: Session, paths: tuple[str, ...]) -> Result:
    conflicts = session.board().check(paths)
    if conflicts:
        raise PathLocked(conflicts)
    return Result({"paths": list(paths)}, "free: " + " ".join(paths))
