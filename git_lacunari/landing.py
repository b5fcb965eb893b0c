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
3. **squashed**: a commit that the destination gained since the line forked
   names the task in a ``Lac-Task: N`` trailer (``git commit --trailer
   Lac-Task=N``; a squash merge keeps the squashed commits' messages, and
   with them their trailers).

Anything else (a squash with no trailer, a partial cherry-pick, a rewrite) has
not landed: the locks stay until the claim is released explicitly, or its
holder is silent for the board's landing period.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from .errors import CannotWorkHere
from .repo import git

TRAILER = "Lac-Task"


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


def _is_ancestor(cwd: Path, tip: str, target: str) -> bool:
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


def _named_by_trailer(cwd: Path, tip: str, target: str, task_id: int) -> bool:
    """A commit the destination gained since the line forked that carries
    ``Lac-Task: task_id``."""
    out = git(
        "log",
        f"--format=%(trailers:key={TRAILER},valueonly,separator=%x00)%x00",
        target,
        "--not",
        tip,
        cwd=cwd,
    )
    wanted = {str(task_id), f"#{task_id}"}
    return any(value.strip() in wanted for value in out.decode("utf-8", "replace").split("\0"))


def landed(cwd: Path, target: str, tip: str, task_id: int) -> LandedBy | None:
    """How the work ending at ``tip`` (a claim on task ``task_id``) reached
    ``target``, or None while it has not (or either commit is not here)."""
    target_id, tip_id = commit_id(cwd, target), commit_id(cwd, tip)
    if target_id is None or tip_id is None:
        return None
    if _is_ancestor(cwd, tip_id, target_id):
        return LandedBy.MERGED
    if _every_patch_upstream(cwd, tip_id, target_id):
        return LandedBy.REBASED
    if _named_by_trailer(cwd, tip_id, target_id, task_id):
        return LandedBy.SQUASHED
    return None
