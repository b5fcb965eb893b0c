"""The guards the hooks run: refuse changes to paths another agent holds.

What changed is read with the ``git`` CLI, never libgit2: a hook may be
handed a temporary index (``git commit -a``, ``git commit PATH``) that only
``GIT_INDEX_FILE`` names, and git's own commands honour it.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from .board import Board
from .durations import format_duration
from .edge import Result
from .errors import (
    BoardBusy,
    BoardCorrupt,
    BoardFailed,
    BoardUnreachable,
    CannotWorkHere,
    InvalidInput,
    PathLocked,
)
from .model import Conflict
from .repo import Repo, git
from .session import Session

ZERO_OID = "0" * 40
OFFLINE_CHOICES = ("warn", "refuse")
ADVICE = (  # printed under a guard's refusal, for people
    "What now: wait for the holder to finish, ask them to release it, see who holds what "
    "with `git lac check PATH`, or skip the guard with --no-verify (the board then cannot "
    "warn anyone, and the collision surfaces later, for `git lac reconcile`)."
)


def _split_z(out: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def staged_paths(repo: Repo) -> list[str]:
    """Every path the commit being made changes: added, modified, deleted,
    type-changed, and both sides of a rename (renames are not paired, so each
    side is listed on its own)."""
    # Against HEAD; on an unborn branch git diffs against the empty tree itself.
    out = git(
        "diff",
        "--cached",
        "--name-only",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        cwd=repo.toplevel,
    )
    return _split_z(out)


def commit_paths(repo: Repo, commit: str) -> list[str]:
    """Paths a commit changes against each of its parents (a root: against nothing)."""
    out = git(
        "diff-tree",
        "-r",
        "-m",
        "--root",
        "--no-commit-id",
        "--name-only",
        "-z",
        "--no-renames",
        commit,
        cwd=repo.toplevel,
    )
    return sorted(set(_split_z(out)))


def offline_policy(repo: Repo, default: str) -> str:
    value = (repo.get("lac.guard.offline") or default).strip().lower()
    if value not in OFFLINE_CHOICES:
        raise InvalidInput(f"lac.guard.offline is {value!r}; use warn or refuse")
    return value


def describe(holding: Conflict, now: float) -> str:
    """Who holds it and how alive their claim is, aged on the board's clock."""
    lock = holding.lock
    if lock.task_id is not None:
        beat = format_duration(now - holding.heartbeat_at) if holding.heartbeat_at else "none"
        where = f"task #{lock.task_id}, heartbeat {beat} ago"
    else:
        where = f"no task, locked {format_duration(now - lock.acquired_at)} ago"
    return f"held by {lock.agent} ({lock.mode} lock {lock.pattern}, {where})"


def checked(
    hook: str, paths: int, *, skipped: bool = False, offline: bool = False
) -> dict[str, object]:
    """The JSON body of a guard that did not refuse."""
    return {"hook": hook, "checked": paths, "skipped": skipped, "offline": offline}


def _offline(policy: str, what: str, exc: BoardUnreachable) -> Result:
    hook = "pre-commit" if what == "commit" else "pre-push"
    if policy == "warn":
        return Result(
            checked(hook, 0, offline=True),
            warnings=[
                f"git lac: {exc.message}; {what} allowed unchecked (lac.guard.offline = warn)"
            ],
        )
    return Result(
        checked(hook, 0, offline=True),
        unfinished=f"{exc.message}; {what} refused "
        "(lac.guard.offline = refuse; LAC_GUARD=off skips the guard)",
    )


def _holdings(
    repo: Repo, open_board: Callable[[], Board], changed: list[str], what: str
) -> tuple[list[Conflict], float] | Result:
    """Other agents' locks on ``changed`` and the board's now, or the result
    when there is nothing to refuse or the board cannot be asked (offline: a
    commit is let through by default, a push refused)."""
    hook = "pre-commit" if what == "commit" else "pre-push"
    if not changed:
        return Result(checked(hook, 0))
    open_board = functools.cache(open_board)  # one board for the question and its clock
    policy = offline_policy(repo, "warn" if what == "commit" else "refuse")
    try:
        holdings = open_board().held_by_others(changed)
    except BoardUnreachable as exc:
        return _offline(policy, what, exc)
    except (BoardBusy, BoardCorrupt, BoardFailed) as exc:  # reached, but no answer: never "offline"
        exc.hint = f"git lac: {what} refused: the board did not answer, so nothing was checked"
        raise
    if not holdings:
        return Result(checked(hook, len(changed)))
    return holdings, open_board().now()


def guard_pre_commit(repo: Repo, open_board: Callable[[], Board]) -> Result:
    """Allowed (a Result), or refused: raises :class:`PathLocked`."""
    found = _holdings(repo, open_board, staged_paths(repo), "commit")
    if isinstance(found, Result):
        return found
    holdings, now = found
    paths = sorted({h.path for h in holdings})
    width = max(len(p) for p in paths)
    raise PathLocked(
        holdings,
        details=[
            f"git lac: commit refused: {len(paths)} staged path(s) held by another agent",
            *(f"  {h.path:<{width}}  {describe(h, now)}" for h in holdings),
            ADVICE,
        ],
    )


@dataclass
class PushedRef:
    local_ref: str
    local_oid: str
    remote_ref: str
    remote_oid: str


def parse_push_lines(text: str) -> list[PushedRef]:
    refs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.rsplit(maxsplit=3)
        if len(parts) != 4:
            raise InvalidInput(f"unexpected pre-push input line: {line!r}")
        refs.append(PushedRef(*parts))
    return refs


def _exists(repo: Repo, oid: str) -> bool:
    try:
        git("cat-file", "-e", f"{oid}^{{commit}}", cwd=repo.toplevel)
        return True
    except CannotWorkHere:
        return False


def commits_to_push(repo: Repo, remote: str, ref: PushedRef) -> list[str]:
    """Commits of ``ref`` that the remote does not have yet, as far as we know:
    not reachable from what it had for this ref, nor from any of its branches
    we have fetched. A deletion pushes nothing."""
    if ref.local_oid == ZERO_OID:
        return []
    exclude = [f"--remotes={remote}"]
    if ref.remote_oid != ZERO_OID and _exists(repo, ref.remote_oid):
        exclude.append(ref.remote_oid)
    out = git("rev-list", ref.local_oid, "--not", *exclude, cwd=repo.toplevel)
    return out.decode().split()


def framework_refs(env: dict[str, str]) -> tuple[str, list[tuple[str, list[str]]]] | None:
    """The push range the pre-commit framework hands its pre-push hooks (it
    keeps git's stdin to itself): the remote and one ``(ref, rev-list args)``."""
    remote = env.get("PRE_COMMIT_REMOTE_NAME")
    if not remote:
        return None
    local = env.get("PRE_COMMIT_LOCAL_BRANCH") or env.get("PRE_COMMIT_TO_REF") or "HEAD"
    to_ref, from_ref = env.get("PRE_COMMIT_TO_REF"), env.get("PRE_COMMIT_FROM_REF")
    if to_ref and from_ref:
        return remote, [(local, [f"{from_ref}..{to_ref}"])]
    # A push of a whole new history: every commit the remote lacks.
    return remote, [(local, [local, "--not", f"--remotes={remote}"])]


def guard_pre_push(
    repo: Repo,
    open_board: Callable[[], Board],
    remote: str | None,
    stdin_text: str | None,
    env: dict[str, str] | None = None,
) -> Result:
    """Allowed (a Result), or refused: raises :class:`PathLocked`."""
    plan: list[tuple[str, list[str]]] = []  # (ref, commits)
    framework = (
        framework_refs(dict(env if env is not None else os.environ)) if remote is None else None
    )
    if framework is not None:
        remote, ranges = framework
        for ref_name, args in ranges:
            plan.append((ref_name, git("rev-list", *args, cwd=repo.toplevel).decode().split()))
    else:
        if remote is None:
            raise InvalidInput("guard pre-push needs REMOTE URL (as git passes them)")
        for ref in parse_push_lines(stdin_text or ""):
            plan.append((ref.local_ref, commits_to_push(repo, remote, ref)))
    by_commit: list[tuple[str, str, list[str]]] = [
        (ref_name, commit, commit_paths(repo, commit))
        for ref_name, commits in plan
        for commit in commits
    ]
    changed = sorted({p for _, _, ps in by_commit for p in ps})
    found = _holdings(repo, open_board, changed, "push")
    if isinstance(found, Result):
        return found
    holdings, now = found
    held: dict[str, list[Conflict]] = {}
    for holding in holdings:
        held.setdefault(holding.path, []).append(holding)
    refused: list[Conflict] = []
    lines: list[str] = []
    for ref_name, commit, commit_changed in by_commit:
        for path in commit_changed:
            for holding in held.get(path, []):
                refused.append(dataclasses.replace(holding, ref=ref_name, commit=commit))
                lines.append(f"  {ref_name} {commit[:12]} {path}  {describe(holding, now)}")
    raise PathLocked(
        refused,
        details=[
            f"git lac: push refused: {len(refused)} change(s) to paths held by another agent",
            *lines,
            ADVICE,
        ],
    )


def guard_disabled(env: dict[str, str] | None = None) -> bool:
    value = (env if env is not None else os.environ).get("LAC_GUARD", "").strip().lower()
    return value in ("off", "0", "false", "no")


def read_stdin() -> str:
    return "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()


def run_guard(session: Session, hook: str, *, remote: str | None = None) -> Result:
    """One hook's guard, for the edge to render: a Result when allowed,
    :class:`PathLocked` raised when refused."""
    if guard_disabled():
        return Result(
            checked(hook, 0, skipped=True),
            warnings=[f"git lac: {hook} guard skipped (LAC_GUARD=off)"],
        )
    if hook == "pre-commit":
        return guard_pre_commit(session.repo, session.board)
    stdin_text = read_stdin() if remote is not None else None
    return guard_pre_push(session.repo, session.board, remote, stdin_text)
