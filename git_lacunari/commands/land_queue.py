"""`git lac land` (hand a finished line to the lander) and `git lac lander`."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from ..edge import Result
from ..errors import BadUsage, LacError
from ..model import Task, TaskState
from ..session import Session
from ..views import shown
from .claims import told_in_refusals
from .task import task_id

POLL_S = 0.25


def land(session: Session, task: str | None, *, wait: bool, timeout: float) -> Result:
    """`done`, then the line goes to the landing queue: here (a local
    destination: the lander runs now), or the server's (pushed to
    ``refs/lac/land/ID``; its post-receive runs the lander; ``wait`` waits
    for the outcome on the board)."""
    from ..land_queue import push_line, queue_here, remote_of, run
    from ..landing import finish

    board = session.board()
    repo = session.repo
    tid = task_id(task) if task is not None else _only_claim(board)
    with told_in_refusals(board, session):
        finished = finish(board, repo, tid)
    dest = finished.destination
    if not finished.landing:  # in the destination already, or none to wait for
        return _said(finished.task, dest, queued=False)
    tip = finished.task.tip or ""
    remote = remote_of(repo, dest or "")
    if remote is None:
        queue_here(repo, tid, tip)
        run(board, repo)
        return _said(board.show(tid), dest, queued=True)
    try:
        push_line(repo, remote, tid, tip, board.agent)
    except LacError as exc:
        _not_queued(board, finished.task, dest or "", exc)
    if not wait:
        return Result(
            _body(finished.task, dest, "queued"),
            f"queued: task #{tid} {shown(finished.task.title)}: {tip[:12]} goes onto "
            f"{shown(dest or '')} by the server's lander\n"
            f"  (`git lac land {tid} --wait` waits for it; `git lac status` tells)",
        )
    deadline = time.monotonic() + timeout
    while True:
        now = board.show(tid)
        if now.state != TaskState.CLAIMED or now.is_returned or now.tip != tip:
            break
        if time.monotonic() >= deadline:
            return Result(
                _body(now, dest, "queued"),
                f"queued: task #{tid}: not landed after {timeout:g}s",
                unfinished="still queued",
            )
        time.sleep(POLL_S)
    if now.state == TaskState.DONE:
        from ..landing import fetch_destination

        # The board knows; a failed fetch leaves the destination to the next one.
        with contextlib.suppress(LacError):
            fetch_destination(repo, dest or "")
    return _said(now, dest, queued=True)


def _not_queued(board: Any, task: Task, dest: str, exc: LacError) -> None:
    """The push to the server's queue failed: the line is not queued, so the
    claim goes back to its holder, in work (never left landing, its locks
    held for the landing period with nothing to land), and says why. The
    server's own refusal is a refusal (exit 1); anything else, as it came."""
    from ..errors import NotQueued

    lines = [ln.strip() for ln in exc.message.splitlines()]
    remote = [ln.removeprefix("remote:").strip() for ln in lines if ln.startswith("remote:")]
    refusal = next((ln for ln in remote if ln.startswith("refused:")), None)
    said = (refusal or (lines[0] if lines else type(exc).__name__)).removeprefix("refused:").strip()
    board.return_line(task, {"reason": "not_queued", "destination": dest, "said": said[:300]})
    again = f"fix the line, then `git lac land {task.id}` again"
    if refusal is not None:
        raise NotQueued(task=task.id, said=said, advice=again) from None
    exc.args = (f"task #{task.id}'s landing line was not queued ({said}): {again}",)
    raise exc


def _only_claim(board: Any) -> int:
    mine = [t for t, _, _ in board.claim_tracks()]
    if len(mine) == 1:
        return int(mine[0])
    held = ", ".join(f"#{t}" for t in mine) or "none"
    raise BadUsage(f"name the task to land: your claims here are {held}")


def _body(task: Task, dest: str | None, outcome: str) -> dict[str, Any]:
    return {
        "task": task.to_json(),
        "destination": dest,
        "outcome": outcome,
        "returned": task.returned if task.is_returned else None,
    }


def _said(task: Task, dest: str | None, *, queued: bool) -> Result:
    from ..land_queue import told

    title = shown(task.title)
    if task.state == TaskState.DONE:
        return Result(
            _body(task, dest, "landed"),
            f"landed: task #{task.id} {title}"
            + (f" (in {shown(dest)}); its locks are released" if dest else ""),
        )
    if task.is_returned:
        return Result(
            _body(task, dest, "returned"),
            shown(told(task)),
            unfinished="returned",
        )
    return Result(
        _body(task, dest, "queued" if queued else "landing"),
        f"queued: task #{task.id} {title}",
        unfinished="still queued",
    )


def lander(session: Session, *, once: bool, interval: float) -> Result:
    """Run the landing queue of this repository (a server's, or a clone's
    whose destination is a local branch): once, or every ``interval``."""
    from ..land_queue import Outcome, run

    repo, board = _lander_board(session)
    total = Outcome("")
    while True:
        done = run(board, repo)
        total.destination = done.destination
        total.landed += done.landed
        total.returned.update(done.returned)
        total.waiting = done.waiting
        total.batches += done.batches
        if once:
            break
        time.sleep(interval)
    lines = [f"landed: #{t}" for t in total.landed]
    lines += [f"returned: #{t} ({d.get('reason')})" for t, d in total.returned.items()]
    lines += [f"waiting: #{t}" for t in total.waiting]
    return Result(
        {
            "destination": total.destination,
            "landed": total.landed,
            "returned": [{"task": t, **d} for t, d in total.returned.items()],
            "waiting": total.waiting,
            "batches": total.batches,
        },
        "\n".join(lines) or f"lander: nothing queued for {shown(total.destination)}",
    )


def _lander_board(session: Session) -> tuple[Any, Any]:
    """A server's lander opens the board its guard judges by, as the server
    (in team mode: the role its lac.url connects as, a keeper); a clone's,
    as this session's agent."""
    from ..repo import discover_git_dir, git

    bare = git("rev-parse", "--is-bare-repository").decode().strip() == "true"
    if not bare:
        return session.repo, session.board()
    from ..guard.after import SERVER_AGENT, server_act_board

    repo = discover_git_dir()
    return repo, server_act_board(repo, SERVER_AGENT, "the server's lander")
