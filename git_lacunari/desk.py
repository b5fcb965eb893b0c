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
import signal
import subprocess
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Callable, Iterator, Mapping
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


# A line break or another control character in a desk's path would forge
# lines wherever the path is printed or read back line by line (`.lac/env`,
# a harness's config), and git itself cannot make every such directory.
_PATH_REFUSED = frozenset(("Cc", "Zl", "Zp"))


def check_path(repo: Repo, given: str) -> Path:
    """A desk's PATH, absolute: refused (exit 2, before anything is written)
    unless it is an empty directory or nothing yet, outside every working
    tree of this clone (a desk inside one would be its untracked files) and
    outside its git directory but for the desks' own place there. A symlink
    to an empty directory is that directory."""
    if not given or "\0" in given:
        raise InvalidInput("--worktree PATH: give a path")
    bad = next((c for c in given if unicodedata.category(c) in _PATH_REFUSED), None)
    if bad is not None:
        raise InvalidInput(
            f"--worktree {given[:80]!r} holds U+{ord(bad):04X} "
            f"({unicodedata.name(bad, 'a control character')}): a desk's path takes no "
            "control characters or line breaks"
        )
    path = Path(os.path.abspath(os.path.expanduser(given)))
    try:
        return _check_place(repo, given, path)
    except OSError as exc:  # too long, a loop of symlinks, no permission
        raise InvalidInput(
            f"--worktree {given[:80]!r} cannot be used: {exc.strerror or exc}"
        ) from None


def _check_place(repo: Repo, given: str, path: Path) -> Path:
    real = Path(os.path.realpath(path, strict=False))
    if path.is_symlink():
        if not real.is_dir():
            raise InvalidInput(
                f"--worktree {given[:80]!r} is a symlink to {str(real)[:200]!r}, which is no "
                "directory: a desk needs an empty directory or a new path"
            )
        path = real
    elif real.exists() and not real.is_dir():
        raise InvalidInput(
            f"--worktree {given[:80]!r} is not a directory: a desk needs an empty one"
        )
    if real.is_dir():
        try:
            if any(real.iterdir()):
                raise InvalidInput(
                    f"--worktree {given[:80]!r} is not empty: a desk needs an empty directory "
                    "or a new path"
                )
        except OSError as exc:
            raise InvalidInput(
                f"--worktree {given[:80]!r} cannot be read: {exc.strerror}"
            ) from None
    common = Path(os.path.realpath(repo.common_dir))
    own = Path(os.path.realpath(default_root(repo)))
    for tree in worktrees(repo):
        top = Path(os.path.realpath(tree.path))
        if top == common:
            continue  # a bare repository: no working tree, its git dir is checked below
        # The main tree holds the git directory, which is no part of it; a
        # desk made inside another desk is that desk's, wherever it is.
        in_git_dir = _inside(real, common) and not _inside(top, common)
        if _inside(real, top) and not in_git_dir:
            raise InvalidInput(
                f"--worktree {given[:80]!r} is inside the working tree {tree.path}: "
                "a desk goes outside every working tree of the clone"
            )
    if _inside(real, common) and not (real != own and _inside(real, own)):
        # git keeps each worktree's own files in .git/worktrees/NAME: a desk
        # there, or among the objects and refs, would be mixed up with them.
        raise InvalidInput(
            f"--worktree {given[:80]!r} is inside the git directory {repo.common_dir}: "
            f"a desk goes outside it, or in {own} (the default)"
        )
    return path


def check_branch(repo: Repo, branch: str) -> str:
    """A ``--branch`` name: a valid branch name that means the same branch
    wherever git reads it (refused, exit 2, before anything is written)."""
    bad = f"--branch {branch[:80]!r} is not a valid branch name"
    if not branch or branch.startswith("-") or branch in ("HEAD", "@"):
        raise InvalidInput(bad)
    try:  # not --branch, which reads @{-1} and @ as the branches they name
        git("check-ref-format", f"refs/heads/{branch}", cwd=repo.toplevel)
    except CannotWorkHere:
        raise InvalidInput(bad) from None
    if branch.startswith("refs/"):
        raise InvalidInput(
            f"--branch {branch[:80]!r} would make the branch refs/heads/{branch[:80]}: "
            f"name it alone (e.g. {branch.split('/')[-1][:80]!r})"
        )
    # A branch spelled like a remote-tracking branch or a tag would make that
    # name ambiguous: `origin/main` would then mean the local one, the
    # destination included.
    try:
        remotes = git("remote", cwd=repo.toplevel).decode("utf-8", "replace").split()
    except CannotWorkHere:
        remotes = []
    first = branch.split("/", 1)[0]
    for kind, ref, clash in (
        ("a remote-tracking branch", f"refs/remotes/{branch}", first in remotes and "/" in branch),
        ("a tag", f"refs/tags/{branch}", False),
    ):
        if clash or _ref_exists(repo, ref):
            raise InvalidInput(
                f"--branch {branch[:80]!r} is also the name of {kind}: git would read it as "
                "either; name the branch otherwise"
            )
    return branch


def _ref_exists(repo: Repo, ref: str) -> bool:
    try:
        return bool(git("rev-parse", "--verify", "-q", ref, cwd=repo.toplevel).strip())
    except CannotWorkHere:
        return False


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


def checked_out_at(repo: Repo, branch: str, *, present: bool = False) -> Path | None:
    """The working tree ``branch`` is checked out in; ``present``: only one
    whose directory is still there (:func:`make` prunes the others first)."""
    for tree in worktrees(repo):
        if tree.branch == branch and not (present and tree.missing):
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
    held = checked_out_at(repo, branch, present=True)
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
        out = git("config", "--blob", blob, "--no-includes", "-z", "--list", cwd=repo.toplevel)
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
        _keep_main_tree_keys(repo)
        repo.set_config("extensions.worktreeConfig", "true")
    git("config", "--worktree", "lac.agent", agent, cwd=desk.toplevel)
    git("config", "--worktree", DESK_TASK, str(task_id), cwd=desk.toplevel)


MAX_TASK = 2**63 - 1  # what both backends store


def _task_number(value: str) -> int | None:
    """A task id as recorded by a desk; a value edited into nonsense is no task."""
    value = value.strip()
    if not (value.isascii() and value.isdigit()):
        return None
    number = int(value)
    return number if 0 < number <= MAX_TASK else None


def default_task(repo: Repo, path: Path) -> int | None:
    """The task whose default desk ``path`` is (None: no task's)."""
    name = path.name
    if not name.startswith("task-"):
        return None
    if os.path.realpath(path.parent) != os.path.realpath(default_root(repo)):
        return None
    return _task_number(name[len("task-") :])


def _keep_main_tree_keys(repo: Repo) -> None:
    """Before ``extensions.worktreeConfig`` goes on: ``core.bare`` and
    ``core.worktree`` in the shared config would then apply to every working
    tree (a clone made with ``--bare`` and worked in through worktrees would
    find each of them "bare"), so they move to the main tree's own
    ``config.worktree``, as git-worktree(1) asks."""
    shared = str(repo.common_dir / "config")
    own = str(repo.common_dir / "config.worktree")
    for key in ("core.bare", "core.worktree"):
        try:
            value = git("config", "--file", shared, "--get", key, cwd=repo.toplevel)
        except CannotWorkHere:
            continue  # not set
        value_text = value.decode("utf-8", "surrogateescape").strip()
        if key == "core.bare" and value_text.lower() not in ("true", "yes", "on", "1"):
            continue  # false everywhere is what a tree without it reads
        git("config", "--file", own, key, value_text, cwd=repo.toplevel)
        with contextlib.suppress(CannotWorkHere):  # a racing desk moved it first
            git("config", "--file", shared, "--unset", key, cwd=repo.toplevel)


def desk_task(repo: Repo) -> int | None:
    """The task this working tree is the desk of (None: it is no desk)."""
    return _task_number(repo.get(DESK_TASK) or "")


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


def _stays_in(desk: Path, where: Path) -> bool:
    """Whether ``where`` (or what of it exists yet) is inside ``desk`` once
    every symlink on the way is followed."""
    top = Path(os.path.realpath(desk))
    probe = where
    while not os.path.lexists(probe) and probe != desk and desk in probe.parents:
        probe = probe.parent
    return _inside(Path(os.path.realpath(probe)), top)


def furnish(main: Path, desk: Path, setup: Setup, echo: Echo) -> list[str]:
    """Copy and link what ``setup`` names from the main work tree into the
    desk; what could not be is said (and returned), never made up."""
    said: list[str] = []

    def tell(line: str) -> None:
        said.append(line)
        echo(f"git lac: desk: {line}")

    placed: list[Path] = []
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
                if any(_inside(target, done) for done in placed):
                    continue  # inside what was copied or linked whole already
                if os.path.lexists(target):
                    tell(f"{key} {str(rel)!r}: the desk has its own, kept")
                    continue
                if not _stays_in(desk, target.parent):
                    # The commit the desk checks out has a symlink on the
                    # way: what was pushed must not choose where this writes.
                    done = "linked" if linking else "copied"
                    tell(f"{key} {str(rel)!r}: a symlink in the desk leads out of it: not {done}")
                    continue
                try:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if linking:
                        target.symlink_to(source)
                    elif source.is_dir() and not source.is_symlink():
                        shutil.copytree(source, target, symlinks=True)
                    else:
                        shutil.copy2(source, target, follow_symlinks=False)
                    placed.append(target)
                except OSError as exc:
                    tell(f"{key} {str(rel)!r}: {exc.strerror or exc}")
    return said


@dataclass
class SetupRun:
    command: str | None
    exit_code: int | None = None
    log: str | None = None
    last_lines: list[str] = field(default_factory=list)
    killed_by: signal.Signals | None = None  # what ended the setup, if a signal did
    stopped_by: signal.Signals | None = None  # what stopped this command meanwhile

    def to_json(self) -> dict[str, object]:
        return {
            "command": self.command,
            "exit_code": self.exit_code,
            "log": self.log,
            "last_lines": self.last_lines,
        }

    def ended(self) -> str:
        """How the setup ended, as people say it."""
        if self.killed_by is not None:
            return f"was killed by {self.killed_by.name} (exit {self.exit_code})"
        return f"exited {self.exit_code}"


_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_POLL = 0.05  # seconds between reads of a running setup's log


def run_setup(desk: Path, command: str | None, env: Mapping[str, str], echo: Echo) -> SetupRun:
    """Run ``command`` with ``sh`` in the desk (nothing to read on stdin), its
    output said on stderr and kept in ``.lac/setup.log``.

    The setup writes to the log itself, not to a pipe, so a process it leaves
    running (a dev server started with ``&``) keeps its output going there and
    does not hold this command open: the setup is over when ``sh`` exits. It
    runs in a process group of its own, to which Ctrl-C, SIGTERM and SIGHUP
    sent to this command are passed on (twice: SIGKILL), so stopping a claim
    stops its setup too, all of it."""
    if command is None:
        return SetupRun(None)
    log = lac_dir(desk) / LOG_NAME
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    own_group = threading.current_thread() is threading.main_thread()
    with open(log, "wb") as out:
        try:
            proc = subprocess.Popen(
                ["sh", "-c", command],
                cwd=desk,
                # Not a drainer's LAC_INSTANCE: commands there act as the desk.
                env={**{k: v for k, v in os.environ.items() if k != "LAC_INSTANCE"}, **env},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                process_group=0 if own_group else None,
            )
        except OSError as exc:
            out.write(f"cannot run sh: {exc}\n".encode())
            return SetupRun(command, 127, str(log), [f"cannot run sh: {exc}"])
    got: list[signal.Signals] = []

    def forward(signum: int, frame: object) -> None:
        got.append(signal.Signals(signum))
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL if len(got) > 1 else signum)

    before = {sig: signal.signal(sig, forward) for sig in _FORWARDED} if own_group else {}
    try:
        with open(log, "rb") as reader:
            pending = b""
            while True:
                over = proc.poll() is not None
                chunk = reader.read(1 << 16)
                if chunk:
                    *lines, pending = (pending + chunk).split(b"\n")
                    for raw in lines:
                        line = raw.decode("utf-8", "replace").rstrip("\r")
                        tail.append(line)
                        echo(line)
                    continue
                if over:
                    break
                time.sleep(_POLL)
            if pending:
                line = pending.decode("utf-8", "replace").rstrip("\r")
                tail.append(line)
                echo(line)
        code = proc.wait()
    finally:
        for sig, handler in before.items():
            if handler is not None:
                signal.signal(sig, handler)
    killed = signal.Signals(-code) if code < 0 else None
    return SetupRun(
        command,
        128 - code if code < 0 else code,  # as a shell says a signal: 128+N
        str(log),
        list(tail),
        killed_by=killed,
        stopped_by=got[0] if got else None,
    )


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


def uncommitted(path: Path) -> Work | None:
    """Modified tracked files, staged changes and untracked files git does
    not ignore (``git status``; ``.lac/`` ignores itself). None: the desk is
    gone (removed meanwhile, say by another ``desks --prune``)."""
    try:
        out = git("status", "--porcelain=v1", "-z", "--untracked-files=all", cwd=path)
    except CannotWorkHere:
        if not os.path.isdir(path):
            return None
        raise
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
        number = _task_number(out.decode("utf-8", "replace"))
        if number is None:
            continue
        inst = read_instance(tree.git_dir / INSTANCE_FILE)
        found.append(Desk(tree.path, number, tree.branch, inst.id if inst else None, tree.missing))
    return found


def contains(repo: Repo, destination: str, tip: str) -> bool:
    try:
        git("merge-base", "--is-ancestor", tip, destination, cwd=repo.toplevel)
    except CannotWorkHere:
        return False
    return True


@contextlib.contextmanager
def pruning(repo: Repo) -> Iterator[None]:
    """One ``desks --prune`` at a time in a clone: ``git worktree remove`` is
    no compare-and-swap, so two at once could both remove, and both report,
    one desk."""
    import fcntl

    where = default_root(repo).parent / "desks-prune.lock"
    where.parent.mkdir(parents=True, exist_ok=True)
    with open(where, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def remove(repo: Repo, desk: Desk) -> None:
    """``git worktree remove`` without ``--force``: git's own check has the last word."""
    git("worktree", "remove", str(desk.path), cwd=repo.toplevel)


def delete_branch(repo: Repo, branch: str, tip: str) -> None:
    """Delete ``branch`` only while it is still at ``tip`` (checked by git)."""
    git("update-ref", "-d", f"refs/heads/{branch}", tip, cwd=repo.toplevel)
