"""`git lac wait PATH… [--timeout D] [--lock]`: until the paths are free for us.

The board says when to look again: LISTEN on its change channel on
PostgreSQL (every write notifies it), ``PRAGMA data_version`` polled every
0.1 s on SQLite (a read that takes no lock). A waiter looks at least every
LOOK_EVERY_S anyway, so a change it missed costs it at most that.

With ``--lock`` the locks are taken the moment the paths are free, in one
grant (all or nothing, serialised with every other grant: of two waiters
for one path exactly one gets it). A waiter only asks for the grant when a
read shows the paths free, so a release wakes readers, not a storm of
writers; and the waiters of a path take their turns oldest first
(:mod:`git_lacunari.turns`), so only the oldest asks at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from .board import Board
from .errors import InvalidInput, PathLocked
from .model import Conflict, Lock, LockMode

LOOK_EVERY_S = 1.0
# A waiter for the lock holds a turn per path (a ticket file, or an advisory
# lock): bounded, so a long list is refused in one line, not by the kernel.
MAX_LOCK_PATHS = 256


class Waited:
    """How a wait ended: free (and locked), or ``in_line`` when the time ran
    out while older waiters had their turn at paths no one held just then.
    ``finished``: the tasks whose locks it waited for that are done now."""

    def __init__(
        self,
        paths: list[str],
        waited: float,
        locks: list[Lock],
        *,
        in_line: bool = False,
        finished: list[int] | None = None,
    ) -> None:
        self.paths, self.waited, self.locks, self.in_line = paths, waited, locks, in_line
        self.finished = finished or []

    def to_json(self) -> dict[str, Any]:
        return {
            "paths": self.paths,
            "waited": round(self.waited, 3),
            "locked": [lk.to_json() for lk in self.locks],
            "finished": self.finished,
        }


def finished_tasks(board: Board, task_ids: set[int]) -> list[int]:
    """Of the tasks whose write locks a wait met, those done now. Their work
    is in the destination, or on its way there, and the waiter's branch lacks
    it: changing the paths before bringing it in is the conflict that
    waiting was for. Told after the wait, as a courtesy: a board
    that cannot answer now gives none, rather than failing a wait that has
    ended (with --lock, one that holds its locks)."""
    from .errors import LacError
    from .model import TaskState

    done = []
    for task_id in sorted(task_ids):
        try:
            if board.show(task_id).state == TaskState.DONE:
                done.append(task_id)
        except LacError:
            return done
    return done


def wait_for_paths(
    board: Board,
    patterns: Sequence[str],
    *,
    timeout: float | None = None,
    lock: bool = False,
    task_id: int | None = None,
    on_wait: Callable[[list[Conflict]], None] | None = None,
) -> Waited:
    """Block until no other agent holds any of ``patterns``; with ``lock``,
    take them (write locks, under ``task_id`` if given) in the same moment.
    Raises :class:`PathLocked` (the holders now) when ``timeout`` runs out."""
    if not patterns:
        raise InvalidInput("name at least one path to wait for")
    wanted = [s.pattern for s in board.specs(patterns, ())]
    if timeout is not None and timeout < 0:
        raise InvalidInput("--timeout must not be negative")
    if lock and len(wanted) > MAX_LOCK_PATHS:
        raise InvalidInput(
            f"wait --lock takes at most {MAX_LOCK_PATHS} paths (each waits its turn in a "
            f"line of its own), not {len(wanted)}: name their directory or a glob"
        )
    if lock and task_id is not None:  # refused now, not once the paths are free
        board.require_claim(task_id, "claim it first")
    # check and lock resolve what they are given from the current directory,
    # as the command line does: give them ours from the top, spelled from here.
    up = "../" * len([part for part in board.prefix.split("/") if part])
    asked = [up + pattern for pattern in wanted]
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    turn = None
    told = False
    # The tasks whose write locks held us: a reader's work changes nothing
    # the waiter must bring in.
    met: set[int] = set()

    def meet(conflicts: list[Conflict]) -> None:
        met.update(
            c.lock.task_id
            for c in conflicts
            if c.lock.task_id is not None and c.lock.mode == LockMode.WRITE
        )

    def until_free() -> Waited:
        nonlocal told
        if turn is None and lock:
            held = board.check(asked)
            if held:
                raise PathLocked(held, advice="still held when the wait ran out")
            return Waited(wanted, time.monotonic() - start, [], in_line=True)
        while True:
            conflicts = board.check(asked)
            if not conflicts:
                if not lock:
                    return Waited(wanted, time.monotonic() - start, [])
                try:
                    locks = board.lock(asked, task_id=task_id)
                except PathLocked as exc:  # taken between the look and the grant
                    conflicts = exc.conflicts
                else:
                    return Waited(wanted, time.monotonic() - start, locks)
            meet(conflicts)
            if not told and on_wait is not None:
                on_wait(conflicts)
                told = True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise PathLocked(conflicts, advice="still held when the wait ran out")
            board.store.wait_for_change(LOOK_EVERY_S if left is None else min(left, LOOK_EVERY_S))

    if lock:  # in line first: the oldest waiter of a path is the one that asks
        from .turns import take_turn

        held = board.check(asked)
        meet(held)
        if held and on_wait is not None:
            on_wait(held)
            told = True
        turn = take_turn(board, wanted, deadline)
    try:
        waited = until_free()
    finally:
        if turn is not None:
            turn.release()
    if met:  # after our turn is given up: the next in line need not wait for this
        waited.finished = finished_tasks(board, met)
    return waited
