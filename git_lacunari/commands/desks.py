"""`git lac claim … --worktree`, `git lac env`, `git lac desks`: a claim's desk.

A desk is made after the claim holds (a refused claim makes nothing) and
the claim is given back when git cannot make the desk (no claim without
one); the setup that follows may fail, and then both stay, said.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..edge import Result
from ..errors import CannotWorkHere, InvalidInput, LacError, NotFound, NotOpen
from ..model import TaskState
from ..session import Session
from ..views import shown
from . import claims
from .task import task_id

if TYPE_CHECKING:
    from ..board import Board
    from ..desk import Desk, Plan, Work
    from ..model import Task

Echo = Callable[[str], None]


def claim_env(board: Board, task: Task) -> dict[str, str]:
    """The variables of a claim: what `git lac env` prints, a desk's
    `.lac/env` holds and its setup command runs with. One place, so that
    each thing a claim is granted adds its own."""
    from ..pools import resource_env

    # task_id and agent are names no pool may take: nothing here collides
    return {
        "LAC_TASK_ID": str(task.id),
        "LAC_AGENT": task.owner or "",
        **resource_env(board.claim_resources(task.id)),
    }


def claim_desk(
    session: Session,
    task: str | None,
    *,
    next_: bool,
    lane: str,
    writes: tuple[str, ...],
    reads: tuple[str, ...],
    stale: float | None,
    wait: float | None,
    path: str | None,
    branch: str | None,
    echo: Echo,
    resources: tuple[str, ...] = (),
    max_age: float | None = None,
) -> Result:
    """The claim, held at the desk's own instance, then its desk."""
    from .. import desk
    from ..front_door import open_board
    from ..identity import new_instance
    from ..landing import destination

    repo = session.repo
    given = desk.check_path(repo, path) if path is not None else None
    if branch is not None:
        desk.check_branch(repo, branch)
    dest = destination(repo)
    if dest is None:
        raise CannotWorkHere(
            "a desk starts at the destination's tip, and there is none here: fetch it, or "
            "`git config lac.target BRANCH` (e.g. origin/main)"
        )
    known = None if next_ else task_id(task or "")
    planned: Plan | None = None
    if known is not None:  # everything that can be refused is, before the claim
        planned = _plan(repo, known, given, branch, dest)
        desk.read_setup(repo, planned.start)
    where = planned.path if planned else given or desk.default_root(repo)
    ident = session.identity
    inst = new_instance(where)
    ident = dataclasses.replace(
        ident, instance=inst.id, instance_where=inst.where, instance_source="a desk"
    )
    board = open_board(repo, identity=ident)
    try:
        board.place_later()
        got = claims.claim(
            session,
            task,
            next_=next_,
            lane=lane,
            writes=writes,
            reads=reads,
            stale=stale,
            wait=wait,
            take_over=False,
            board=board,
            resources=resources,
            max_age=max_age,
        )
        tid = got.task.id
        try:
            if planned is None:
                planned = _plan(repo, tid, given, branch, dest)
            setup = desk.read_setup(repo, planned.start)
            desk.make(repo, planned)
            try:
                from ..repo import discover

                at = discover(planned.path)
                inst = dataclasses.replace(inst, path=str(at.toplevel))
                desk.bind(repo, at, agent=board.agent, instance=inst, task_id=tid)
                board.record_place(dataclasses.replace(board.identity, instance_where=inst.where))
                _push_identity(repo, at, board.agent, inst.id)
            except BaseException:
                desk.unmake(repo, planned)
                raise
        except BaseException as exc:
            given_back = False
            if not got.again:  # no desk, no claim
                with contextlib.suppress(LacError):
                    board.release(tid)
                    given_back = True
            # exit 2 writes nothing, and this claimed first: said as exit 3,
            # with what became of the claim (git's own failure too).
            if isinstance(exc, InvalidInput) or type(exc) is CannotWorkHere:
                if given_back:
                    fate = f"the claim of task #{tid} is given back"
                elif got.again:
                    fate = f"task #{tid} was claimed here already and stays so"
                else:
                    fate = (
                        f"the claim of task #{tid} could not be given back: `git lac release {tid}`"
                    )
                raise CannotWorkHere(f"{exc.message} ({fate})") from None
            raise
        notes = desk.furnish(desk.main_tree(repo), at.toplevel, setup, echo)
        variables = claim_env(board, got.task)
        env_file = desk.write_env(at.toplevel, variables)
        ran = desk.run_setup(at.toplevel, setup.command, variables, echo)
        said = claims.claimed(session, got, board=board, repo=at)
    finally:
        board.store.close()
    failed = ran.exit_code not in (None, 0) and ran.stopped_by is None
    data = {
        **said.data,
        "desk": {
            "path": str(at.toplevel),
            "branch": planned.branch,
            "base": planned.base,
            "commit": planned.start,
            "continued": not planned.new_branch,
            "env": str(env_file),
            "notes": notes,
            "setup": ran.to_json(),
        },
    }
    how = "continues" if not planned.new_branch else f"new, from {shown(planned.base)}"
    human = (
        f"{said.human}\n  desk: {shown(str(at.toplevel))}\n"
        f"  branch {shown(planned.branch)} ({how} at {planned.start[:12]})"
    )
    warnings = list(said.warnings)
    if failed or ran.stopped_by is not None:
        warnings.append(
            f"git lac: desk setup {shown(ran.command or '')!r} {ran.ended()} "
            f"(the claim and the desk stay; its output is in {ran.log})"
            + (": its last lines:" if ran.last_lines else "")
        )
        warnings += [f"git lac:   {line}" for line in ran.last_lines]
    return Result(
        data,
        human,
        warnings=warnings,
        unfinished="desk_setup" if failed else None,
        stopped_by=ran.stopped_by,
    )


def _plan(repo: Any, tid: int, given: Path | None, branch: str | None, dest: str) -> Plan:
    from .. import desk

    where = given or desk.default_path(repo, tid)
    other = desk.default_task(repo, where)
    if given is not None and other not in (None, tid):
        raise InvalidInput(
            f"--worktree {shown(str(given))!r} is where the desk of task #{other} goes: "
            "give another PATH, or none"
        )
    if given is None and os.path.lexists(where):
        raise InvalidInput(
            f"{where} is there already (a desk of task #{tid}?): work in it, "
            "or `git lac desks --prune` it first"
        )
    return desk.plan(repo, path=where, branch=branch or desk.default_branch(tid), destination=dest)


def _push_identity(repo: Any, at: Any, agent: str, instance: str) -> None:
    """A clone that names its pushes (`hooks install` set ``push.pushOption``)
    names the desk's from the desk: the desk's own values come last, and the
    server reads the last."""
    from ..hooks import set_push_identity
    from ..repo import git

    with contextlib.suppress(LacError):
        out = git("config", "--get-all", "push.pushOption", cwd=repo.toplevel)
        if "lac.instance=" in out.decode("utf-8", "replace"):
            set_push_identity(at, agent, instance)


# --- git lac env ---------------------------------------------------------------------


def env(session: Session, task: str | None) -> Result:
    from ..desk import desk_task, env_text

    board = session.board()
    if task is not None:
        tid = task_id(task)
    else:
        found = desk_task(session.repo)
        if found is None:
            here = sorted({t for t, _, _ in board.claim_tracks()})
            if len(here) != 1:
                said = ", ".join(f"#{t}" for t in here)
                raise InvalidInput(
                    f"{board.agent} holds {len(here)} claims here"
                    + (f" ({said})" if here else "")
                    + ": name one (`git lac env ID`)"
                )
            found = here[0]
        tid = found
    claimed = board.show(tid)
    if claimed.state != TaskState.CLAIMED:
        raise NotOpen(task=tid, state=claimed.shown_state, advice="no claim, so no environment")
    variables = claim_env(board, claimed)
    return Result({"task": tid, "env": variables}, env_text(variables).rstrip("\n"))


# --- git lac desks [--prune] -----------------------------------------------------------


def _state(task: Task | None, live: bool) -> str:
    if task is None:
        return "not on this board"
    if task.state == TaskState.CLAIMED:
        return f"{task.shown_state} by {task.owner}" + ("" if live else " (elsewhere)")
    if task.state == TaskState.OPEN:
        return "open: released or expired"
    return str(task.state)


def _row(d: Desk, task: Task | None, live: bool, work: Work | None) -> dict[str, Any]:
    return {
        "path": str(d.path),
        "task": d.task,
        "branch": d.branch,
        "state": task.shown_state if task else None,
        "holder": task.owner if task and task.state == TaskState.CLAIMED else None,
        "live": live,
        "missing": d.missing,
        "clean": bool(work and work.clean),
        "uncommitted": dataclasses.asdict(work) if work else None,
    }


def desks(session: Session, *, prune: bool) -> Result:
    from .. import desk

    if not prune:
        return _desks(session, prune=False)
    with desk.pruning(session.repo):  # what it lists is what it may remove
        return _desks(session, prune=True)


def _desks(session: Session, *, prune: bool) -> Result:
    from .. import desk
    from ..landing import destination
    from ..views.terminal import table

    repo = session.repo
    found = desk.desks(repo)
    board = session.board() if found else None
    rows: list[dict[str, Any]] = []
    removed: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    lines: list[list[str]] = []
    said: list[str] = []
    dest = destination(repo) if prune and found else None
    here = Path(os.path.realpath(repo.toplevel))
    for d in found:
        task: Task | None = None
        if board is not None:
            with contextlib.suppress(NotFound):
                task = board.show(d.task)
        live = (
            task is not None
            and task.state == TaskState.CLAIMED
            and (d.instance is None or task.instance == d.instance)
        )
        work = None if d.missing else desk.uncommitted(d.path)
        row = _row(d, task, live, work)
        rows.append(row)
        state = _state(task, live)
        lines.append(
            [
                shown(str(d.path)),
                f"#{d.task}",
                shown(d.branch or "(detached)"),
                state,
                "missing" if work is None else work.said(),
            ]
        )
        if not prune:
            continue
        name = f"{shown(str(d.path))} (#{d.task})"
        why = _kept_because(d, task, live, work, here)
        if why is not None:
            kept.append({"path": str(d.path), "task": d.task, "why": why})
            said.append(f"kept: {name}: {why}")
            continue
        try:
            desk.remove(repo, d)
        except CannotWorkHere as exc:
            why = (
                "its directory is gone (removed meanwhile)"
                if not os.path.isdir(d.path)
                else f"git would not remove it: {exc.message}"
            )
            kept.append({"path": str(d.path), "task": d.task, "why": why})
            said.append(f"kept: {name}: {why}")
            continue
        branch_note, deleted = _branch_after(repo, d, dest)
        removed.append(
            {"path": str(d.path), "task": d.task, "branch": d.branch, "branch_deleted": deleted}
        )
        over = (
            f"its claim is held elsewhere now ({task.shown_state} by {task.owner})"
            if task is not None and task.state == TaskState.CLAIMED
            else f"its claim is over ({state})"
        )
        said.append(f"removed: {name}: {over} and it was clean; {branch_note}")
    if prune:
        human = "\n".join(said) or "no desks in this clone"
    else:
        human = table(lines) if lines else "no desks in this clone"
    return Result({"desks": rows, "removed": removed, "kept": kept}, human)


def _kept_because(
    d: Desk, task: Task | None, live: bool, work: Work | None, here: Path
) -> str | None:
    if work is None:
        return "its directory is gone (`git worktree prune` forgets it)"
    if task is None:
        return f"task #{d.task} is not on this board"
    if live:
        return f"its claim is live ({task.shown_state} by {task.owner})"
    if not work.clean:
        return f"uncommitted work: {work.said()}"
    real = Path(os.path.realpath(d.path))
    if here == real or real in here.parents:
        return "this command runs in it"
    return None


def _branch_after(repo: Any, d: Desk, dest: str | None) -> tuple[str, bool]:
    """The desk's branch goes only when the destination contains its tip."""
    from .. import desk

    if d.branch is None:
        return "no branch", False
    tip = desk.branch_tip(repo, d.branch)
    if tip is None:
        return f"branch {shown(d.branch)} is gone already", False
    if dest is None or not desk.contains(repo, dest, tip):
        return (
            f"branch {shown(d.branch)} kept: its tip is not in {shown(dest or 'a destination')}",
            False,
        )
    elsewhere = desk.checked_out_at(repo, d.branch)
    if elsewhere is not None:
        return f"branch {shown(d.branch)} kept: checked out at {shown(str(elsewhere))}", False
    try:
        desk.delete_branch(repo, d.branch, tip)
    except CannotWorkHere as exc:
        return f"branch {shown(d.branch)} kept: {exc.message}", False
    return f"branch {shown(d.branch)} deleted (its tip is in {shown(dest)})", True
