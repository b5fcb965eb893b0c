"""The landing queue: ``git lac land`` hands a finished line over, and the
lander takes it onto the destination, so that nobody rebases by hand.

A queued line is a ref, ``refs/lac/land/<task>``, at the line's tip, in the
repository that holds the destination: the server (``land`` pushes it
there; the server's pre-receive lets only the task's holder push it, and its
post-receive wakes the lander), or this clone when the destination is a
local branch (worktrees of one clone: ``land`` runs the lander itself). A
ref persists, so a lander killed, or a server restarted, loses nothing: the
next ``land``, post-receive or ``git lac lander --once`` goes on.

One pass of the lander (:func:`run`), under one lock per repository:

1. Lines whose task is no longer landing (landed, released, returned) and
   lines the destination already contains are settled by the one rule of
   :func:`git_lacunari.landing.settle`, never merged again, and their refs
   go.
2. The rest go in the order of the claim graph: a line waits while a line
   it is built on (the other tip is an ancestor of its own) is queued, or a
   task it waits on (``--after``) is not done.
3. The ready lines that change disjoint paths (since they forked from the
   destination) form one batch: each is merged onto the destination as it
   stands with ``git merge-tree --write-tree`` and ``git commit-tree`` (a
   fast-forward when the destination is an ancestor of the line), with no
   work tree; ``lac.land.check`` runs on the batch's tree; then one
   ``git update-ref DEST NEW OLD``, a compare-and-swap: a destination moved
   meanwhile (a push) is merged onto again, never overwritten.
4. Only then, in the same process, :func:`~git_lacunari.landing.settle`
   frees their locks: a lander killed between the ref update and the settle
   leaves the locks held (the next pass settles them), never free early.

A line that conflicts with the destination, or fails the check (alone), is
returned to its holder (:meth:`Board.return_line`): the claim is theirs, in
work, with its locks, and says why. The holder fixes the line and runs
``land`` again.

``LAC_TEST_LANDER_CRASH=before-update-ref`` (or ``after-update-ref``) makes
the lander SIGKILL itself between the merge and the ref update (or between
the ref update and the settle): for the tests of crash safety only.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import CannotWorkHere, InvalidInput, NotOwner
from .landing import commit_id, destination, is_ancestor, settle
from .model import Task, TaskState
from .repo import Repo, git

if TYPE_CHECKING:
    from .board import Board

QUEUE = "refs/lac/land/"
QUEUED = re.compile(r"^refs/lac/land/([1-9][0-9]{0,18})$")
CHECK_KEY = "lac.land.check"
CHECK_OUTPUT_LINES = 20
CRASH_ENV = "LAC_TEST_LANDER_CRASH"  # tests only: SIGKILL at the named point
LOCK_FILE = "lac-lander.lock"
LOG_FILE = "lac-lander.log"
MAX_ROUNDS = 1000  # a pass ends at the latest when every line was tried this often


def _git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> bytes:
    """:func:`~git_lacunari.repo.git` with an environment of its own (a
    private index, the lander's committer)."""
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=False)
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CannotWorkHere(message[0] if message else f"git {args[0]} failed")
    return proc.stdout


def queue_ref(task_id: int) -> str:
    return f"{QUEUE}{task_id}"


def queued(cwd: Path) -> dict[int, str]:
    """The queued lines here: task -> commit."""
    out = git("for-each-ref", "--format=%(refname) %(objectname)", QUEUE, cwd=cwd)
    lines: dict[int, str] = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        ref, _, commit = line.partition(" ")
        m = QUEUED.match(ref)
        if m:
            lines[int(m[1])] = commit
    return lines


def full_ref(cwd: Path, name: str) -> str:
    """The destination's ref (``main`` -> ``refs/heads/main``): the one the
    lander moves, so it must be a branch."""
    for candidate in (name, f"refs/heads/{name}"):
        try:
            out = git("rev-parse", "--symbolic-full-name", candidate, cwd=cwd)
        except CannotWorkHere:
            continue
        ref = out.decode("utf-8", "surrogateescape").strip()
        if ref.startswith("refs/heads/"):
            return ref
    raise InvalidInput(f"the destination {name!r} is not a branch here: the lander moves branches")


# --- the holder's side: hand the line over -------------------------------------


@dataclass(frozen=True)
class Remote:
    """Where a remote-tracking destination lives: ``origin/main``."""

    name: str
    branch: str


def remote_of(repo: Repo, dest: str) -> Remote | None:
    """The remote a destination like ``origin/main`` comes from; None for a
    local branch (the lander runs here)."""
    if repo.is_server or "/" not in dest:
        return None
    name, _, branch = dest.partition("/")
    remotes = git("remote", cwd=repo.toplevel).decode("utf-8", "surrogateescape").split()
    return Remote(name, branch) if name in remotes else None


def push_line(repo: Repo, remote: Remote, task_id: int, tip: str, agent: str) -> None:
    """Push the line to the server's queue ref, naming the pusher (a server
    that takes no push options is pushed to without). Without our pre-push:
    the queue lives only where the server's hooks are, and its pre-receive
    judges this push against the same board, so a second judge here would
    only cost a process and a board connection on every landing."""
    spec = f"+{tip}:{queue_ref(task_id)}"
    try:
        git(
            "push",
            "--quiet",
            "--no-verify",
            f"--push-option=lac.agent={agent}",
            remote.name,
            spec,
            cwd=repo.toplevel,
        )
    except CannotWorkHere as exc:
        if "push options" not in str(exc):
            raise
        git("push", "--quiet", "--no-verify", remote.name, spec, cwd=repo.toplevel)


def queue_here(repo: Repo, task_id: int, tip: str) -> None:
    git("update-ref", "-m", "git lac land", queue_ref(task_id), tip, cwd=repo.toplevel)


# --- the server's side: who may queue a line ------------------------------------


def check_queue_push(board: Board, refs: Sequence[Any], pusher: str | None) -> None:
    """The pre-receive's rule for ``refs/lac/land/*``: only the task's holder
    queues its line (or takes it out of the queue); a ref there that names no
    task is bad input. ``refs`` are the push's received refs."""
    for r in refs:
        if not r.ref.startswith(QUEUE):
            continue
        m = QUEUED.match(r.ref)
        if m is None:
            raise InvalidInput(f"{r.ref}: the landing queue takes refs/lac/land/TASK-ID only")
        task = board.show(int(m[1]))
        if task.state != TaskState.CLAIMED or task.owner is None or task.owner != pusher:
            raise NotOwner(
                agent=pusher or "an unnamed pusher",
                task=task.id,
                holder=task.owner,
                advice=f"only its holder queues its line ({r.ref})",
            )


def wake(repo: Repo) -> bool:
    """The server's post-receive: start a lander, detached, when a line is
    queued (the pusher is not held; the lander's lock makes them take turns,
    and each lands everything queued). Whether one was started."""
    if not queued(repo.git_dir):
        return False
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in ("GIT_QUARANTINE_PATH", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES")
    }
    env["GIT_DIR"] = str(repo.git_dir.resolve())
    try:
        log = open(repo.git_dir / LOG_FILE, "ab")  # noqa: SIM115 - the child's, closed below
    except OSError as exc:
        raise CannotWorkHere(f"cannot start the lander: {exc.strerror}") from exc
    with log:
        subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", "git_lacunari", "lander", "--once"],
            cwd=repo.git_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    return True


# --- the lander -------------------------------------------------------------------


@dataclass
class Outcome:
    """What one pass did: task ids landed, returned (with why), still waiting."""

    destination: str
    landed: list[int] = field(default_factory=list)
    returned: dict[int, dict[str, Any]] = field(default_factory=dict)
    waiting: list[int] = field(default_factory=list)
    batches: int = 0


@contextlib.contextmanager
def lander_lock(repo: Repo) -> Iterator[None]:
    """One lander at a time per repository: the others wait their turn."""
    path = repo.common_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise CannotWorkHere(f"cannot open the lander's lock {path}: {exc.strerror}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Line:
    task: Task
    commit: str
    paths: frozenset[str]


def run(board: Board, repo: Repo) -> Outcome:
    """One pass of the lander over this repository's queue (module doc)."""
    dest = destination(repo)
    if dest is None:
        raise InvalidInput(
            "no destination to land in: set lac.target (e.g. `git config lac.target main`)"
        )
    cwd = repo.toplevel
    ref = full_ref(cwd, dest)
    outcome = Outcome(dest)
    with lander_lock(repo):
        for _ in range(MAX_ROUNDS):
            if not _round(board, repo, dest, ref, outcome):
                break
    return outcome


def _round(board: Board, repo: Repo, dest: str, ref: str, outcome: Outcome) -> bool:
    """One batch; whether there may be more to do."""
    cwd = repo.toplevel
    lines = queued(cwd)
    if not lines:
        return False
    # The one rule for "it has landed": whatever the destination holds now
    # (a line landed before a crash, or pushed by hand) is settled, not merged.
    for s in settle(board, cwd, dest):
        outcome.landed.append(s.task.id)
    landing = {t.id: t for t in board.landing_claims()}
    head = commit_id(cwd, ref)
    if head is None:
        raise CannotWorkHere(f"the destination {dest} has no commit")
    live: dict[int, str] = {}
    for task_id, commit in lines.items():
        if task_id not in landing or is_ancestor(cwd, commit, head):
            _dequeue(cwd, task_id, commit)  # landed, released or returned: done with
        else:
            live[task_id] = commit
    if not live:
        return False
    ready, waiting = _in_order(board, cwd, live, landing)
    outcome.waiting = sorted(waiting)
    if not ready:
        return False
    batch: list[Line] = []
    used: set[str] = set()
    for task_id in ready:
        paths = _changed(cwd, head, live[task_id])
        if batch and paths & used:
            continue  # the next batch, merged onto this one's result
        batch.append(Line(landing[task_id], live[task_id], paths))
        used |= paths
    return _land_batch(board, repo, dest, ref, head, batch, outcome)


def _in_order(
    board: Board, cwd: Path, live: dict[int, str], landing: dict[int, Task]
) -> tuple[list[int], list[int]]:
    """The queued lines ready now, in the claim graph's order (then by task
    id), and those that wait: on a queued line they are built on, or on a
    task (``--after``) that is not done."""
    ready: list[int] = []
    waiting: list[int] = []
    for task_id in sorted(live):
        built_on = [
            other
            for other, tip in live.items()
            if other != task_id and tip != live[task_id] and is_ancestor(cwd, tip, live[task_id])
        ]
        deps = board.show(task_id).depends_on
        unmet = [d for d in deps if d.get("state") != TaskState.DONE]
        (waiting if built_on or unmet else ready).append(task_id)
    return ready, waiting


def _changed(cwd: Path, head: str, commit: str) -> frozenset[str]:
    """The files a line changed since it forked from the destination."""
    try:
        out = git("diff", "--name-only", "--no-renames", "-z", f"{head}...{commit}", cwd=cwd)
    except CannotWorkHere:  # no history in common: everything it has
        out = git("ls-tree", "-r", "--name-only", "-z", commit, cwd=cwd)
    return frozenset(p for p in out.decode("utf-8", "surrogateescape").split("\0") if p)


def _merge(cwd: Path, onto: str, line: Line) -> tuple[str | None, list[str]]:
    """``line`` merged onto ``onto``: the new commit, or None and the paths
    that conflict. No work tree, index or ref is touched."""
    if is_ancestor(cwd, onto, line.commit):
        return line.commit, []  # a fast-forward
    proc = subprocess.run(
        [
            "git",
            "merge-tree",
            "--write-tree",
            "-z",
            "--name-only",
            "--no-messages",
            onto,
            line.commit,
        ],
        cwd=cwd,
        capture_output=True,
        check=False,
    )
    fields = [f for f in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if f]
    if proc.returncode == 1:
        return None, sorted(set(fields[1:]))
    if proc.returncode != 0 or not fields:
        raise CannotWorkHere(
            f"git merge-tree failed: {proc.stderr.decode('utf-8', 'replace').strip()[:300]}"
        )
    task = line.task
    message = f"Land task #{task.id}: {task.title}\n\nLac-Task: {task.id}\n"
    out = _git(
        "commit-tree",
        fields[0],
        "-p",
        onto,
        "-p",
        line.commit,
        "-m",
        message,
        cwd=cwd,
        env=_committer(cwd),
    )
    return out.decode().strip(), []


def _committer(cwd: Path) -> dict[str, str] | None:
    """A server often has no user.name: the lander then commits as itself."""
    try:
        git("var", "GIT_COMMITTER_IDENT", cwd=cwd)
        return None
    except CannotWorkHere:
        who = {"NAME": "git lac lander", "EMAIL": "lander@git-lac.invalid"}
        return {
            **os.environ,
            **{f"GIT_{r}_{k}": v for r in ("AUTHOR", "COMMITTER") for k, v in who.items()},
        }


def _land_batch(
    board: Board,
    repo: Repo,
    dest: str,
    ref: str,
    head: str,
    batch: list[Line],
    outcome: Outcome,
) -> bool:
    cwd = repo.toplevel
    new = head
    merged: list[Line] = []
    for line in batch:
        result, conflicts = _merge(cwd, new, line)
        if result is None:
            _give_back(
                board, cwd, line, dest, {"reason": "conflict", "conflicts": conflicts}, outcome
            )
            continue
        new = result
        merged.append(line)
    if not merged:
        return True
    check = (repo.get(CHECK_KEY) or "").strip()
    if check:
        code, tail = run_check(cwd, new, check)
        if code != 0:
            if len(merged) > 1:  # which line? each alone, in order, next rounds
                return _land_batch(board, repo, dest, ref, head, merged[:1], outcome)
            detail = {"reason": "check", "check": check, "exit": code, "output": tail}
            _give_back(board, cwd, merged[0], dest, detail, outcome)
            return True
    if os.environ.get(CRASH_ENV) == "before-update-ref":
        os.kill(os.getpid(), signal.SIGKILL)
    why = "git lac land " + " ".join(f"#{ln.task.id}" for ln in merged)
    checked_out = _checked_out_at(cwd, ref)
    if checked_out is not None:
        if not _fast_forward_tree(checked_out, dest, head, new, why):
            return True  # the destination moved meanwhile: merged onto again next round
    else:
        try:
            git("update-ref", "-m", why, ref, new, head, cwd=cwd)
        except CannotWorkHere:
            return True  # the destination moved meanwhile: merged onto again next round
    outcome.batches += 1
    if os.environ.get(CRASH_ENV) == "after-update-ref":
        os.kill(os.getpid(), signal.SIGKILL)
    # The destination has the lines now: settle frees their locks (landing.py).
    for s in settle(board, cwd, dest):
        outcome.landed.append(s.task.id)
    for line in merged:
        _dequeue(cwd, line.task.id, line.commit)
    return True


def _checked_out_at(cwd: Path, ref: str) -> Path | None:
    """The work tree that has ``ref`` checked out, if any (a local flow whose
    destination is some worktree's branch; a server's bare repository has
    none)."""
    out = git("worktree", "list", "--porcelain", "-z", cwd=cwd).decode("utf-8", "surrogateescape")
    tree: str | None = None
    for field_ in out.split("\0"):
        if field_.startswith("worktree "):
            tree = field_[len("worktree ") :]
        elif field_ == f"branch {ref}" and tree is not None:
            return Path(tree)
    return None


def _fast_forward_tree(tree: Path, dest: str, head: str, new: str, why: str) -> bool:
    """Move a checked-out destination as git itself would: a fast-forward in
    its work tree, so that its index and files follow (moving the ref alone
    would leave them showing the landed work as undone). False when the
    branch moved meanwhile; refused when its uncommitted changes are in the
    way: the lines stay queued and nothing is lost."""
    current = git("rev-parse", "--verify", "-q", "HEAD", cwd=tree).decode().strip()
    if current != head:
        return False
    env = {**os.environ, "GIT_REFLOG_ACTION": why}
    proc = subprocess.run(
        ["git", "merge", "--ff-only", "--quiet", "--no-stat", new],
        cwd=tree,
        env=env,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CannotWorkHere(
            f"the destination {dest} is checked out in {tree}, whose uncommitted changes "
            f"are in the way ({said[0] if said else 'git merge --ff-only failed'}): commit "
            "or stash them there, then run `git lac lander --once`; the lines stay queued"
        )
    return True


def _give_back(
    board: Board, cwd: Path, line: Line, dest: str, why: dict[str, Any], outcome: Outcome
) -> None:
    detail = {"tip": line.commit, "destination": dest, **why}
    board.return_line(line.task, detail)
    outcome.returned[line.task.id] = detail
    _dequeue(cwd, line.task.id, line.commit)


def _dequeue(cwd: Path, task_id: int, commit: str) -> None:
    """Take a line out of the queue, unless it was queued again meanwhile."""
    with contextlib.suppress(CannotWorkHere):
        git("update-ref", "-d", queue_ref(task_id), commit, cwd=cwd)


def run_check(cwd: Path, commit: str, command: str) -> tuple[int, list[str]]:
    """``command`` (``sh -c``) in a temporary directory holding ``commit``'s
    tree (read-tree and checkout-index into a private index: no work tree of
    the repository is touched): its exit code and last lines of output."""
    with tempfile.TemporaryDirectory(prefix="lac-land-check-") as tmp:
        tree_dir = Path(tmp) / "tree"
        tree_dir.mkdir()
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        try:
            _git("read-tree", commit, cwd=cwd, env=env)
            # --work-tree: a server's repository is bare, and checkout-index
            # needs a work tree, here a temporary one.
            _git(f"--work-tree={tree_dir}", "checkout-index", "-a", "-f", cwd=cwd, env=env)
        except CannotWorkHere as exc:  # the check cannot run: the line is not checked
            return 127, [f"the merged tree could not be written for the check: {exc}"]
        clean = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        clean["LAC_LAND_COMMIT"] = commit
        proc = subprocess.run(
            ["sh", "-c", command],
            cwd=tree_dir,
            env=clean,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            check=False,
        )
        shutil.rmtree(tree_dir, ignore_errors=True)
    text = proc.stdout.decode("utf-8", "replace").splitlines()
    return proc.returncode, text[-CHECK_OUTPUT_LINES:]


def told(task: Task) -> str:
    """What the holder of a returned line is told, in one line."""
    why = task.returned or {}
    tip = str(why.get("tip", task.tip or ""))[:12]
    if why.get("reason") == "check":
        last = (why.get("output") or [""])[-1:]
        return (
            f"returned: task #{task.id} {task.title}: {why.get('check')!s} failed "
            f"(exit {why.get('exit')}) "
            f"on {tip} merged into {why.get('destination')}"
            + (f": {last[0]}" if last and last[0] else "")
            + f"; fix the line, then `git lac land {task.id}` again"
        )
    paths = ", ".join(str(p) for p in why.get("conflicts") or [])
    return (
        f"returned: task #{task.id} {task.title}: {tip} conflicts with "
        f"{why.get('destination')} in {paths}; "
        f"merge {why.get('destination')} into the line, then `git lac land {task.id}` again"
    )
