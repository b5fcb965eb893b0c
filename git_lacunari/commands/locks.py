"""`git lac lock`, `unlock`, `locks` and `check`: path locks."""

from __future__ import annotations

from collections.abc import Sequence

from ..edge import Result
from ..errors import LacError, PathLocked
from ..model import Conflict, LockMode
from ..rules import LandingLine
from ..session import Session
from ..views import shown
from ..views.tasks import lock_line
from .task import task_id


def lock(session: Session, patterns: tuple[str, ...], read_mode: bool, task: str | None) -> Result:
    board = session.board()
    mode = LockMode.READ if read_mode else LockMode.WRITE
    under = task_id(task) if task else None
    try:
        got = board.lock(patterns, mode=mode, task_id=under)
    except PathLocked as refused:
        # Under a claim only: the board records a claim's tip, which is how
        # the landing holder's finished line later passes this lock.
        lines = _built_on(session, refused.conflicts) if under is not None else []
        if not lines:
            raise
        got = board.lock(patterns, mode=mode, task_id=under, built_on=lines)
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
    lines = _built_on(session, conflicts)
    if conflicts and not lines:
        raise PathLocked(conflicts)
    built = f" (built on landing {', '.join(f'#{ln.task}' for ln in lines)})" if lines else ""
    return Result({"paths": list(paths)}, "free: " + " ".join(paths) + built)


def _built_on(session: Session, conflicts: Sequence[Conflict]) -> list[LandingLine]:
    """When every lock in the way is a landing claim's whose tip HEAD
    contains, those lines (stacking: their locks do not refuse a
    branch built on them, as at the edit, the commit and the push); else
    none. Git is asked only then; no repository here builds on nothing."""
    if not conflicts or not all(c.landing_tip for c in conflicts):
        return []
    from ..landing import every_line, landing_lines

    try:
        built_on, _ = landing_lines(session.repo, conflicts)
    except LacError:
        return []
    if {c.landing_tip for c in conflicts} <= set(built_on):
        return every_line(built_on)
    return []
