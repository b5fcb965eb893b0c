"""`git lac task add | after | edit | cancel | reopen`: a task's whole life.

``body`` is a thunk: the text, or the file (or standard input) named by
``--body-file``, read where the command always read it (after the task id is
checked), so that what a bad call is told first has not changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..edge import Result
from ..model import Task, TaskState
from ..session import Session
from ..views import shown
from ..views.tasks import show_text

if TYPE_CHECKING:
    from ..board import Board

Body = Callable[[], str | None]


def task_id(value: str) -> int:
    from ..board import validate_task_id

    return validate_task_id(value)


def add(
    session: Session,
    title: str,
    *,
    body: Body,
    lane: str,
    priority: int,
    after: tuple[str, ...],
    needs: tuple[str, ...],
    writes: tuple[str, ...],
    reads: tuple[str, ...],
    resources: tuple[str, ...] = (),
) -> Result:
    new = session.board().add_task(
        title,
        body=body() or "",
        lane=lane,
        priority=priority,
        after=[task_id(a) for a in after],
        needs=needs,
        writes=writes,
        reads=reads,
        resources=resources,
    )
    return Result({"id": new.id, "task": new.to_json()}, str(new.id))


def _shown(board: Board, task: Task) -> str:
    """The task as ``show`` prints it, with the resource values it needs and
    holds (an edit that printed none read as if they were gone)."""
    held = board.claim_resources(task.id) if task.state == TaskState.CLAIMED else []
    return show_text(task, board.now(), needs=board.resource_needs(task.id), resources=held)


def after(session: Session, task: str, deps: tuple[str, ...]) -> Result:
    board = session.board()
    updated = board.add_dependencies(task_id(task), [task_id(d) for d in deps])
    return Result({"task": updated.to_json()}, _shown(board, updated))


def edit(
    session: Session,
    task: str,
    *,
    title: str | None,
    body: Body,
    lane: str | None,
    priority: int | None,
    needs: tuple[str, ...] | None,
    writes: tuple[str, ...],
    reads: tuple[str, ...],
    drop_paths: tuple[str, ...],
    add_after: tuple[str, ...],
    drop_after: tuple[str, ...],
    reason: str | None,
) -> Result:
    """``needs``: the new capabilities (``()``: none any more; None: unchanged)."""
    board = session.board()
    edited = board.edit_task(
        task_id(task),
        title=title,
        body=body(),
        lane=lane,
        priority=priority,
        needs=needs,
        writes=writes,
        reads=reads,
        drop_paths=drop_paths,
        add_after=[task_id(d) for d in add_after],
        drop_after=[task_id(d) for d in drop_after],
        reason=reason,
    )
    return Result({"task": edited.to_json()}, _shown(board, edited))


def cancel(session: Session, task: str, reason: str | None) -> Result:
    cancelled = session.board().cancel_task(task_id(task), reason=reason)
    return Result(
        {"task": cancelled.to_json()}, f"cancelled: task #{cancelled.id} {shown(cancelled.title)}"
    )


def reopen(session: Session, task: str, reason: str | None) -> Result:
    reopened = session.board().reopen_task(task_id(task), reason=reason)
    said = f"reopened: task #{reopened.id} {shown(reopened.title)} is open"
    return Result({"task": reopened.to_json()}, said)
