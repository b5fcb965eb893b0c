"""Keeping a fleet alive unattended: the keeper, and drainers that work a lane.

Both are singletons across machines: one keeper per board, one drainer per
lane, held with :meth:`Store.exclusive` (an OS file lock for SQLite, a
session advisory lock on a dedicated connection for PostgreSQL), so a crashed
holder never wedges anything: the kernel or the server lets go.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from .board import Board
from .board.notices import Notice
from .durations import format_duration
from .errors import (
    AlreadyClaimed,
    BoardUnreachable,
    CannotWorkHere,
    InvalidInput,
    LacError,
    NotFound,
)
from .repo import Repo, git
from .store import Exclusive
from .text import shown

if TYPE_CHECKING:
    from .store.pool import StorePool

Echo = Callable[[str], None]
DEFAULT_MAX_ATTEMPTS = 3
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
RECONNECT_FOR_S = 30.0


class Lender:
    """Boards for a long-running process (the drainer, the keeper), one for
    each unit of work: on PostgreSQL borrowed from a ``psycopg_pool`` pool
    (:class:`~git_lacunari.store.pool.StorePool`), so a heartbeat or a sweep
    never opens a connection of its own and a lost one is replaced; on
    SQLite, ``fallback`` (a board of the caller's thread)."""

    def __init__(self, board: Board) -> None:
        self.template = board
        self.pool: StorePool | None = None
        if board.store.dialect == "postgres":
            from .store.pool import StorePool
            from .store.postgres import PostgresStore

            assert isinstance(board.store, PostgresStore)
            self.pool = StorePool(board.store)

    @contextmanager
    def board(self, fallback: Callable[[], Board]) -> Iterator[Board]:
        if self.pool is None:
            yield fallback()
            return
        t = self.template
        with self.pool.store() as store:
            yield Board(
                store, t.identity, prefix=t.prefix, ignorecase=t.ignorecase, blob_ids=t.blob_ids
            )

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


def holder_text(board: Board) -> str:
    return f"{board.agent} (pid {os.getpid()} on {socket.gethostname()})"


def become_sole(
    board: Board, name: str, *, wait: bool, poll: float, echo: Echo, what: str
) -> Exclusive:
    """Become the one ``name`` holder, waiting for it, or refuse at once."""
    said = False
    while True:
        held = board.store.exclusive(name)
        if held is not None:
            board.record_holder(name, holder_text(board))
            return held
        holder = board.holder_of(name)
        if not wait:
            raise AlreadyClaimed(task=None, holder=holder, what=what)
        if not said:
            echo(f"git lac: waiting: {what} is worked by {holder}")
            said = True
        time.sleep(poll)


# --- the keeper -----------------------------------------------------------------


def run_keeper(
    board: Board,
    *,
    once: bool,
    interval: float,
    stale_after: float | None,
    echo: Echo,
    expired_locks: list[dict[str, object]] | None = None,
    land: Callable[[], list[str]] | None = None,
) -> list[dict[str, object]]:
    """``land``: settles the landing claims whose work has landed
    and says which, once per sweep (None: no destination here to look at)."""
    board_stale = board.default_stale_after()
    if stale_after is not None and stale_after < board_stale:
        # Every claim carries its own stale-after: a keeper that expired
        # claims sooner than they were promised would hand live work to a
        # second worker. A longer one is a floor, and harmless.
        raise InvalidInput(
            f"keeper --stale-after {format_duration(stale_after)} is shorter than the board's "
            f"{format_duration(board_stale)}: claims keep the stale-after they were made with; "
            "`git lac init --stale-after D` sets it for new claims, "
            "`claim --stale-after D` per claim"
        )
    held = become_sole(
        board, "keeper", wait=not once, poll=interval, echo=echo, what="this board's keeper"
    )
    expired_all: list[dict[str, object]] = []
    lender = Lender(board)  # each sweep on a pooled connection (PostgreSQL)
    try:
        while True:
            with lender.board(lambda: board) as sweeper:
                for fact in sweeper.sweep(stale_after):
                    why = (
                        f"past its max age {format_duration(float(str(fact['max_age'])))}"
                        if fact.get("why") == "max_age"
                        else f"silent {format_duration(float(str(fact['silent_for'])))}"
                    )
                    echo(
                        f"expired: task #{fact['task']} of {fact['previous_owner']}, {why}; "
                        "back on the board"
                    )
                    expired_all.append(fact)
                _sweep_task_less_locks(sweeper, stale_after, echo, expired_locks)
            for said in land() if land is not None else ():
                echo(said)
            if once:
                return expired_all
            time.sleep(interval)
            if not held.alive():
                raise BoardUnreachable("the keeper lost its hold on the board; exiting")
    finally:
        lender.close()
        held.release()


def _sweep_task_less_locks(
    board: Board, stale_after: float | None, echo: Echo, into: list[dict[str, object]] | None
) -> None:
    """A lock taken without a task has no heartbeat of its own: it goes back
    once its agent has not been seen (run any command) for the stale period."""
    for fact in board.sweep_locks(stale_after):
        echo(
            f"expired: {shown(', '.join(map(str, fact['locks'])))} of {shown(str(fact['agent']))} "
            f"(no task), silent "
            f"{format_duration(float(str(fact['silent_for'])))}; unlocked"
        )
        if into is not None:
            into.append(fact)


# --- drainers -----------------------------------------------------------------------


@dataclass
class DrainReport:
    done: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    parked: list[int] = field(default_factory=list)
    landing: list[int] = field(default_factory=list)  # of done: work not in the destination yet
    stopped_by: signal.Signals | None = None  # when a signal ended the run
    exit_codes: dict[int, int] = field(default_factory=dict)  # task id -> its command's status


class Heartbeat(threading.Thread):
    """Refreshes one claim while its command runs, on a board of its own
    (connections are not shared across threads); a failed beat is retried
    at the next tick, which is what a flaky board needs."""

    def __init__(
        self,
        open_board: Callable[[], Board],
        task_id: int,
        every: float,
        lender: Lender | None = None,
    ) -> None:
        super().__init__(daemon=True)
        self.open_board, self.task_id, self.every = open_board, task_id, every
        self.lender = lender
        self.stop = threading.Event()

    def run(self) -> None:
        board: Board | None = None
        while not self.stop.wait(self.every):
            try:
                if self.lender is not None and self.lender.pool is not None:
                    # PostgreSQL: each beat on a pooled connection, none kept.
                    with self.lender.board(self.open_board) as pooled:
                        pooled.heartbeat([self.task_id])
                    continue
                board = board or self.open_board()
                board.heartbeat([self.task_id])
            except LacError:
                if board is not None:
                    board.store.close()
                board = None
        if board is not None:
            board.store.close()


def task_worktree(repo: Repo, task_id: int) -> Path:
    """The linked worktree on branch ``lac/task-ID`` for one task.

    A retry continues the earlier attempt: the branch is never reset, so
    every attempt's commits stay on it, and a worktree left by an earlier
    attempt is reused with whatever it holds. A first attempt branches
    from HEAD. Raises CannotWorkHere when git cannot make it (no commit yet).
    """
    where = repo.common_dir / "lacunari" / "worktrees" / f"task-{task_id}"
    branch = f"lac/task-{task_id}"
    if where.exists():
        try:
            on = git("rev-parse", "--abbrev-ref", "HEAD", cwd=where).decode().strip()
        except LacError:
            on = ""
        if on == branch:
            return where
        raise CannotWorkHere(f"{where} exists but is not a worktree on {branch}; move it aside")
    git("worktree", "prune", cwd=repo.toplevel)  # a worktree deleted by hand
    try:
        git("rev-parse", "--verify", "-q", f"refs/heads/{branch}", cwd=repo.toplevel)
        git("worktree", "add", "-q", str(where), branch, cwd=repo.toplevel)
    except CannotWorkHere:
        git("worktree", "add", "-q", "-b", branch, str(where), "HEAD", cwd=repo.toplevel)
    return where


def _die_with_parent() -> None:
    """In the command's process, before exec: its own process group, and on
    Linux SIGKILL when the drainer dies, however it dies (PR_SET_PDEATHSIG)."""
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() == 1:  # the drainer died before the signal was armed
            os._exit(128 + signal.SIGKILL)


LANDING = "landing"  # what _settle answers for a claim done whose work has not landed


def _settle(
    board: Board,
    *,
    task_id: int,
    code: int,
    stopped: bool,
    max_attempts: int,
    where: Repo | None = None,
) -> str:
    """What a finished run means for its claim; returns the task's new state
    (:data:`LANDING` for a claim done whose work is not in the destination).

    A run that succeeded is ``done`` as the verb is, by the one landing rule
    (:func:`~git_lacunari.landing.finish`), judged in ``where``, the working
    tree the command ran in: commits on a branch not in the destination
    keep the claim landing, with its write locks. None: done at once (no
    repository to look at)."""
    if stopped:
        return board.release(task_id).state
    if code == 0:
        if where is None:
            return board.done(task_id).state
        from .landing import finish, track

        track(board, where)  # the command's commits: a hook may have told none
        finished = finish(board, where, task_id)
        return LANDING if finished.landing else finished.task.state
    return board.fail(task_id, status=code, max_attempts=max_attempts).state


def _retrying(
    board: Board, open_board: Callable[[], Board], action: Callable[[Board], str], echo: Echo
) -> str:
    """Run ``action`` on ``board``, reconnecting while the board is unreachable
    (a PostgreSQL connection can be cut under a long-running drainer)."""
    deadline = time.monotonic() + RECONNECT_FOR_S
    while True:
        try:
            return action(board)
        except BoardUnreachable as exc:
            if time.monotonic() > deadline:
                raise BoardUnreachable(
                    f"{exc.message}; gave up after {RECONNECT_FOR_S:.0f}s (the keeper will "
                    "return the claim once it is stale)"
                ) from None
            echo(f"git lac: {exc.message}; reconnecting")
            time.sleep(1.0)
            try:
                board = open_board()
            except BoardUnreachable:
                continue


def drain(
    open_board: Callable[[], Board],
    repo: Repo,
    *,
    lane: str,
    command: Sequence[str],
    once: bool,
    max_tasks: int | None,
    worktree: bool,
    max_attempts: int,
    echo: Echo,
    command_stdout: int | None = None,
) -> DrainReport:
    """``command_stdout``: where COMMAND's standard output goes (a file
    descriptor; None: ours). ``drain --json`` sends it to stderr."""
    if not command:
        raise InvalidInput("drain needs a COMMAND to run for each task (after --)")
    board = open_board()
    held = become_sole(
        board, f"drain:{lane}", wait=not once, poll=1.0, echo=echo, what=f"lane {lane!r}"
    )
    from .landing import destination

    destination(repo)  # a lac.target that names nothing: said before any claim
    report = DrainReport()
    child: list[subprocess.Popen[bytes]] = []
    lender = Lender(board)  # heartbeats on pooled connections (PostgreSQL)

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        report.stopped_by = signal.Signals(signum)
        for proc in child:
            _terminate(proc)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while report.stopped_by is None:
            if max_tasks is not None and len(report.done) + len(report.failed) >= max_tasks:
                break
            try:
                claim = board.claim_next(lane)
            except NotFound:
                echo(f"git lac: lane {lane!r} has no claimable task; done")
                break
            except BoardUnreachable:
                board = open_board()  # one reconnect; a second failure ends the run
                continue
            task = claim.task
            stale = task.stale_after or board.default_stale_after()
            try:
                cwd = task_worktree(repo, task.id) if worktree else repo.toplevel
            except CannotWorkHere as exc:  # nothing ran: the claim goes back, on the record
                echo(f"git lac: task #{task.id}: no worktree: {exc.message}")
                failed = board.fail(
                    task.id, status=127, max_attempts=max_attempts, reason=exc.message
                )
                report.failed.append(task.id)
                report.exit_codes[task.id] = 127
                if failed.state == "parked":
                    report.parked.append(task.id)
                if once:
                    break
                continue
            env = {
                **os.environ,
                "LAC_TASK_ID": str(task.id),
                "LAC_TASK_TITLE": task.title,
                "LAC_LANE": lane,
                "LAC_AGENT": board.agent,
                # The command acts as this drainer's instance, even in a task
                # worktree (identity.instance_of honours it only for this repository).
                "LAC_INSTANCE": board.instance,
                "LAC_TASK_PATHS": json.dumps([[lk.pattern, lk.mode] for lk in claim.locks]),
            }
            running = shown(" ".join(command))
            echo(f"git lac: task #{task.id} {shown(task.title)}: running {running}")
            beat = Heartbeat(open_board, task.id, heartbeat_period(stale), lender)
            try:
                # Forked before the heartbeat thread starts: preexec_fn is
                # only safe in a single-threaded parent.
                proc = subprocess.Popen(
                    list(command),
                    cwd=cwd,
                    env=env,
                    stdout=command_stdout,
                    preexec_fn=_die_with_parent,
                )
                child.append(proc)
                beat.start()
                if report.stopped_by is not None:  # the signal came before the child existed
                    _terminate(proc)
                code = proc.wait()
            except OSError as exc:
                echo(f"git lac: cannot run {command[0]}: {exc}")
                code = 127
            finally:
                child.clear()
                beat.stop.set()
                if beat.is_alive():
                    beat.join()
            report.exit_codes[task.id] = code
            state = _retrying(
                board,
                open_board,
                functools.partial(
                    _settle,
                    task_id=task.id,
                    code=code,
                    stopped=report.stopped_by is not None,
                    max_attempts=max_attempts,
                    where=_repo_at(repo, cwd),
                ),
                echo,
            )
            if report.stopped_by is not None:
                echo(f"git lac: {report.stopped_by.name}: task #{task.id} released")
                break
            (report.done if code == 0 else report.failed).append(task.id)
            if state == LANDING:
                report.landing.append(task.id)
                echo(
                    f"git lac: task #{task.id} landing: its commits are not in the "
                    "destination yet; its write locks stay until they are"
                )
            if state == "parked":
                report.parked.append(task.id)
                echo(f"git lac: task #{task.id} failed {max_attempts} times: parked")
            if once:
                break
            if not held.alive():
                raise BoardUnreachable(f"lost the hold on lane {lane!r}; stopping")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        lender.close()
        held.release()
    return report


def _repo_at(repo: Repo, cwd: Path) -> Repo:
    """The working tree a command ran in: ``repo``, or a task worktree of it."""
    if cwd == repo.toplevel:
        return repo
    from .repo import discover

    return discover(cwd)


def heartbeat_period(stale_after: float) -> float:
    """How often a drainer beats for a claim of this stale-after: three beats
    per stale-after, so two may be lost before the keeper may take it back."""
    return max(0.2, min(stale_after / 3, 60.0))


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the command's whole process group (it has its own)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        proc.terminate()


def max_attempts_of(repo: Repo) -> int:
    raw = repo.get("lac.maxattempts")
    if raw is None:
        return DEFAULT_MAX_ATTEMPTS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise InvalidInput(f"lac.maxAttempts is {raw!r}; give a positive whole number")
    return value


# --- take-over notices: told once per working tree ---------------------

TOLD_DIR = Path("lacunari") / "told"


def told_file(board: Board, repo: Repo) -> Path:
    """This working tree's record of the notices it was told, per board (two
    boards number their events apart): beside the instance it belongs to."""
    import hashlib

    where = str(getattr(board.store, "where", board.store.url))
    key = hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return repo.common_dir / TOLD_DIR / f"{board.instance or 'none'}-{key}.json"


def _told(file: Path) -> set[int]:
    try:
        return {int(i) for i in json.loads(file.read_text())}
    except (OSError, ValueError, TypeError):
        return set()


def _record_told(file: Path, keep: list[int]) -> None:
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(keep) + "\n")
        os.replace(tmp, file)
    except OSError:
        pass


def tell(board: Board, repo: Repo) -> list[Notice]:
    """The take-over notices this working tree has not been told yet, now
    recorded as told: each is said once, by the first ``git lac`` command
    (:meth:`Session.tell`) or pre-commit hook that runs here after the force
    action or the expiry (``done`` and ``heartbeat TASK`` of a force-released claim say it
    in their refusal, and record it: :func:`told_in_refusal`). A record that
    cannot be read is read as empty (a notice told again); one that cannot
    be written leaves them to be told again. The verb's own work is done by
    then: a board that cannot answer this look leaves the notices for the
    next one rather than fail it."""
    board.notices_asked = True
    try:
        notices = board.notices()
    except LacError:
        return []
    if not notices:
        return []
    file = told_file(board, repo)
    told = _told(file)
    fresh = [n for n in notices if n.event not in told]
    if fresh:
        # Only events that still concern us are kept: the record stays small.
        _record_told(file, sorted({n.event for n in notices} & (told | {n.event for n in fresh})))
    return fresh


def told_in_refusal(board: Board, repo: Repo, refusal: LacError) -> None:
    """A refusal that said a take-over notice (``done``, ``heartbeat TASK``
    of a claim released by force) has told it: recorded, so the next
    command does not say it again. Best effort, as :func:`tell`."""
    events = getattr(refusal, "told", ())
    if not events:
        return
    file = told_file(board, repo)
    told = _told(file)
    if not set(events) <= told:
        _record_told(file, sorted(told | set(events)))
