"""`git lac claim`, `release`, `done` and `heartbeat`: a claim's life."""

from __future__ import annotations

from ..edge import Result
from ..session import Session
from ..views import shown
from ..views.tasks import claim_text
from .task import task_id


def claim(
    session: Session,
    task: str | None,
    *,
    next_: bool,
    lane: str,
    writes: tuple[str, ...],
    reads: tuple[str, ...],
    stale: float | None,
    wait: float | None,
    take_over: bool,
) -> Result:
    """``stale`` and ``wait``: durations already parsed (seconds, or None)."""
    board = session.board()
    if next_:
        got = board.claim_next(lane, writes=writes, reads=reads, stale_after=stale, wait=wait)
    else:
        got = board.claim(
            task_id(task or ""),
            writes=writes,
            reads=reads,
            stale_after=stale,
            take_over=take_over,
        )
    return Result(
        {
            "task": got.task.to_json(),
            "again": got.again,
            "locks": [lk.to_json() for lk in got.locks],
        },
        claim_text(got),
    )


def release(session: Session, task: str, force: bool, reason: str | None) -> Result:
    released = session.board().release(task_id(task), force=force, reason=reason)
    return Result({"task": released.to_json()}, f"released: task #{released.id} is open again")


def done(session: Session, task: str) -> Result:
    from ..liveness import tell

    board = session.board()
    finished = board.done(task_id(task))
    told = tell(board, session.repo)
    return Result(
        {"task": finished.to_json(), "notices": [n.to_json() for n in told]},
        f"done: task #{finished.id} {shown(finished.title)}",
        warnings=[f"git lac: {n.said()}" for n in told],
    )


def heartbeat(session: Session, tasks: tuple[str, ...]) -> Result:
    """Exit 1 (``unfinished``) when it tells a take-over notice: a claim or
    lock of ours was removed by force since we last looked (README, "Taken
    by force")."""
    from ..liveness import tell

    board = session.board()
    refreshed = board.heartbeat([task_id(t) for t in tasks])
    told = tell(board, session.repo)
    return Result(
        {"refreshed": refreshed, "notices": [n.to_json() for n in told]},
        "heartbeat: " + (" ".join(f"#{t}" for t in refreshed) or "no claims"),
        warnings=[f"git lac: {n.said()}" for n in told],
        unfinished=(
            f"{len(told)} of your claims or locks taken by force (above)"
            if len(told) > 1
            else "a claim or lock of yours was taken by force (above)"
        )
        if told
        else None,
    )
