"""Desks: a claim's own linked worktree, made, furnished, listed and pruned.

A desk is a linked worktree made by ``git lac claim … --worktree``. What
makes it a desk is recorded in the worktree's own config (``git config
--worktree``, with ``extensions.worktreeConfig`` on in the clone):

- ``lac.deskTask``: the task whose claim the desk was made for;
- ``lac.agent``: the claimer's name, so every command there acts as it;

and its instance file (``lacunari/instance.json`` in its git dir) holds the
instance the claim was made at. All three live in the worktree's git dir and
go with it (``git worktree remove``): nothing is kept beside the board. Its
``.lac/`` directory (ignored by a ``.gitignore`` of ``*``) holds ``env`` (the
claim's variables) and ``setup.log``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CannotWorkHere, InvalidInput, LacError
from .front_door import SHARED_FILE
from .identity import INSTANCE_FILE, Instance, read_instance
from .repo import Repo, git

Echo = Callable[[str], None]

DESK_TASK = "lac.deskTask"  # worktree config: the task this desk was made for
LAC_DIR = ".lac"
LOG_NAME = "setup.log"
ENV_NAME = "env"
TAIL_LINES = 10  # of a failing setup's output, said with its exit code
GLOB_CHARS = frozenset("*?[")


def default_root(repo: Repo) -> Path:
    """Where desks go without a PATH: beside the worktrees ``drain --worktree`` makes."""
    return repo.common_dir / "lacunari" / "worktrees"


def default_path(repo: Repo, task_id: int) -> Path:
    return default_root(repo) / f"task-{task_id}"


def default_branch(task_id: int) -> str:
    return f"lac/task-{task_id}"


# --- the worktrees of this clone -----------------------------------------------------


@dataclass(frozen=True)
class Tree:
    path: Path
    branch: str | None  # short name; None: detached or bare
    git_dir: Path | None  # a linked worktree's own git dir (None: the main one)
    missing: bool  # its directory is gone (git calls it prunable)


def worktrees(repo: Repo) -> list[Tree]:
    """Every working tree of this clone, the main one first (``git worktree list``)."""
    out = git("worktree", "list", "--porcelain", "-z", cwd=repo.toplevel)
    found: list[Tree] = []
    admin = {}
    with contextlib.suppress(OSError):
        for entry in (repo.common_dir / "worktrees").iterdir():
            gitdir_file = entry / "gitdir"
            with contextlib.suppress(OSError):
                dotgit = Path(gitdir_file.read_text().strip())
                admin[os.path.normpath(dotgit.parent)] = entry
    for record in out.decode("utf-8", "surrogateescape").split("\0\0"):
        fields = [f for f in record.split("\0") if f]
        if not fields or not fields[0].startswith("worktree "):
            continue
        path = Path(fields[0][len("worktree ") :])
        branch = None
        missing = False
        for f in fields[1:]:
            if f.startswith("branch "):
                branch = f[len("branch ") :].removeprefix("refs/heads/")
            elif f.startswith("prunable"):
                missing = True
        found.append(Tree(path, branch, admin.get(os.path.normpath(path)), missing))
    return found


def main_tree(repo: Repo) -> Path:
    trees = worktrees(repo)
    return trees[0].path if trees else repo.toplevel


# --- where a desk may go -------------------------------------------------------------


def _inside(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


def check_path(repo: Repo, given: str) -> Path:
    """A desk's PATH, absolute: refused (exit 2, before anything is written)
    unless it is an empty directory or nothing yet, outside every working
    tree of this clone (a desk inside one would be its untracked files)."""
    if not given or "\0" in given:
        raise InvalidInput("--worktree PATH: give a path")
    path = Path(os.path.abspath(os.path.expanduser(given)))
    real = Path(os.path.realpath(path))
    if path.is_symlink() or real.exists() and not real.is_dir():
        raise InvalidInput(f"--worktree {given!r} is not a directory: a desk needs an empty one")
    if real.is_dir():
        try:
            if any(real.iterdir()):
                raise InvalidInput(
                    f"--worktree {given!r} is not empty: a desk needs an empty directory "
                    "or a new path"
                )
        except OSError as exc:
            raise InvalidInput(f"--worktree {given!r} cannot be read: {exc.strerror}") from None
    common = Path(os.path.realpath(repo.common_dir))
    for tree in worktrees(repo):
        top = Path(os.path.realpath(tree.path))
        if _inside(real, top) and not _inside(real, common):
            raise InvalidInput(
                f"--worktree {given!r} is inside the working tree {tree.path}: "
                "a desk goes outside every working tree of the clone"
            )
    return path


def check_branch(repo: Repo, branch: str) -> str:
    try:
        git("check-ref-format", "--branch", branch, cwd=repo.toplevel)
    except CannotWorkHere:
        raise InvalidInput(f"--branch {branch[:80]!r} is not a valid branch name") from None
    if branch.startswith("-"):
        raise InvalidInput(f"--branch {branch[:80]!r} is not a valid branch name")
    return branch


def branch_tip(repo: Repo, branch: str) -> str | None:
    try:
        out = git(
            "rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}", cwd=repo.toplevel
        )
    except CannotWorkHere:
        return None
    return out.decode().strip() or None


def commit_of(repo: Repo, rev: str) -> str:
    out = git("rev-parse", "--verify", "-q", f"{rev}^{{commit}}", cwd=repo.toplevel)
    return out.decode().strip()


def checked_out_at(repo: Repo, branch: str) -> Path | None:
    for tree in worktrees(repo):
        if tree.branch == branch:
            return tree.path
    return None


@dataclass(frozen=True)
class Plan:
    """What a desk will be: its path, its branch, and the commit it starts at."""

    path: Path
    branch: str
    start: str  # the commit checked out
    base: str  # what it starts from, as people name it: the destination, or the branch
    new_branch: bool
    made_dir: bool  # the path did not exist: a failure removes what git left


def plan(repo: Repo, *, path: Path, branch: str, destination: str) -> Plan:
    """A desk's plan: an existing ``branch`` is continued at its tip (never
    reset); a new one starts at the destination's tip as last fetched."""
    held = checked_out_at(repo, branch)
    if held is not None:
        raise InvalidInput(f"branch {branch} is checked out at {held}: a desk needs its own")
    tip = branch_tip(repo, branch)
    if tip is not None:
        return Plan(path, branch, tip, branch, False, not path.exists())
    return Plan(path, branch, commit_of(repo, destination), destination, True, not path.exists())


# --- the .lacconfig the desk checks out ----------------------------------------------


@dataclass(frozen=True)
class Setup:
    copy: tuple[str, ...] = ()
    link: tuple[str, ...] = ()
    command: str | None = None


def _check_pattern(key: str, pattern: str) -> str:
    """A copy or link pattern names paths of the main work tree, never above
    it nor in a git dir: the committed file is whatever the last pusher wrote."""
    cleaned = pattern.strip()
    parts = Path(cleaned).parts
    if (
        not cleaned
        or os.path.isabs(cleaned)
        or cleaned.startswith("~")
        or ".." in parts
        or (parts and parts[0] in (".git", LAC_DIR))
    ):
        raise InvalidInput(
            f"{SHARED_FILE}: {key} {pattern[:80]!r} must be a path or glob inside the work "
            "tree (relative, no '..', not in .git or .lac)"
        )
    return cleaned


def read_setup(repo: Repo, commit: str) -> Setup:
    """``lac.desk.copy``, ``lac.desk.link`` (each repeatable) and ``lac.desk.setup``
    from the ``.lacconfig`` committed at ``commit`` (the one the desk checks out)."""
    blob = f"{commit}:{SHARED_FILE}"
    try:
        git("cat-file", "-e", blob, cwd=repo.toplevel)
    except CannotWorkHere:
        return Setup()
    try:
        out = git("config", "--blob", blob, "-z", "--list", cwd=repo.toplevel)
    except CannotWorkHere as exc:
        raise InvalidInput(f"the {SHARED_FILE} at {commit[:12]} cannot be read: {exc}") from None
    copy: list[str] = []
    link: list[str] = []
    command = None
    for item in out.decode("utf-8", "surrogateescape").split("\0"):
        key, _, value = item.partition("\n")
        if key == "lac.desk.copy":
            copy.append(_check_pattern("lac.desk.copy", value))
        elif key == "lac.desk.link":
            link.append(_check_pattern("lac.desk.link", value))
        elif key == "lac.desk.setup":
            command = value.strip() or None
    return Setup(tuple(copy), tuple(link), command)


# --- making one ----------------------------------------------------------------------


def make(repo: Repo, desk: Plan) -> Path:
    """``git worktree add`` the desk (``--no-track``: a task branch follows no
    remote branch by accident). Raises CannotWorkHere when git cannot; what
    this made (the branch, the directory) is then gone again."""
    git("worktree", "prune", cwd=repo.toplevel)  # a worktree deleted by hand
    if desk.new_branch:
        args = ["-b", desk.branch, "--no-track", str(desk.path), desk.start]
    else:
        args = [str(desk.path), desk.branch]
    try:
        git("worktree", "add", "-q", *args, cwd=repo.toplevel)
    except CannotWorkHere as exc:
        if desk.new_branch and branch_tip(repo, desk.branch) == desk.start:
            with contextlib.suppress(LacError):
                git("update-ref", "-d", f"refs/heads/{desk.branch}", desk.start, cwd=repo.toplevel)
        if desk.made_dir:
            with contextlib.suppress(OSError):
                desk.path.rmdir()
        raise CannotWorkHere(f"git cannot make the desk at {desk.path}: {exc.message}") from None
    return desk.path


def unmake(repo: Repo, desk: Plan) -> None:
    """Undo :func:`make` (the claim it was made for did not hold)."""
    with contextlib.suppress(LacError):
        git("worktree", "remove", "--force", str(desk.path), cwd=repo.toplevel)
    if desk.new_branch:
        with contextlib.suppress(LacError):
            git("update-ref", "-d", f"refs/heads/{desk.branch}", desk.start, cwd=repo.toplevel)


def bind(repo: Repo, desk: Repo, *, agent: str, instance: Instance, task_id: int) -> None:
    """Make the desk act as the claim: its instance file names the claim's
    instance, its worktree config the claimer and the task."""
    file = desk.git_dir / INSTANCE_FILE
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    tmp.write_text(
        json.dumps({"id": instance.id, "host": instance.host, "path": str(desk.toplevel)}) + "\n"
    )
    os.replace(tmp, file)
    if (repo.get("extensions.worktreeconfig") or "").strip().lower() not in ("true", "1"):
        repo.set_config("extensions.worktreeConfig", "true")
    git("config", "--worktree", "lac.agent", agent, cwd=desk.toplevel)
    git("config", "--worktree", DESK_TASK, str(task_id), cwd=desk.toplevel)


def desk_task(repo: Repo) -> int | None:
    """The task this working tree is the desk of (None: it is no desk)."""
    value = (repo.get(DESK_TASK) or "").strip()
    return int(value) if value.isdigit() else None


def lac_dir(desk: Path) -> Path:
    where = desk / LAC_DIR
    where.mkdir(exist_ok=True)
    (where / ".gitignore").write_text("*\n")
    return where


def env_text(variables: Mapping[str, str]) -> str:
    """``NAME=VALUE`` lines, each value quoted for ``sh``."""
    return "".join(f"{name}={shlex.quote(value)}\n" for name, value in variables.items())


def write_env(desk: Path, variables: Mapping[str, str]) -> Path:
    path = lac_dir(desk) / ENV_NAME
    path.write_text(env_text(variables))
    return path


# --- furnishing: copies, links, the setup command ---------------------------------------


def _matches(main: Path, pattern: str) -> list[Path]:
    """The paths of the main work tree ``pattern`` names, never outside it."""
    top = main.resolve()
    if GLOB_CHARS.isdisjoint(pattern):
        found = [main / pattern] if os.path.lexists(main / pattern) else []
    else:
        found = sorted(main.glob(pattern))
    kept = []
    for match in found:
        rel = match.relative_to(main)
        if rel.parts and rel.parts[0] in (".git", LAC_DIR):
            continue
        parent = match.parent.resolve()
        if parent != top and top not in parent.parents:  # through a symlinked directory
            continue
        kept.append(match)
    return kept


def furnish(main: Path, desk: Path, setup: Setup, echo: Echo) -> list[str]:
    """Copy and link what ``setup`` names from the main work tree into the
    desk; what could not be is said (and returned), never made up."""
    said: list[str] = []

    def tell(line: str) -> None:
        said.append(line)
        echo(f"git lac: desk: {line}")

    for key, patterns, linking in (
        ("lac.desk.copy", setup.copy, False),
        ("lac.desk.link", setup.link, True),
    ):
        for pattern in patterns:
            found = _matches(main, pattern)
            if not found:
                done = "linked" if linking else "copied"
                tell(f"{key} {pattern!r} names nothing in {main}: not {done}")
                continue
            for source in found:
                rel = source.relative_to(main)
                target = desk / rel
                if os.path.lexists(target):
                    tell(f"{key} {str(rel)!r}: the desk has its own, kept")
                    continue
                try:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if linking:
                        target.symlink_to(source)
                    elif source.is_dir() and not source.is_symlink():
                        shutil.copytree(source, target, symlinks=True)
                    else:
                        shutil.copy2(source, target, follow_symlinks=False)
                except OSError as exc:
                    tell(f"{key} {str(rel)!r}: {exc.strerror or exc}")
    return said


@dataclass
class SetupRun:
    command: str | None
    exit_code: int | None = None
    log: str | None = None
    last_lines: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "command": self.command,
            "exit_code": self.exit_code,
            "log": self.log,
            "last_lines": self.last_lines,
        }


def run_setup(desk: Path, command: str | None, env: Mapping[str, str], echo: Echo) -> SetupRun:
    """Run ``command`` with ``sh`` in the desk (nothing to read on stdin), its
    output said on stderr and kept in ``.lac/setup.log``."""
    if command is None:
        return SetupRun(None)
    log = lac_dir(desk) / LOG_NAME
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    with open(log, "wb") as out:
        try:
            proc = subprocess.Popen(
                ["sh", "-c", command],
                cwd=desk,
                # Not a drainer's LAC_INSTANCE: commands there act as the desk.
                env={**{k: v for k, v in os.environ.items() if k != "LAC_INSTANCE"}, **env},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        except OSError as exc:
            out.write(f"cannot run sh: {exc}\n".encode())
            return SetupRun(command, 127, str(log), [f"cannot run sh: {exc}"])
        assert proc.stdout is not None
        for raw in proc.stdout:
            out.write(raw)
            out.flush()
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            tail.append(line)
            echo(line)
        code = proc.wait()
    return SetupRun(command, code, str(log), list(tail))


# --- what a desk holds ---------------------------------------------------------------


@dataclass(frozen=True)
class Work:
    """What is uncommitted in a working tree."""

    modified: int = 0
    staged: int = 0
    untracked: int = 0

    @property
    def clean(self) -> bool:
        return not (self.modified or self.staged or self.untracked)

    def said(self) -> str:
        if self.clean:
            return "clean"
        parts = [
            f"{n} {what}"
            for n, what in (
                (self.modified, "modified"),
                (self.staged, "staged"),
                (self.untracked, "untracked"),
            )
            if n
        ]
        return ", ".join(parts)


def uncommitted(path: Path) -> Work:
    """Modified tracked files, staged changes and untracked files git does
    not ignore (``git status``; ``.lac/`` ignores itself)."""
    out = git("status", "--porcelain=v1", "-z", "--untracked-files=all", cwd=path)
    modified = staged = untracked = 0
    entries = out.decode("utf-8", "surrogateescape").split("\0")
    skip = False
    for entry in entries:
        if skip or len(entry) < 3:
            skip = False
            continue
        x, y = entry[0], entry[1]
        if x == "R" or x == "C":
            skip = True  # the next entry is the rename's source
        if x == "?":
            untracked += 1
            continue
        if x not in (" ", "?"):
            staged += 1
        if y not in (" ", "?"):
            modified += 1
    return Work(modified, staged, untracked)


@dataclass(frozen=True)
class Desk:
    path: Path
    task: int
    branch: str | None
    instance: str | None
    missing: bool


def desks(repo: Repo) -> list[Desk]:
    """This clone's desks: its linked worktrees that record a task."""
    found = []
    for tree in worktrees(repo):
        if tree.git_dir is None:
            continue
        config = tree.git_dir / "config.worktree"
        try:
            out = git("config", "--file", str(config), "--get", DESK_TASK, cwd=repo.toplevel)
        except CannotWorkHere:
            continue
        value = out.decode().strip()
        if not value.isdigit():
            continue
        inst = read_instance(tree.git_dir / INSTANCE_FILE)
        found.append(
            Desk(tree.path, int(value), tree.branch, inst.id if inst else None, tree.missing)
        )
    return found


def contains(repo: Repo, destination: str, tip: str) -> bool:
    try:
        git("merge-base", "--is-ancestor", tip, destination, cwd=repo.toplevel)
    except CannotWorkHere:
        return False
    return True


def remove(repo: Repo, desk: Desk) -> None:
    """``git worktree remove`` without ``--force``: git's own check has the last word."""
    git("worktree", "remove", str(desk.path), cwd=repo.toplevel)


def delete_branch(repo: Repo, branch: str, tip: str) -> None:
    """Delete ``branch`` only while it is still at ``tip`` (checked by git)."""
    git("update-ref", "-d", f"refs/heads/{branch}", tip, cwd=repo.toplevel)
