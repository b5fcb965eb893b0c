"""Writing a computed merge into the worktree as a real merge state (index
stages 1/2/3, markers, ``MERGE_HEAD``), the state file that lets ``--abort``
and ``--continue`` find it again, and undoing or committing it.

Git writes the work tree (``git read-tree -m -u``), so git's own checks on
every path and its refusal to write through a symlink apply.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CannotWorkHere, ConflictMarkers, InvalidInput
from ..repo import Repo, git
from ..text import shown
from .model import NULL_OID, Aborted, Finished, Reconciliation
from .objects import git_rc, path_name

if TYPE_CHECKING:  # the board's module is imported only once a board is opened
    from ..board import Board

STATE_FILE = "lac-reconcile.json"
# A test seam: `LAC_TEST_STOP_AT=STEP` stops the process (SIGSTOP) at that
# step of `apply`, so a test can SIGKILL it exactly there (tests/test_reconcile_crash.py).
STOP_AT_ENV = "LAC_TEST_STOP_AT"
STEPS = ("state-saved", "tree-written", "stages-written", "merge-written")
# Operations git leaves half-done in the git dir, during which a merge is wrong.
BUSY_MARKERS = (
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
    ("rebase-merge", "rebase"),
    ("rebase-apply", "rebase or am"),
    ("BISECT_LOG", "bisect"),
)


def _state_path(repo: Repo) -> Path:
    return repo.git_dir / STATE_FILE


def _merge_files(repo: Repo) -> list[Path]:
    return [repo.git_dir / n for n in ("MERGE_HEAD", "MERGE_MSG", "MERGE_MODE")]


def preflight(repo: Repo, recon: Reconciliation) -> None:
    """Refuse (exit 3) what a real run must not start over; a dry run asks too."""
    if _load_state(repo) is not None:
        raise CannotWorkHere(
            "a reconcile is in progress here; finish it (git lac reconcile --continue) "
            "or undo it (git lac reconcile --abort)"
        )
    if (repo.git_dir / "MERGE_HEAD").exists():
        raise CannotWorkHere("a git merge is in progress; commit it or `git merge --abort` first")
    for marker, what in BUSY_MARKERS:
        if (repo.git_dir / marker).exists():
            raise CannotWorkHere(f"a {what} is in progress; finish or abort it first")
    code, _, _ = git_rc(repo, "diff-index", "--cached", "--quiet", "HEAD", "--")
    if code != 0:
        raise CannotWorkHere("the index has staged changes; commit or stash them first")
    dirty = _dirty(repo, recon)
    if dirty:
        named = ", ".join(map(shown, dirty[:5]))
        raise CannotWorkHere(
            f"uncommitted changes, untracked or ignored files at {named}"
            f"{' and more' if len(dirty) > 5 else ''} would be overwritten; "
            "commit, stash or move them first"
        )


def _dirty(repo: Repo, recon: Reconciliation) -> list[str]:
    """Paths the merge would write that hold work not in HEAD, ignored files
    included (git's own merge would delete those). Cheap checks first (a stat
    comparison, something in the way of an addition); `git status` only
    confirms what they flag."""
    paths = recon.written
    if not paths:
        return []
    literal = [f":(literal){p}" for p in paths]
    out = git("diff-files", "--name-only", "-z", "--", *literal, cwd=repo.toplevel)
    suspects = {path_name(p) for p in out.split(b"\0") if p}
    added = {f.path for f in recon.files if f.ours is None}
    suspects |= {p for p in added if os.path.lexists(repo.toplevel / p)}
    if not suspects:
        return []
    out = git(
        "status",
        "--porcelain",
        "-z",
        "--untracked-files=all",
        "--ignored=matching",
        "--no-renames",
        "--",
        *(f":(literal){p}" for p in sorted(suspects)),
        cwd=repo.toplevel,
    )
    return sorted({path_name(item[3:]) for item in out.split(b"\0") if len(item) > 3})


def _index_line(mode: str, oid: str, stage: int | None, path: str) -> bytes:
    stage_part = f" {stage}" if stage is not None else ""
    return f"{mode} {oid}{stage_part}\t".encode() + path.encode("utf-8", "surrogateescape") + b"\0"


@contextlib.contextmanager
def _uninterrupted() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done. The git processes it
    runs inherit the mask, so a Ctrl-C to the process group does not kill
    them half-way either; a signal that came meanwhile is then raised as
    KeyboardInterrupt (exit 130, one JSON object), with the merge complete
    and `--abort` able to undo it."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return

    def stop(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    blocked = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)  # pending ones arrive here
        signal.signal(signal.SIGTERM, previous)


def _stop_at(step: str) -> None:
    if os.environ.get(STOP_AT_ENV) == step:
        os.kill(os.getpid(), signal.SIGSTOP)


def apply(repo: Repo, recon: Reconciliation) -> None:
    """Write the merge as ``git merge --no-commit`` leaves it: index (with
    stages 1/2/3 for conflicts), work tree, MERGE_HEAD, MERGE_MSG, ORIG_HEAD.

    The state file is written first, so that even a SIGKILL half-way leaves
    something `--abort` can undo: every path the merge writes (restored from
    HEAD: reconcile refused to start over local changes to any of them), and
    who wrote it, when (so a stale ``index.lock`` can be told from a live one)."""
    from .markers import marker_sizes

    now = time.time()
    state = _State(
        recon.ref,
        recon.ours,
        recon.theirs,
        recon.written,
        recon.conflicts,
        pid=os.getpid(),
        started=now,
        pid_at=now,
        sizes=marker_sizes(repo, recon.conflicts),  # what git used: the attributes before the merge
    )
    with _uninterrupted():
        _save_state(repo, state)
        _stop_at("state-saved")
        (repo.git_dir / "ORIG_HEAD").write_text(recon.ours + "\n")  # as `git merge` does
        # Git writes the work tree: it refuses unsafe paths, never writes through
        # a symlink, and a two-tree read-tree keeps unrelated local changes. It
        # checks everything before it writes anything.
        code, _, err = git_rc(repo, "read-tree", "-m", "-u", recon.ours, recon.tree)
        if code != 0:
            _state_path(repo).unlink(missing_ok=True)
            first = err.splitlines()[0] if err else f"exit {code}"
            raise CannotWorkHere(f"git refused to write the merge, nothing written: {first}")
        _stop_at("tree-written")
        if recon.stages:
            conflicted = sorted({s.path for s in recon.stages})
            lines = b"".join(_index_line("0", NULL_OID, None, p) for p in conflicted)
            lines += b"".join(_index_line(s.mode, s.oid, s.stage, s.path) for s in recon.stages)
            git("update-index", "-z", "--index-info", input=lines, cwd=repo.toplevel)
        _stop_at("stages-written")
        merge_head, merge_msg, merge_mode = _merge_files(repo)
        message = f"Reconcile {recon.ref}\n"
        if recon.conflicts:
            message += "\n# Conflicts:\n" + "".join(f"#\t{p}\n" for p in recon.conflicts)
        merge_msg.write_text(message)
        merge_mode.write_text("no-ff")
        merge_head.write_text(recon.theirs + "\n")
        _stop_at("merge-written")
        state.phase = "merging"
        _save_state(repo, state)


def unmerged(repo: Repo) -> list[str]:
    out = git("diff", "--name-only", "-z", "--diff-filter=U", cwd=repo.toplevel)
    return sorted({path_name(p) for p in out.split(b"\0") if p})


@dataclass
class _State:
    """What `--abort` and `--continue` need, in the worktree's git dir."""

    ref: str
    orig_head: str
    theirs: str
    paths: list[str]
    conflicts: list[str]
    phase: str = "applying"  # then "merging", once MERGE_HEAD is written
    pid: int = 0  # the process writing now (the reconcile, then an --abort)
    started: float = 0.0  # when the reconcile began writing (before any git)
    pid_at: float = 0.0  # when ``pid`` took over
    # each conflicted path's conflict-marker-size when the markers were written
    sizes: dict[str, int] = field(default_factory=dict)


def _save_state(repo: Repo, state: _State) -> None:
    tmp = _state_path(repo).with_suffix(".tmp")
    tmp.write_text(json.dumps(state.__dict__, ensure_ascii=False))
    tmp.replace(_state_path(repo))  # never half a file


def _load_state(repo: Repo) -> _State | None:
    try:
        data = json.loads(_state_path(repo).read_text())
        return _State(**data)
    except (OSError, ValueError, TypeError):
        return None


def _rev(repo: Repo, rev: str) -> str | None:
    code, out, _ = git_rc(repo, "rev-parse", "-q", "--verify", f"{rev}^{{commit}}")
    return out.decode().strip() if code == 0 else None


def _merge_head(repo: Repo) -> str | None:
    try:
        return (repo.git_dir / "MERGE_HEAD").read_text().split()[0]
    except (OSError, IndexError):
        return None


def _current(repo: Repo) -> _State | None:
    """The reconcile in progress here, or None. A state file that no longer
    matches the repository (HEAD moved, another merge started, MERGE_HEAD
    gone) is stale: it must never steer `--abort` or `--continue`."""
    state = _load_state(repo)
    if state is None or _rev(repo, "HEAD") != state.orig_head:
        return None
    merge_head = _merge_head(repo)
    if merge_head == state.theirs or (state.phase == "applying" and merge_head is None):
        return state
    return None


def settle(repo: Repo, open_board: Callable[[], Board]) -> None:
    """Tidy a reconcile that ended outside git-lac: one finished by a plain
    `git commit` records its event now; one undone by `git merge --abort`, or
    a stale state file, is forgotten."""
    state = _load_state(repo)
    if state is None or _current(repo) is not None:
        return
    parents = [_rev(repo, "HEAD^1"), _rev(repo, "HEAD^2")]
    if parents == [state.orig_head, state.theirs]:
        open_board().record_reconciled(state.ref, state.paths, conflicts=[])
    _state_path(repo).unlink(missing_ok=True)


def _in_progress(repo: Repo) -> _State:
    state = _current(repo)
    if state is None:
        hint = (
            "; a git merge is in progress: `git merge --abort` or `git commit`"
            if (repo.git_dir / "MERGE_HEAD").exists()
            else ""
        )
        raise InvalidInput(f"no reconcile in progress here{hint}")
    return state


def abort_reconcile(repo: Repo) -> Aborted:
    """Back to exactly the state before the reconcile, even one killed half-way
    (SIGKILL of its whole process group): a stale ``index.lock`` it left is
    removed, a live one is reported and left alone."""
    from .stale import alive, clear_stale_index_lock

    state = _in_progress(repo)
    if state.phase == "applying" and alive(state.pid, state.pid_at):
        raise CannotWorkHere(
            f"the reconcile is still writing here (pid {state.pid}); "
            "let it finish or stop it, then --abort again"
        )
    notes: list[str] = []
    removed = clear_stale_index_lock(repo.git_dir, state.pid, state.started)
    if removed:
        notes.append(removed)
    # From here this process writes: should it die too, the next --abort
    # knows whose lock it would find.
    state.pid, state.pid_at = os.getpid(), time.time()
    _save_state(repo, state)
    if state.phase == "applying":
        _restore(repo, state)  # interrupted half-way: put back every path it writes
    else:
        # What `git merge --abort` does: reset the merge's paths and keep other
        # unstaged changes (reconcile refused to start over any path it writes).
        code, _, err = git_rc(repo, "reset", "-q", "--merge", state.orig_head)
        if code != 0:
            raise CannotWorkHere(
                f"cannot undo the reconcile: {err.splitlines()[0] if err else code}",
                hint="git lac: changes made since the reconcile are in the way; "
                "keep them elsewhere or drop them (git checkout -- PATH), then --abort again",
            )
    for path in [*_merge_files(repo), _state_path(repo)]:
        path.unlink(missing_ok=True)
    return Aborted(state.ref, tuple(notes))


def _in_head(repo: Repo, commit: str, paths: Sequence[str]) -> list[str]:
    """Which of ``paths`` ``commit`` has (exactly these names: a path that
    looks like a pattern matches only itself)."""
    wanted = set(paths)
    out = git("ls-tree", "-r", "-z", "--name-only", "--full-tree", commit, cwd=repo.toplevel)
    return sorted(wanted.intersection(path_name(p) for p in out.split(b"\0") if p))


def _pathspecs(paths: Sequence[str]) -> bytes:
    """For ``--pathspec-from-file=- --pathspec-file-nul``: any number of paths,
    each matching only itself."""
    return b"".join(f":(literal){p}".encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def _restore(repo: Repo, state: _State) -> None:
    """The paths a merge writes, back as HEAD has them (index and work tree).
    reconcile refused to start over local changes to any of them, so this
    loses nothing; it never follows a symlink out of the work tree."""
    in_head = _in_head(repo, state.orig_head, state.paths)
    added = sorted(set(state.paths) - set(in_head))
    if added:
        git(
            "rm",
            "-q",
            "-r",
            "-f",
            "--cached",
            "--ignore-unmatch",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            input=_pathspecs(added),
            cwd=repo.toplevel,
        )
        top = repo.toplevel.resolve()
        for path in added:
            target = top / path
            inside = not os.path.isabs(path) and target.is_relative_to(top)
            if not inside or target.parent.resolve() != target.parent:
                continue  # outside, or through a symlink: never ours to touch
            if not os.path.lexists(target):
                continue
            if not target.is_dir() or target.is_symlink():
                target.unlink()
            parent = target.parent
            while parent != top and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
    if in_head:
        git(
            "checkout",
            "-q",
            "-f",
            state.orig_head,
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            input=_pathspecs(in_head),
            cwd=repo.toplevel,
        )


def _marked(repo: Repo, state: _State) -> list[str]:
    from .markers import markers_staged

    return markers_staged(repo, state.conflicts, [state.orig_head, state.theirs], state.sizes)


def refuse_markers(repo: Repo) -> None:
    """The pre-commit hook's question: while a reconcile is in progress here,
    refuse (exit 1, one line) a commit that stages conflict markers in a path
    it left conflicted, unless ``LAC_ALLOW_MARKERS=1``. Costs one stat when
    no reconcile is in progress."""
    if not _state_path(repo).exists():
        return
    from .markers import ALLOW_ENV, allowed_by_env

    state = _current(repo)
    if state is None or state.phase != "merging" or allowed_by_env():
        return
    marked = _marked(repo, state)
    if marked:
        raise ConflictMarkers(
            paths=marked,
            advice=f"a reconcile is in progress: resolve them and `git add`, "
            f"or commit them on purpose with {ALLOW_ENV}=1",
        )


def finish(repo: Repo, board: Board, *, allow_markers: bool = False) -> Finished:
    """Commit a resolved reconcile and record it; a path it left conflicted
    that still holds markers is refused unless ``allow_markers``."""
    from .markers import ALLOW_ENV, allowed_by_env

    state = _in_progress(repo)
    if state.phase == "applying":
        raise CannotWorkHere(
            "the reconcile was interrupted before it finished writing; "
            "undo it with `git lac reconcile --abort` and run it again"
        )
    left = unmerged(repo)
    if left:
        return Finished(state.ref, state.paths, left)
    allow_markers = allow_markers or allowed_by_env()
    if not allow_markers:
        marked = _marked(repo, state)
        if marked:
            raise ConflictMarkers(
                paths=marked,
                advice="resolve them and `git add`, or commit them on purpose with "
                "`git lac reconcile --continue --allow-markers`",
            )
    # Our own pre-commit hook runs inside this commit: it is told the same.
    env = {ALLOW_ENV: "1"} if allow_markers else None
    code, _, err = git_rc(repo, "commit", "--no-edit", "-q", env=env)
    if code != 0:
        lines = err.splitlines()
        raise CannotWorkHere(f"git commit failed: {lines[-1] if lines else f'exit {code}'}")
    board.record_reconciled(state.ref, state.paths, conflicts=[])
    _state_path(repo).unlink(missing_ok=True)
    return Finished(state.ref, state.paths, [])
