"""Landing: has a claim's work reached the destination (``lac.target``)?

A lock protects work until the work has landed, not until its worker says
``done``. This module is the one rule, asked by ``done``, ``drain``,
``sweep``, the keeper and the server's post-receive (:func:`landed_here`;
each is git's own view, read with the git CLI).

**Where the line is here** (the worker's clone; a server that received the
branch): the line is the commits of the claim's tip not in the destination
(merges left out), and the claim lands only when every one of them is in
the destination, each

- by ancestry (the tip an ancestor: all of them, ``merged``);
- by patch id: a destination commit made since the line forked, with the
  same ``git patch-id --stable`` (of its changes to the line's files);
- or inside a squash: the line's commits with no twin, cut into runs of
  consecutive commits, each run's combined diff contained in one
  destination commit's diff (:func:`_squashes` says "contained" exactly:
  every line the run adds, the commit adds; every line it removes, the
  commit removes; every file it makes, deletes or changes the mode of, the
  commit does too), and the destination names the task (``Lac-Task: N``,
  below) on a commit since the line forked: a commit of someone else's
  that happens to add the same few lines lands nothing.

One commit of a line cherry-picked never settles it, whatever its message
says. The label (:func:`_label`): *merged* (the tip is an ancestor),
*squashed* (a squash holds two commits of the line or more, or one under a
message that is not its own), *cherry-picked* (every commit has its twin,
but not in the line's order, or a twin says ``cherry picked from commit``,
as ``git cherry-pick -x`` writes), else *rebased* (each commit copied in
order, or a one-commit line copied with its conflicts resolved).

**Where the line is not here** (a server that received only the rebased or
squashed commits; a keeper's clone), the task's name travels with the work:
the ``commit-msg`` hook (``git lac hooks install``) adds a ``Lac-Task: N``
trailer to every commit made on a claim's branch, and a rebase, a
cherry-pick, ``git am`` and a squash merge keep the messages. The commits a
push just brought (the server's post-receive), else those the destination
gained since the claim was made (``git log --since``, by committer date),
that name the task and change a path its write locks hold land it, labelled
by their messages (:func:`_named_how`). A fleet that lands lines in parts
should land them where the line is known, or merged.

Anything else has not landed: the locks stay until the claim is released
explicitly, or its holder is silent for the board's landing period.
"""

from __future__ import annotations

import re
from collections import Counter
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
    """How a line of work reached the destination (:func:`landed`)."""

    MERGED = "merged"
    REBASED = "rebased"
    CHERRY_PICKED = "cherry-picked"
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


def naming(cwd: Path, task_id: int, *log_args: str, commits: Sequence[str] = ()) -> int:
    """How many commits name ``task_id`` (:data:`NAMES`): those ``git log
    log_args`` lists, or ``commits`` (at most 10,000 read either way)."""
    return len(naming_commits(cwd, task_id, *log_args, commits=commits))


def naming_commits(
    cwd: Path, task_id: int, *log_args: str, commits: Sequence[str] = ()
) -> list[str]:
    """The commits of :func:`naming` that name ``task_id``."""
    return [c for c, _ in _naming_messages(cwd, task_id, *log_args, commits=commits)]


def _naming_messages(
    cwd: Path, task_id: int, *log_args: str, commits: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """:func:`naming_commits`, each with its message."""
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
    found: list[tuple[str, str]] = []
    for entry in out.decode("utf-8", "replace").split("\0"):
        commit, _, message = entry.lstrip("\n").partition("\n")
        if commit and _names(message, wanted):
            found.append((commit, message))
    return found


def _names(message: str, wanted: str) -> int:
    """How many lines of ``message`` name task ``wanted``."""
    return sum(n.lstrip("0") == wanted for n in NAMES.findall(message))


# `git merge --squash` begins its message so; `git cherry-pick -x` ends one so.
SQUASH_MESSAGE = "Squashed commit of the following:"
PICKED_MARK = re.compile(r"^\(cherry picked from commit [0-9a-f]{7,64}\)$", re.MULTILINE)
NAMED_INDENTED = re.compile(rf"^[ \t]+{TRAILER}[ \t]*:", re.IGNORECASE | re.MULTILINE)


def _named_how(task_id: int, named: Sequence[tuple[str, str]]) -> LandedBy | None:
    """How the commits naming a task landed it, where its line is not here:
    read from their messages alone. A commit whose message shows a squash
    (it names the task on an indented line, as `git merge --squash` copies
    the messages; or more than once, several messages in one; or begins as
    `git merge --squash` writes) is a squash; else each is taken as a copy
    of one commit of the line (a rebase keeps each message), cherry-picked
    when one says so (`git cherry-pick -x`). A squash whose message was
    written anew with one trailer cannot be told from a rebased one-commit
    line here: it is reported rebased, as its patch would be."""
    if not named:
        return None
    wanted = str(task_id)
    for _, message in named:
        if (
            message.startswith(SQUASH_MESSAGE)
            or _names(message, wanted) > 1
            or NAMED_INDENTED.search(message)
        ):
            return LandedBy.SQUASHED
    if any(PICKED_MARK.search(message) for _, message in named):
        return LandedBy.CHERRY_PICKED
    return LandedBy.REBASED


def landed(cwd: Path, target: str, tip: str, task_id: int) -> LandedBy | None:
    """How the work ending at ``tip`` (a claim on task ``task_id``) reached
    ``target``, or None while it has not (or either commit is not here).

    The one rule where the line is here (the module's docstring): merged
    when ``tip`` is an ancestor of ``target``; else every commit of the
    line not in ``target`` by ancestry must be there by its patch
    (:func:`_twins`) or inside a squash (:func:`_squashes`), and then the
    label says which (:func:`_label`)."""
    target_id, tip_id = commit_id(cwd, target), commit_id(cwd, tip)
    if target_id is None or tip_id is None:
        return None
    if is_ancestor(cwd, tip_id, target_id):
        return LandedBy.MERGED
    try:
        line = _patch_ids(cwd, [tip_id, "--not", target_id], ())
        if not line:  # every commit of it is in by ancestry (the merges alone are not)
            return LandedBy.MERGED
        paths = _line_paths(cwd, target_id, tip_id)
        dest = _patch_ids(cwd, [target_id, "--not", tip_id], paths)
    except CannotWorkHere:  # no history in common, or a commit git cannot read
        return None
    twins = _twins(line, dest)
    rest = [n for n, c in enumerate(line) if c.commit not in twins]
    covering: dict[int, str] = {}
    if rest:
        if not naming(cwd, task_id, target_id, "--not", tip_id):
            return None  # a squash counts only where the destination names the task
        found = _squashes(cwd, target_id, tip_id, line, rest, paths)
        if found is None:
            return None
        covering = found
    return _label(cwd, line, dest, twins, covering)


@dataclass(frozen=True)
class LineCommit:
    """One commit of a line (or of the destination), oldest first: its id,
    its first parent, and its patch id (None: it changes nothing)."""

    commit: str
    parent: str | None
    patch: str | None


DIFF_CONFIG = (
    # What this module parses is git's default patch format, whatever the
    # user's configuration says.
    "-c",
    "diff.noprefix=false",
    "-c",
    "diff.mnemonicPrefix=false",
    "-c",
    "core.quotePath=true",
)
PATCH_FLAGS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--full-index")


def _patch_ids(cwd: Path, revs: Sequence[str], paths: Sequence[str]) -> list[LineCommit]:
    """The commits ``revs`` lists, merges left out, oldest first, each with
    its ``git patch-id --stable``; given ``paths``, only the commits that
    change one of them (each with its whole patch: a twin changes the same
    files, so no other commit can be one)."""
    revlist = [r if n == 0 or revs[n - 1] != "--not" else f"^{r}" for n, r in enumerate(revs)]
    stdin = "".join(f"{r}\n" for r in revlist if r != "--not")
    if paths:
        stdin += "--\n" + "".join(f":(literal){p}\n" for p in paths)
    out = git(
        *DIFF_CONFIG,
        "log",
        "--stdin",
        "--no-merges",
        "--reverse",
        "--topo-order",
        "-p",
        *PATCH_FLAGS,
        "--format=commit %H %P",
        *(["--full-diff"] if paths else []),
        cwd=cwd,
        input=stdin.encode("utf-8", "surrogateescape"),
    )
    commits: list[tuple[str, str | None]] = []
    for raw in out.split(b"\n"):
        if raw.startswith(b"commit "):
            ids = raw.decode().split()[1:]
            commits.append((ids[0], ids[1] if len(ids) > 1 else None))
    if not commits:
        return []
    ids = git("patch-id", "--stable", cwd=cwd, input=out).decode().split("\n")
    patch = {c: p for p, _, c in (line.partition(" ") for line in ids if line)}
    return [LineCommit(c, parent, patch.get(c)) for c, parent in commits]


def _line_paths(cwd: Path, target: str, tip: str) -> list[str]:
    """The files the line's commits not in ``target`` change."""
    out = git(
        "log",
        "--no-merges",
        "--no-renames",
        "--name-only",
        "--format=",
        "-z",
        tip,
        "--not",
        target,
        cwd=cwd,
    )
    return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p.strip()})


def _twins(line: Sequence[LineCommit], dest: Sequence[LineCommit]) -> dict[str, int]:
    """Each line commit with a patch-id twin among ``dest``'s: the index of
    the twin it was matched with (each destination commit twins one line
    commit at most; of several with one patch, the earliest free one after
    the previous match, so that a rebase reads in order). A commit that
    changes nothing is in everywhere: matched with no twin (-1)."""
    free: dict[str, list[int]] = {}
    for n, c in enumerate(dest):
        if c.patch is not None:
            free.setdefault(c.patch, []).append(n)
    twins: dict[str, int] = {}
    last = -1
    for c in line:
        if c.patch is None:
            twins[c.commit] = -1
            continue
        slots = free.get(c.patch)
        if not slots:
            continue
        pick = next((s for s in slots if s > last), slots[0])
        slots.remove(pick)
        twins[c.commit] = last = pick
    return twins


def _runs(rest: Sequence[int]) -> list[list[int]]:
    """``rest`` (indexes, ascending) cut into runs of consecutive indexes."""
    runs: list[list[int]] = []
    for n in rest:
        if runs and runs[-1][-1] == n - 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return runs


def _squashes(
    cwd: Path,
    target: str,
    tip: str,
    line: Sequence[LineCommit],
    rest: Sequence[int],
    paths: Sequence[str],
) -> dict[int, str] | None:
    """The destination commit that covers each commit of ``rest`` (the line's
    commits with no twin), or None when one is not covered.

    The commits of ``rest`` are cut into runs of consecutive commits of the
    line; a run is covered by a destination commit (not in the line, made
    since it forked, not a merge) whose diff covers the run's combined diff
    (from the parent of its first commit to its last): for each file the
    run changed, every line the run adds the commit adds, every line it
    removes the commit removes (lines compared by content, as many times
    as the run has them), every file the run makes, deletes or changes the
    mode of the commit does the same, and a binary file the commit leaves
    as the run left it. A line whose commits are not one chain (it merged
    another line in) is judged as one run: its whole diff since the merge
    base."""
    chain = all(line[n].parent == line[n - 1].commit for n in range(1, len(line)))
    if chain:
        spans = [(run, line[run[0]].parent, line[run[-1]].commit) for run in _runs(rest)]
    else:
        base = git("merge-base", target, tip, cwd=cwd).decode().split()[0]
        spans = [(list(rest), base, tip)]
    wants = [(run, _diff_lines(cwd, start, end)) for run, start, end in spans]
    candidates = _candidates(cwd, target, tip, paths)
    if not candidates:
        return None
    diffs = _commit_diffs(cwd, candidates)
    covering: dict[int, str] = {}
    for run, want in wants:
        found = next((c for c in candidates if _contains_diff(diffs.get(c), want)), None)
        if found is None:
            return None
        covering.update(dict.fromkeys(run, found))
    return covering


DiffLines = Counter[tuple[str, str]]
MAX_CANDIDATES = 500  # the destination's newest commits on the line's files


def _candidates(cwd: Path, target: str, tip: str, files: Sequence[str]) -> list[str]:
    """The destination's commits since the line forked (merges left out)
    that change one of ``files``, newest first."""
    if not files:
        return []
    stdin = f"{target}\n^{tip}\n--\n" + "".join(f":(literal){f}\n" for f in files)
    out = git(
        "rev-list",
        "--stdin",
        "--no-merges",
        f"--max-count={MAX_CANDIDATES}",
        cwd=cwd,
        input=stdin.encode("utf-8", "surrogateescape"),
    )
    return out.decode().split()


def _diff_lines(cwd: Path, start: str | None, end: str) -> DiffLines:
    """The changes from ``start`` (None: nothing, a root commit's) to
    ``end``, as :func:`_parse_patch` counts them."""
    if start is None:
        start = git("hash-object", "-t", "tree", "--stdin", cwd=cwd, input=b"").decode().strip()
    out = git(*DIFF_CONFIG, "diff", "-U0", *PATCH_FLAGS, start, end, cwd=cwd)
    return _parse_patch(out.split(b"\n"))


def _commit_diffs(cwd: Path, commits: Sequence[str]) -> dict[str, DiffLines]:
    """Each commit's own changes (against its first parent), one git process."""
    out = git(
        *DIFF_CONFIG,
        "diff-tree",
        "--stdin",
        "--root",
        "-r",
        "-p",
        "-U0",
        *PATCH_FLAGS,
        cwd=cwd,
        input="".join(f"{c}\n" for c in commits).encode(),
    )
    wanted = {c.encode() for c in commits}
    sections: dict[str, list[bytes]] = {}
    current: list[bytes] | None = None
    for raw in out.split(b"\n"):
        if raw in wanted:  # diff-tree --stdin names each commit on a line of its own
            current = sections.setdefault(raw.decode(), [])
        elif current is not None:
            current.append(raw)
    return {c: _parse_patch(lines) for c, lines in sections.items()}


def _parse_patch(lines: Sequence[bytes]) -> DiffLines:
    """A patch as counts of ``(file, change)``: each added (``+text``) and
    removed (``-text``) line of a file's hunks; a file made, deleted or its
    mode changed (git's header line); a binary file's new content (its
    object id). The file is named by its ``diff --git`` line."""
    counts: DiffLines = Counter()
    header = ""
    in_hunk = False
    post = ""
    for raw in lines:
        text = raw.decode("utf-8", "surrogateescape")
        if text.startswith("diff --git "):
            header, in_hunk, post = text, False, ""
        elif text.startswith("@@"):
            in_hunk = True
        elif in_hunk and text[:1] in ("+", "-"):
            counts[(header, text)] += 1
        elif in_hunk:
            continue  # "\ No newline at end of file"
        elif text.startswith("index "):
            post = text.split()[1].partition("..")[2]
        elif text.startswith(("new file mode", "deleted file mode", "old mode", "new mode")):
            counts[(header, text)] += 1
        elif text.startswith(("Binary files ", "GIT binary patch")):
            counts[(header, f"binary {post}")] += 1
    return counts


def _contains_diff(have: DiffLines | None, want: DiffLines) -> bool:
    return have is not None and all(have[key] >= count for key, count in want.items())


def _label(
    cwd: Path,
    line: Sequence[LineCommit],
    dest: Sequence[LineCommit],
    twins: dict[str, int],
    covering: dict[int, str],
) -> LandedBy:
    """How a line every commit of which is in the destination got there:

    - *squashed*: a squash holds two commits of it or more, or one commit
      under a message that is not its own (a rebase keeps each message);
    - *cherry-picked*: else, when its twins are not in the line's order,
      or a twin says it was picked (``git cherry-pick -x``);
    - *rebased*: else (each commit copied, in order: a rebase, a merge
      queue's rebase; a one-commit line whose copy had its conflicts
      resolved is covered by that copy under the same message)."""
    if covering:
        runs: dict[str, list[int]] = {}
        for n, c in covering.items():
            runs.setdefault(c, []).append(n)
        if any(len(ns) > 1 for ns in runs.values()):
            return LandedBy.SQUASHED
        messages = _messages(cwd, [*runs, *(line[ns[0]].commit for ns in runs.values())])
        if any(messages.get(c) != messages.get(line[ns[0]].commit) for c, ns in runs.items()):
            return LandedBy.SQUASHED
    order = [twins[c.commit] for c in line if twins.get(c.commit, -1) >= 0]
    if order != sorted(order):
        return LandedBy.CHERRY_PICKED
    picked = [dest[n].commit for n in order]
    if picked and any(PICKED_MARK.search(m) for m in _messages(cwd, picked).values()):
        return LandedBy.CHERRY_PICKED
    return LandedBy.REBASED


def _messages(cwd: Path, commits: Sequence[str]) -> dict[str, str]:
    out = git(
        "log",
        "--no-walk=unsorted",
        "--stdin",
        "--format=%H%n%B%x00",
        cwd=cwd,
        input="".join(f"{c}\n" for c in commits).encode(),
    )
    found: dict[str, str] = {}
    for entry in out.decode("utf-8", "replace").split("\0"):
        commit, _, message = entry.lstrip("\n").partition("\n")
        if commit:
            found[commit] = message.strip()
    return found


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
        how = landed_here(board, cwd, dest, task, received=received)
        if how is not None and board.settle_landed(task, how) is not None:
            settled.append(Settled(task, how))
    return settled


def landed_here(
    board: Board, cwd: Path, dest: str, task: Task, *, received: Sequence[str] = ()
) -> LandedBy | None:
    """The one landing rule for a landing claim ``task`` at its recorded tip,
    as ``sweep``, the keeper and the server's post-receive ask it: where its
    line is here, :func:`landed`; where it is not, the commits naming its
    task (:func:`_naming_unseen`) that change a path it holds, labelled by
    their messages (:func:`_named_how`)."""
    if task.tip is None:
        return None
    if commit_id(cwd, task.tip) is not None:
        return landed(cwd, dest, task.tip, task.id)
    named = _naming_unseen(cwd, dest, task, received)
    if named and _change_what_it_holds(board, cwd, task, [c for c, _ in named]):
        return _named_how(task.id, named)
    return None


def _naming_unseen(
    cwd: Path, dest: str, task: Task, received: Sequence[str]
) -> list[tuple[str, str]]:
    if received:
        return _naming_messages(cwd, task.id, commits=received)
    if task.claimed_at is None or commit_id(cwd, dest) is None:
        return []
    return _naming_messages(cwd, task.id, f"--since=@{int(task.claimed_at)}", dest)


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
    """Of the landing claims' locks among ``holdings`` (stacking),
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
