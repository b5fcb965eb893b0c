"""Landing: has a claim's work reached the destination (``lac.target``)?

A lock protects work until the work has landed, not until its worker says
``done``. Work has landed when the destination contains it, in one of three
ways, tried in this order (each is git's own view, read with the git CLI):

1. **merged**: the claim's tip is an ancestor of the destination
   (``git merge-base --is-ancestor``): a fast-forward, a merge commit, the
   merge of a pull request;
2. **rebased**: every commit of the claim's line has a commit with the same
   patch in the destination (``git cherry``, by patch id): a rebase or a
   cherry-pick of each commit;
3. **named**: a commit the destination gained since the line forked names
   the task on a line of its message, ``Lac-Task: N`` (a trailer, or the
   indented copy ``git merge --squash`` writes of the squashed commits'
   messages). The ``commit-msg`` hook (``git lac hooks install``) adds the
   trailer to every commit made on a claim's branch, and a rebase, a
   cherry-pick, ``git am`` and a squash merge all keep the messages: so the
   work is known where its original tip never was (a server that receives
   only the rebased or squashed commits; a keeper's clone). Reported as
   *rebased* when two commits or more name the task, else *squashed*. Where
   the line is here, every file it changed must have changed in the
   destination too (one of its commits cherry-picked is not the line).

The first two need the original tip (the one the board recorded) here. When
it is not, only the third is asked, of the commits a push just brought (the
server's post-receive), else of the destination's commits made since the
claim was (``git log --since``, by committer date: a rebase and a squash
commit anew).

Anything else (a squash whose message names no task, a partial cherry-pick
of commits made without the hook, a rewrite) has not landed: the locks stay
until the claim is released explicitly, or its holder is silent for the
board's landing period. Where the line is not here, it lands with its
first commit that reaches the destination named: a fleet that lands lines in
parts should land them merged.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import CannotWorkHere, InvalidInput, LacError
from .model import Conflict, LockMode, Task
from .repo import Repo, git, server_root
from .rules import LandingLine

if TYPE_CHECKING:
    from .board import Board

TRAILER = "Lac-Task"
# A line of a commit message that names a task: the trailer, also indented.
NAMES = re.compile(rf"^[ \t]*{TRAILER}[ \t]*:[ \t]*#?([0-9]+)[ \t]*$", re.IGNORECASE | re.MULTILINE)


class LandedBy(StrEnum):
    """How a line of work reached the destination."""

    MERGED = "merged"
    REBASED = "rebased"
    SQUASHED = "squashed"


def commit_id(cwd: Path, rev: str) -> str | None:
    """The commit ``rev`` names here, or None when this repository lacks it."""
    try:
        out = git("rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}", cwd=cwd)
    except CannotWorkHere:
        return None
    return out.decode().strip() or None


def is_ancestor(cwd: Path, tip: str, target: str) -> bool:
    """Whether ``target`` contains ``tip`` (False too when either is not here)."""
    try:
        git("merge-base", "--is-ancestor", tip, target, cwd=cwd)
    except CannotWorkHere:  # exit 1: not an ancestor
        return False
    return True


def _every_patch_upstream(cwd: Path, tip: str, target: str) -> bool:
    """``git cherry``: each commit of ``tip`` not in ``target`` is listed
    with ``-`` when an equivalent patch is in ``target``, ``+`` when not."""
    out = git("cherry", target, tip, cwd=cwd).decode().split("\n")
    marks = [line[:1] for line in out if line]
    return bool(marks) and all(mark == "-" for mark in marks)


def naming(cwd: Path, task_id: int, *log_args: str, commits: Sequence[str] = ()) -> int:
    """How many commits name ``task_id`` (:data:`NAMES`): those ``git log
    log_args`` lists, or ``commits`` (at most 10,000 read either way)."""
    return len(naming_commits(cwd, task_id, *log_args, commits=commits))


def naming_commits(
    cwd: Path, task_id: int, *log_args: str, commits: Sequence[str] = ()
) -> list[str]:
    """The commits of :func:`naming` that name ``task_id``."""
    if commits:
        log_args = ("--no-walk=unsorted", "--stdin")
    out = git(
        "log",
        "--max-count=10000",
        "--format=%H%n%B%x00",
        *log_args,
        cwd=cwd,
        input="".join(f"{c}\n" for c in commits).encode() if commits else None,
    )
    wanted = str(task_id)
    found: list[str] = []
    for entry in out.decode("utf-8", "replace").split("\0"):
        commit, _, message = entry.lstrip("\n").partition("\n")
        if commit and any(n.lstrip("0") == wanted for n in NAMES.findall(message)):
            found.append(commit)
    return found


def _named(count: int) -> LandedBy | None:
    if count == 0:
        return None
    return LandedBy.REBASED if count > 1 else LandedBy.SQUASHED


def landed(cwd: Path, target: str, tip: str, task_id: int) -> LandedBy | None:
    """How the work ending at ``tip`` (a claim on task ``task_id``) reached
    ``target``, or None while it has not (or either commit is not here)."""
    target_id, tip_id = commit_id(cwd, target), commit_id(cwd, tip)
    if target_id is None or tip_id is None:
        return None
    if is_ancestor(cwd, tip_id, target_id):
        return LandedBy.MERGED
    if _every_patch_upstream(cwd, tip_id, target_id):
        return LandedBy.REBASED
    count = naming(cwd, task_id, target_id, "--not", tip_id)
    return _named(count) if count and _covered(cwd, tip_id, target_id) else None


def _covered(cwd: Path, tip: str, target: str) -> bool:
    """Every file the line changed since it forked, the destination changed
    too: a line named in part (one of its commits cherry-picked) is not in."""
    try:
        line, dest = (
            set(git("diff", "--name-only", "--no-renames", "-z", span, cwd=cwd).split(b"\0"))
            for span in (f"{target}...{tip}", f"{tip}...{target}")
        )
    except CannotWorkHere:  # no history in common
        return False
    return line <= dest


# --- where the work should land, and where each claim stands ------------------

# Tried in this order when lac.target is not set: the remote's default branch
# (origin/HEAD, which `git clone` records), its main or master, then the local
# main or master (a repository without a remote).
DEFAULT_TARGETS = (
    "refs/remotes/origin/HEAD",
    "refs/remotes/origin/main",
    "refs/remotes/origin/master",
    "refs/heads/main",
    "refs/heads/master",
)


def destination(repo: Repo) -> str | None:
    """The destination here: ``lac.target`` (refused when it names no commit
    here: a setting that is wrong is said, never guessed around), else the
    first of :data:`DEFAULT_TARGETS` that exists; on a server
    :func:`~git_lacunari.repo.server_root` (``lac.target`` as a branch, else
    the HEAD branch, main or master). None: there is none."""
    configured = repo.get("lac.target")
    if repo.is_server:  # a server's one rule
        root = server_root(repo)
        if root is not None and root.commit is not None:
            return short_ref(root.ref)
        if configured:
            raise InvalidInput(
                f"lac.target {configured[:200]!r} names no branch with a commit in this "
                "repository (`git config lac.target BRANCH`, e.g. main)"
            )
        return None
    if configured:
        for name in (configured, f"refs/heads/{configured}"):
            if commit_id(repo.toplevel, name) is not None:
                return name
        raise InvalidInput(
            f"lac.target {configured[:200]!r} names no commit in this repository "
            "(`git config lac.target BRANCH`, e.g. origin/main)"
        )
    # One git process for every candidate: the refs that exist, in any order.
    out = git("for-each-ref", "--format=%(refname)", *DEFAULT_TARGETS, cwd=repo.toplevel)
    found = set(out.decode("utf-8", "surrogateescape").split())
    for name in DEFAULT_TARGETS:
        if name in found and commit_id(repo.toplevel, name) is not None:
            return short_ref(name)
    return None


def short_ref(name: str) -> str:
    for prefix in ("refs/remotes/", "refs/heads/"):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def current_branch(cwd: Path) -> str | None:
    """The branch checked out here (None: a detached HEAD)."""
    try:
        out = git("symbolic-ref", "-q", "--short", "HEAD", cwd=cwd)
    except CannotWorkHere:
        return None
    return out.decode("utf-8", "surrogateescape").strip() or None


def where_claims_stand(
    cwd: Path,
    claims: Sequence[tuple[int, str | None, str | None]],
    avoid: Collection[str] = (),
) -> list[tuple[int, str | None, str]]:
    """For each claim ``(task, branch, tip)`` as recorded: its branch's tip
    here, or, for a claim that has no branch yet, the current branch's
    unless that is one of ``avoid`` (another agent's line: the claim's work
    goes on a branch of its own); only those that moved. A
    branch this clone lacks is left as it was."""
    here = current_branch(cwd)
    moved: list[tuple[int, str | None, str]] = []
    tips: dict[str, str | None] = {}  # one git process per branch, not per claim
    for task, branch, tip in claims:
        name = branch or (here if here not in avoid else None)
        if name is None:
            continue
        if name not in tips:
            tips[name] = commit_id(cwd, f"refs/heads/{name}")
        now = tips[name]
        if now is not None and (now != tip or branch is None):
            moved.append((task, recordable(name), now))
    return moved


def recordable(branch: str | None) -> str | None:
    """``branch`` if the board can record it, else None: a name git allows
    but the board does not show (a control or bidi character) is followed
    by its tip alone, never a reason for `done` or a heartbeat to fail."""
    from .board.validate import validate_branch

    try:
        return validate_branch(branch)
    except InvalidInput:
        return None


def track(board: Board, repo: Repo) -> list[int]:
    """Tell the board where our claims here stand (claim, heartbeat, hooks)."""
    return [task for task, _, _ in track_moves(board, repo)]


def track_moves(board: Board, repo: Repo) -> list[tuple[int, str | None, str]]:
    """:func:`track`, answering with each claim that moved: ``(task, branch,
    tip)`` as the board now records it (so a caller needs no second read)."""
    tracked = board.claim_tracks_landing()
    claims = [(task, branch, tip) for task, branch, tip, _ in tracked]
    landing = {task: tip for task, _, tip, is_landing in tracked if is_landing and tip}
    avoid: set[str] = set()
    if any(branch is None for _, branch, _ in claims):
        # Not yet on a branch: not bound to a line another agent's claim
        # records, nor to a landing line of our own (claim --next may be run
        # there, before the claimer starts a branch of its own from it), nor
        # to a branch with no work beyond the destination (a claim made on
        # main binds where its first commit goes): else `done` would judge
        # another line's work, or the destination's, as this claim's.
        live = board.live_claims()
        avoid = {t.branch for t in live if t.branch and (t.owner != board.agent or t.landing)}
        ours = {t.branch for t in live if t.branch and t.owner == board.agent and not t.landing}
        here = current_branch(repo.toplevel)
        if here is not None and here not in avoid and _nothing_beyond_destination(repo):
            avoid.add(here)
        unbound = {task for task, branch, _ in claims if branch is None}
        if here is not None and here not in avoid and (len(unbound) > 1 or here in ours):
            # Several claims of ours on no branch yet, or a branch another
            # claim of ours works on: each binds where a commit changes a
            # path it holds, not all to the first branch.
            claims = _touched_by_head(board, repo, claims, unbound)
    moved = where_claims_stand(repo.toplevel, claims, avoid)
    # A landing claim's tip only moves forward (new commits on its line, a
    # merge): a branch reset or reused elsewhere would make its finished
    # work look landed, or another work its own. A rebase keeps the tip it
    # had: the rebased line lands by its patches or its trailers.
    moved = [
        m for m in moved if m[0] not in landing or is_ancestor(repo.toplevel, landing[m[0]], m[2])
    ]
    taken = set(board.track(moved))
    return [m for m in moved if m[0] in taken]


def _touched_by_head(
    board: Board,
    repo: Repo,
    claims: list[tuple[int, str | None, str | None]],
    unbound: set[int],
) -> list[tuple[int, str | None, str | None]]:
    """``claims`` but the ``unbound`` ones HEAD's commit changes no path of."""
    from .paths import covers

    try:
        out = git(
            "diff-tree",
            "--no-commit-id",
            "--root",
            "-r",
            "--name-only",
            "-z",
            "HEAD",
            cwd=repo.toplevel,
        )
    except CannotWorkHere:  # no commit yet: none of them binds here
        out = b""
    touched = [f for f in out.decode("utf-8", "surrogateescape").split("\0") if f]
    hit = {
        lock.task_id
        for lock in board.locks(mine=True)
        if lock.task_id in unbound
        and any(covers(lock.pattern, f, repo.ignorecase) for f in touched)
    }
    return [c for c in claims if c[0] not in unbound or c[0] in hit]


def _nothing_beyond_destination(repo: Repo) -> bool:
    """Whether HEAD is in the destination (a destination that cannot be
    named, or no HEAD: False, bind as before)."""
    try:
        dest = destination(repo)
    except LacError:
        return False
    head = commit_id(repo.toplevel, "HEAD")
    return dest is not None and head is not None and is_ancestor(repo.toplevel, head, dest)


# --- done, and the checks that settle a landing -----------------------------------


@dataclass(frozen=True)
class Finished:
    """What ``done`` did: ``task`` is done (``how`` it already was in the
    destination, or None when checked no destination), or landing."""

    task: Task
    destination: str | None
    how: LandedBy | None
    landing: bool


def finish(board: Board, repo: Repo, task_id: int) -> Finished:
    """``done`` without ``--now``: done when the claim's work is in the
    destination (or there is no destination to wait for), else landing."""
    dest = destination(repo)
    mine = {t: (b, tip, landing) for t, b, tip, landing in board.claim_tracks_landing()}
    if dest is None or task_id not in mine:  # no destination; or done refuses it, as before
        return Finished(board.done(task_id), dest, None, False)
    branch, recorded, landing = mine[task_id]
    branch = branch or current_branch(repo.toplevel)
    tip = (commit_id(repo.toplevel, f"refs/heads/{branch}") if branch else None) or recorded
    if tip is None:
        tip = commit_id(repo.toplevel, "HEAD")
    # done again: a landing tip only moves forward (track_moves), never back
    # to the destination or onto other work.
    if (
        landing
        and recorded
        and tip != recorded
        and (tip is None or not is_ancestor(repo.toplevel, recorded, tip))
    ):
        tip = recorded
    if tip is None:  # no commit at all: nothing to land
        return Finished(board.done(task_id), dest, None, False)
    how = landed(repo.toplevel, dest, tip, task_id)
    if how is not None:
        return Finished(board.done(task_id), dest, how, False)
    return Finished(board.land(task_id, branch=recordable(branch), tip=tip), dest, None, True)


@dataclass(frozen=True)
class Settled:
    task: Task
    how: LandedBy


def settle(board: Board, cwd: Path, dest: str, *, received: Sequence[str] = ()) -> list[Settled]:
    """Every landing claim whose work is in ``dest`` here: done, locks freed.
    A claim whose tip this repository lacks has landed when commits name its
    task: of ``received`` (the commits a push just brought: a server's
    post-receive), else of those ``dest`` gained since the claim was made."""
    settled: list[Settled] = []
    for task in board.landing_claims():
        if task.tip is None:
            continue
        how = landed(cwd, dest, task.tip, task.id)
        if how is None and commit_id(cwd, task.tip) is None:
            named = _naming_unseen(cwd, dest, task, received)
            if named and _change_what_it_holds(board, cwd, task, named):
                how = _named(len(named))
        if how is not None and board.settle_landed(task, how) is not None:
            settled.append(Settled(task, how))
    return settled


def _naming_unseen(cwd: Path, dest: str, task: Task, received: Sequence[str]) -> list[str]:
    if received:
        return naming_commits(cwd, task.id, commits=received)
    if task.claimed_at is None or commit_id(cwd, dest) is None:
        return []
    return naming_commits(cwd, task.id, f"--since=@{int(task.claimed_at)}", dest)


def _change_what_it_holds(board: Board, cwd: Path, task: Task, commits: Sequence[str]) -> bool:
    """Whether the commits naming a landing claim's task change a path its
    kept write locks hold (a claim that holds none: yes). A trailer alone,
    on a commit of other files, lands nothing: anyone can write one."""
    from .paths import covers

    held = [lk.pattern for lk in board.held_by_task(task.id) if lk.mode == LockMode.WRITE]
    if not held:
        return True
    # Each against its first parent only: a merge (`-s ours` of an unrelated
    # history) changes nothing of the destination's, whatever it brings.
    parents = git(
        "log",
        "--no-walk=unsorted",
        "--stdin",
        "--format=%H %P",
        cwd=cwd,
        input="".join(f"{c}\n" for c in commits).encode(),
    )
    pairs = [" ".join(line.split()[:2]) for line in parents.decode().splitlines() if line]
    out = git(
        "diff-tree",
        "--stdin",
        "--no-commit-id",
        "--root",
        "-r",
        "--name-only",
        "-z",
        cwd=cwd,
        input="".join(f"{pair}\n" for pair in pairs).encode(),
    )
    changed = {f for f in out.decode("utf-8", "surrogateescape").split("\0") if f}
    ignorecase = board.ignorecase
    return any(covers(pattern, path, ignorecase) for pattern in held for path in changed)


def fetch_destination(repo: Repo, dest: str) -> None:
    """``git fetch`` the remote a remote-tracking destination comes from."""
    remote = dest.split("/", 1)[0]
    remotes = git("remote", cwd=repo.toplevel).decode().split()
    if "/" in dest and remote in remotes:
        git("fetch", "--quiet", remote, cwd=repo.toplevel)


def landing_lines(
    repo: Repo, holdings: Sequence[Conflict]
) -> tuple[dict[str, list[LandingLine]], dict[str, list[LandingLine]]]:
    """Of the landing claims' locks among ``holdings`` (issue 25, stacking),
    by tip: the lines HEAD is built on (their locks do not refuse it, and the
    board grants beside them), and those it could build on (the tip is in
    this clone, not in HEAD). Several landing claims may share one tip (two
    claims finished on one branch): one line each. Git is asked only when a
    landing claim holds one of the paths."""
    tasks: dict[str, set[int]] = {}
    for h in holdings:
        if h.landing_tip and h.lock.task_id is not None:
            tasks.setdefault(h.landing_tip, set()).add(h.lock.task_id)
    if not tasks:
        return {}, {}
    head = commit_id(repo.toplevel, "HEAD")
    here = set(present(repo.toplevel, sorted(tasks)))
    built_on: dict[str, list[LandingLine]] = {}
    build_on: dict[str, list[LandingLine]] = {}
    for tip, ids in tasks.items():
        if tip not in here:
            continue
        lines = [LandingLine(task, None, tip, ()) for task in sorted(ids)]
        if head is not None and is_ancestor(repo.toplevel, tip, head):
            built_on[tip] = lines
        else:
            build_on[tip] = lines
    return built_on, build_on


def every_line(by_tip: dict[str, list[LandingLine]]) -> list[LandingLine]:
    """The lines of :func:`landing_lines`, by task."""
    return sorted((line for lines in by_tip.values() for line in lines), key=lambda ln: ln.task)


def steering_facts(board: Board, repo: Repo) -> tuple[list[str], list[LandingLine]]:
    """What ``claim --next`` steers by (:func:`rules.steer`): the paths other
    agents' live claims change (the paths they declared, and the files their
    branches' commits not in the destination change), and the landing lines
    a claim could start from, each with the paths it changed (its declared
    write paths, and the files of its commits not in the destination): our
    own, and (stacking) other agents' whose tips this clone has. Another's
    landing line whose tip is not here cannot be built on: its paths are
    busy and its locks refuse. Observed only from the tips the board
    recorded and this clone has. Three git processes for the claims in
    work however many, one more per landing line."""
    live = board.live_claims()
    tips = sorted({t.tip for t in live if t.tip})
    dest = destination(repo) if tips else None
    here = set(present(repo.toplevel, tips)) if dest is not None else set()
    lines = [t for t in live if t.landing and (t.owner == board.agent or t.tip in here)]
    built_on = {t.id for t in lines}
    others = [t for t in live if t.owner != board.agent and t.id not in built_on]
    busy = {p.pattern for t in others for p in t.paths}
    busy.update(_changed(repo, sorted(here & {t.tip for t in others if t.tip}), dest))
    own = [
        LandingLine(
            t.id,
            t.branch,
            t.tip,
            tuple(
                sorted(
                    {p.pattern for p in t.paths if p.mode == LockMode.WRITE}
                    | set(_changed(repo, [t.tip] if t.tip in here else [], dest))
                )
            ),
            holder=None if t.owner == board.agent else t.owner,
        )
        for t in lines
    ]
    return sorted(busy), own


def _changed(repo: Repo, tips: Sequence[str], dest: str | None) -> list[str]:
    """The files the commits of ``tips`` not in ``dest`` change."""
    if not tips or dest is None:
        return []
    out = git(
        "log",
        "--no-renames",
        "--name-only",
        "--format=",
        "-z",
        *tips,
        "--not",
        dest,
        cwd=repo.toplevel,
    )
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p.strip()]


def present(cwd: Path, commits: Sequence[str]) -> list[str]:
    """Those of ``commits`` this repository has, in one git process."""
    if not commits:
        return []
    out = git(
        "cat-file",
        "--batch-check=%(objectname) %(objecttype)",
        cwd=cwd,
        input="".join(f"{c}\n" for c in commits).encode(),
    )
    return [line.split()[0] for line in out.decode().splitlines() if line.endswith(" commit")]
