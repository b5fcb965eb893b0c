"""The guards the hooks run: refuse changes to paths another agent holds.

What changed is read with the ``git`` CLI, never libgit2: a hook may be
handed a temporary index (``git commit -a``, ``git commit PATH``) that only
``GIT_INDEX_FILE`` names, and git's own commands honour it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .board import Board, Holding
from .durations import format_duration
from .errors import (
    EXIT_OK,
    EXIT_REFUSED,
    BoardBusy,
    BoardCorrupt,
    BoardFailed,
    BoardUnreachable,
    CannotWorkHere,
    InvalidInput,
)
from .repo import Repo, git
from .session import Session

ZERO_OID = "0" * 40
OFFLINE_CHOICES = ("warn", "refuse")
ADVICE = (
    "What now: wait for the holder to finish, ask them to release it, see who holds what "
    "with `git lac check PATH`, or skip the guard with --no-verify (the board then cannot "
    "warn anyone, and the collision surfaces later, for `git lac reconcile`)."
)


@dataclass
class Outcome:
    exit_code: int
    refused: list[dict[str, object]] = field(default_factory=list)
    warning: str | None = None


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


def describe(holding: Holding, now: float) -> str:
    lock = holding.lock
    kind = "write" if lock.mode == "w" else "read"
    if lock.task_id is not None:
        beat = format_duration(now - holding.heartbeat_at) if holding.heartbeat_at else "none"
        where = f"task #{lock.task_id}, heartbeat {beat} ago"
    else:
        where = f"no task, locked {format_duration(now - lock.acquired_at)} ago"
    return f"held by {lock.agent} ({kind} lock {lock.pattern}, {where})"


def holding_json(holding: Holding, **extra: object) -> dict[str, object]:
    return {
        "path": holding.path,
        "holder": holding.lock.agent,
        "task": holding.lock.task_id,
        "pattern": holding.lock.pattern,
        "mode": holding.lock.mode,
        "heartbeat_at": holding.heartbeat_at,
        **extra,
    }


def _offline(policy: str, what: str, exc: BoardUnreachable) -> Outcome:
    if policy == "warn":
        return Outcome(
            EXIT_OK,
            warning=f"git lac: {exc.message}; {what} allowed unchecked (lac.guard.offline = warn)",
        )
    return Outcome(
        EXIT_REFUSED,
        warning=f"git lac: {exc.message}; {what} refused "
        "(lac.guard.offline = refuse; LAC_GUARD=off skips the guard)",
    )


def _holdings(
    repo: Repo, open_board: Callable[[], Board], changed: list[str], what: str
) -> list[Holding] | Outcome:
    """Other agents' locks on ``changed``, or the outcome when there is nothing
    to refuse or the board cannot be asked (offline: a commit is let through
    by default, a push refused)."""
    if not changed:
        return Outcome(EXIT_OK)
    policy = offline_policy(repo, "warn" if what == "commit" else "refuse")
    try:
        holdings = open_board().held_by_others(changed)
    except BoardUnreachable as exc:
        return _offline(policy, what, exc)
    except (BoardBusy, BoardCorrupt, BoardFailed) as exc:  # reached, but no answer: never "offline"
        return Outcome(exc.exit_code, warning=f"git lac: {exc.message}; {what} refused")
    return holdings or Outcome(EXIT_OK)


def guard_pre_commit(
    repo: Repo, open_board: Callable[[], Board], echo: Callable[[str], None]
) -> Outcome:
    holdings = _holdings(repo, open_board, staged_paths(repo), "commit")
    if isinstance(holdings, Outcome):
        return holdings
    now = time.time()
    paths = sorted({h.path for h in holdings})
    echo(f"git lac: commit refused: {len(paths)} staged path(s) held by another agent")
    width = max(len(p) for p in paths)
    for holding in holdings:
        echo(f"  {holding.path:<{width}}  {describe(holding, now)}")
    echo(ADVICE)
    return Outcome(EXIT_REFUSED, refused=[holding_json(h) for h in holdings])


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
    echo: Callable[[str], None],
    remote: str | None,
    stdin_text: str | None,
    env: dict[str, str] | None = None,
) -> Outcome:
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
    holdings = _holdings(repo, open_board, changed, "push")
    if isinstance(holdings, Outcome):
        return holdings
    held: dict[str, list[Holding]] = {}
    for holding in holdings:
        held.setdefault(holding.path, []).append(holding)
    now = time.time()
    refused: list[dict[str, object]] = []
    lines: list[str] = []
    for ref_name, commit, commit_changed in by_commit:
        for path in commit_changed:
            for holding in held.get(path, []):
                refused.append(holding_json(holding, ref=ref_name, commit=commit))
                lines.append(f"  {ref_name} {commit[:12]} {path}  {describe(holding, now)}")
    echo(f"git lac: push refused: {len(refused)} change(s) to paths held by another agent")
    for line in lines:
        echo(line)
    echo(ADVICE)
    return Outcome(EXIT_REFUSED, refused=refused)


def guard_disabled(env: dict[str, str] | None = None) -> bool:
    value = (env if env is not None else os.environ).get("LAC_GUARD", "").strip().lower()
    return value in ("off", "0", "false", "no")


def read_stdin() -> str:
    return "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def run_guard(
    session: Session, hook: str, *, remote: str | None = None, as_json: bool = False
) -> int:
    """Run one hook's guard and report it: lines on stderr, with ``as_json``
    one object on stdout. Returns the exit code."""
    if guard_disabled():
        _stderr(f"git lac: {hook} guard skipped (LAC_GUARD=off)")
        outcome = Outcome(EXIT_OK)
    elif hook == "pre-commit":
        outcome = guard_pre_commit(session.repo, session.board, _stderr)
    else:
        stdin_text = read_stdin() if remote is not None else None
        outcome = guard_pre_push(session.repo, session.board, _stderr, remote, stdin_text)
    if outcome.warning:
        _stderr(outcome.warning)
    if as_json:
        report = {
            "ok": outcome.exit_code == 0,
            "refused": outcome.refused,
            "warning": outcome.warning,
            "skipped": guard_disabled(),
        }
        print(json.dumps(report, sort_keys=True))
    return outcome.exit_code
