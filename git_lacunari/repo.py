"""Git access through the ``git`` CLI, for what must match git exactly.

The hot path (every command, every hook) needs only where the repository is
and its config; both come from two short ``git`` processes, so nothing heavy
(pygit2) is imported to start a command.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CannotWorkHere, NotARepository

# Bytes of paths given to one git command: far below Linux's argument limit
# (and its 128 KiB cap on one argument string), whatever the environment's size.
ARGV_BUDGET = 64 * 1024
# How long a config write waits for another writer's config.lock to go.
CONFIG_LOCK_WAIT_S = 5.0


def git(*args: str, cwd: Path | str | None = None, input: bytes | None = None) -> bytes:
    """Run git and return stdout; a failure becomes CannotWorkHere with git's message."""
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, input=input, capture_output=True, check=False
        )
    except FileNotFoundError:
        if cwd is not None and not os.path.isdir(cwd):  # what was not found: the directory
            raise CannotWorkHere(f"{cwd} no longer exists") from None
        raise CannotWorkHere("git is not installed or not on PATH") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CannotWorkHere(message[0] if message else f"git {args[0]} failed")
    return proc.stdout


@dataclass
class Repo:
    """One work tree of a repository, as seen from the current directory."""

    toplevel: Path
    git_dir: Path
    common_dir: Path
    prefix: str  # the current directory relative to toplevel, '' or ending in '/'
    config: dict[str, str] = field(default_factory=dict)

    @property
    def is_linked_worktree(self) -> bool:
        return self.git_dir.resolve() != self.common_dir.resolve()

    @property
    def worktree_name(self) -> str | None:
        return self.git_dir.name if self.is_linked_worktree else None

    @property
    def is_server(self) -> bool:
        """Opened at its git dir (:func:`discover_git_dir`): a server's
        repository, bare or not, whose destination is :func:`server_root`."""
        return self.toplevel == self.git_dir

    @property
    def ignorecase(self) -> bool:
        return self.config.get("core.ignorecase", "false").lower() in ("true", "yes", "on", "1")

    def get(self, key: str) -> str | None:
        return self.config.get(key.lower())

    def set_config(self, key: str, value: str) -> None:
        """Write a local config value. Git takes ``config.lock`` with no wait
        and fails at once when another process holds it (two ``git lac init``
        at the same moment, or any git command writing config): retry for a
        bounded time, then fail with git's message."""
        deadline = time.monotonic() + CONFIG_LOCK_WAIT_S
        pause = 0.005
        while True:
            try:
                git("config", "--local", key, value, cwd=self.toplevel)
                break
            except CannotWorkHere as exc:
                if "could not lock config file" not in exc.message:
                    raise
                if time.monotonic() >= deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.1)
        self.config[key.lower()] = value

    def root_commit(self, rev: str = "HEAD") -> str | None:
        """A root commit of ``rev`` (the lowest id, so every clone picks the
        same), or None. In a shallow clone this is a boundary, not a root:
        ask :meth:`is_shallow` first."""
        try:
            out = git("rev-list", "--max-parents=0", rev, "--", cwd=self.toplevel)
        except CannotWorkHere:  # no commit yet
            return None
        roots = sorted(out.decode().split())
        return roots[0] if roots else None

    def remote_root(self, rev: str = "HEAD") -> str | None:
        """The root commit of ``rev`` as its remote knows it (for a shallow
        clone, whose oldest commits are a boundary), or None: no remote, the
        remote cannot be reached or does not have ``rev``.

        Only the commits are fetched (``--filter=tree:0``, where the remote
        allows filters), into a throwaway repository: the clone stays as
        shallow as it was made. The remote is ``rev``'s branch's remote,
        else ``origin``. Never prompts, and gives up after 120 s."""
        import tempfile

        def ask(*args: str, cwd: Path = self.toplevel) -> str | None:
            env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
            try:
                proc = subprocess.run(
                    ["git", *args],
                    cwd=cwd,
                    capture_output=True,
                    check=False,
                    env=env,
                    timeout=120,
                )
            except subprocess.TimeoutExpired:
                return None
            return proc.stdout.decode().strip() if proc.returncode == 0 else None

        commit = ask("rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}")
        if not commit:
            return None
        remotes = (ask("remote") or "").split()
        branch = ask("symbolic-ref", "-q", "--short", "HEAD") if rev == "HEAD" else None
        if "/" in rev and rev.split("/", 1)[0] in remotes:
            remote = rev.split("/", 1)[0]  # origin/main: origin's
        else:
            remote = (branch and ask("config", f"branch.{branch}.remote")) or "origin"
        url = ask("ls-remote", "--get-url", "--", remote) if remote in remotes else None
        if not url:
            return None
        with tempfile.TemporaryDirectory(prefix="lac-root-") as tmp:
            where = Path(tmp)
            if ask("init", "-q", "--bare", str(where)) is None:
                return None
            fetched = ask(
                "fetch", "-q", "--no-tags", "--filter=tree:0", "--", url, commit, cwd=where
            )
            if fetched is None:
                return None
            roots = ask("rev-list", "--max-parents=0", commit, "--", cwd=where)
        return sorted(roots.split())[0] if roots else None

    def is_shallow(self) -> bool:
        """A shallow clone (``--depth``): its oldest commits are a boundary, not roots."""
        out = git("rev-parse", "--is-shallow-repository", cwd=self.toplevel)
        return out.decode().strip() == "true"

    def committed_config(self, key: str, rev: str = "HEAD", name: str = ".lacconfig") -> str | None:
        """``key`` in the file ``name`` as committed at ``rev`` (never the work
        tree's copy, never its includes), or None: no commit, no such file, or
        a file that sets nothing in ``key``'s section (it speaks of other
        things, its subsections included: ``lac.desk.copy`` says nothing of
        ``lac.board``).

        A file that speaks of ``key``'s section speaks for the repository, so
        it fails closed: one git cannot parse, one that is not a file, or one
        that gives ``key`` no value, several different ones, or sets another
        key of its section itself but not ``key`` (``lac.baord``) raises
        :class:`ValueError` saying which (never a silent None that lets a
        default answer)."""
        spec = f"{rev}:{name}"
        # Whether the file is there, from the tree alone: a partial clone
        # (--filter=blob:none) has every tree but may lack the blob, and a blob
        # it cannot fetch is a file that cannot be read, never an absent one.
        entry = subprocess.run(
            ["git", "ls-tree", "-z", "--full-tree", "--end-of-options", rev, "--", name],
            cwd=self.toplevel,
            capture_output=True,
            check=False,
        )
        if entry.returncode != 0:
            is_commit = subprocess.run(
                ["git", "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}"],
                cwd=self.toplevel,
                capture_output=True,
                check=False,
            )
            if is_commit.returncode != 0:
                return None  # no such commit (no commit yet)
            raise ValueError(f"cannot be read (git cannot read the tree of {rev[:80]})")
        if not entry.stdout:
            return None
        if entry.stdout.partition(b"\t")[0].split()[1:2] != [b"blob"]:
            raise ValueError("is not a file")
        proc = subprocess.run(
            ["git", "config", "--no-includes", "--blob", spec, "--list", "-z"],
            cwd=self.toplevel,
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            first = said[0].removeprefix("error: ") if said else f"exit {proc.returncode}"
            raise ValueError(f"cannot be read ({first[:120]})")
        values: list[str | None] = []
        section = key.lower().rpartition(".")[0] + "."
        kin: list[str] = []  # other keys of key's section: a misspelling of it, maybe
        for item in proc.stdout.split(b"\0"):
            found, newline, value = item.partition(b"\n")
            name = found.decode("utf-8", "surrogateescape")
            if name.lower() == key.lower():
                values.append(value.decode("utf-8", "surrogateescape") if newline else None)
            elif name.lower().startswith(section) and "." not in name[len(section) :]:
                # Of the section itself (`lac.baord`), not of a subsection of it
                # (`lac.desk.copy`, a project's other settings): a misspelling, maybe.
                kin.append(name)
        if not values:
            # A file that says nothing of key's section says nothing of key
            # (None: the next source answers); one that sets another key of
            # it (`lac.baord`) meant to say something, and fails closed.
            if kin:
                raise ValueError(f"sets {kin[0][:80]} but no {key}")
            return None
        if any(not (v or "").strip() for v in values):
            raise ValueError(f"gives {key} no value")
        if len({(v or "").strip() for v in values}) > 1:
            raise ValueError(f"sets {key} more than once, to different values")
        return (values[-1] or "").strip()

    def blob_ids(self, paths: list[str]) -> dict[str, str]:
        """Blob id of each path in HEAD (the content a lock starts from)."""
        found: dict[str, str] = {}
        for chunk in _argv_chunks(paths):
            try:
                out = git("ls-tree", "-z", "--full-tree", "HEAD", "--", *chunk, cwd=self.toplevel)
            except CannotWorkHere:  # no commit yet: nothing to start from
                return {}
            found.update(_blob_entries(out))
        return found


SERVER_BRANCHES = ("refs/heads/main", "refs/heads/master")


@dataclass(frozen=True)
class Root:
    """A server's destination branch (full name) and its tip (None: unborn)."""

    ref: str
    commit: str | None
    is_head: bool = False  # the branch HEAD names


def server_root(repo: Repo, after: Mapping[str, str | None] | None = None) -> Root | None:
    """The destination (root) of a bare server repository: the one rule every
    server door uses (the pre-receive guard, its board, the post-receive's
    landings, ``git lac doctor``, ``git lac hooks install --server``).

    ``lac.target`` as a branch when it is set (its tip may be None: not
    pushed yet); else the branch ``HEAD`` names when it has a commit; else
    ``main``, else ``master``; else ``HEAD``'s unborn branch (None: a detached
    HEAD and no such branch). ``after`` answers as the refs will stand once a
    push is applied (a ref to its new commit, or None: deleted).
    """
    moved = dict(after or {})
    target = repo.get("lac.target")
    try:
        out = git("symbolic-ref", "-q", "HEAD", cwd=repo.toplevel)
        head: str | None = out.decode("utf-8", "surrogateescape").strip() or None
    except CannotWorkHere:  # a detached HEAD names no branch
        head = None
    if target:
        wanted = [target if target.startswith("refs/") else f"refs/heads/{target}"]
    else:
        wanted = [*([head] if head else []), *SERVER_BRANCHES]
    out = git(
        "for-each-ref",
        "--format=%(objecttype) %(objectname) %(refname)",
        *wanted,
        cwd=repo.toplevel,
    )
    tips: dict[str, str | None] = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        kind, _, rest = line.partition(" ")
        oid, _, name = rest.partition(" ")
        tips[name] = oid if kind == "commit" else None
    tips.update(moved)
    for name in wanted:
        if tips.get(name):
            return Root(name, tips[name], name == head)
    first = wanted[0] if target else head
    return Root(first, None, first == head) if first else None


def _argv_chunks(items: list[str], budget: int = ARGV_BUDGET) -> Iterator[list[str]]:
    """``items`` cut into runs whose total size stays under ``budget`` bytes, so
    a claim of very many paths never exceeds the system's argument-length limit."""
    chunk: list[str] = []
    size = 0
    for item in items:
        cost = len(item.encode("utf-8", "surrogateescape")) + 1
        if chunk and size + cost > budget:
            yield chunk
            chunk, size = [], 0
        chunk.append(item)
        size += cost
    if chunk:
        yield chunk


def _blob_entries(out: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        _mode, kind, oid = meta.split()
        if kind == b"blob":
            found[name.decode("utf-8", "surrogateescape")] = oid.decode()
    return found


def working_directory() -> Path:
    """The process's working directory; one that was removed under it (a
    shell still in a deleted worktree) is no repository, said in one line."""
    try:
        return Path(os.getcwd())
    except FileNotFoundError:
        raise NotARepository(
            "the current directory no longer exists: cd into a working tree"
        ) from None


def discover(cwd: Path | str | None = None) -> Repo:
    cwd = Path(cwd) if cwd else working_directory()
    try:
        out = git(
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-dir",
            "--git-common-dir",
            "--show-prefix",
            cwd=cwd,
        )
    except CannotWorkHere as exc:
        if "not a git repository" in exc.message:
            raise NotARepository(f"not a git repository: {cwd}") from None
        if is_bare(cwd):
            raise NotARepository(f"{cwd} is {BARE_ADVICE}") from None
        raise NotARepository(f"cannot use {cwd} as a work tree: {exc.message}") from None
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    toplevel, git_dir, common_dir, prefix = lines[0], lines[1], lines[2], lines[3]
    return Repo(
        toplevel=Path(toplevel),
        git_dir=Path(git_dir),
        common_dir=Path(common_dir),
        prefix=prefix,
        config=read_config(cwd),
    )


# What a bare (server) repository is for, said wherever a client's command is
# run in one: its guard is the server's hooks, and it has a board only as
# lac.url and lac.board in its config.
BARE_ADVICE = (
    "a bare repository (a server): git lac's commands run in a clone; here, "
    "`git config lac.url URL` (and `lac.board NAME` for PostgreSQL) and "
    "`git lac hooks install --server` guard pushes"
)


def is_bare(cwd: Path | str) -> bool:
    try:
        out = git("rev-parse", "--is-bare-repository", cwd=cwd)
    except CannotWorkHere:
        return False
    return out.decode().strip() == "true"


def read_config(cwd: Path) -> dict[str, str]:
    """Every config value git sees here (worktree config included); the last one wins."""
    out = git("config", "-z", "--list", cwd=cwd)
    config: dict[str, str] = {}
    for item in out.split(b"\0"):
        if not item:
            continue
        key, _, value = item.decode("utf-8", "surrogateescape").partition("\n")
        config[key.lower()] = value
    return config


def discover_git_dir(cwd: Path | str | None = None) -> Repo:
    """The repository a server hook runs in: bare, or the git dir of a non-bare
    one. Git commands run inside the git dir (``toplevel`` is it), which works
    for both; there is no work tree and no prefix."""
    cwd = Path(cwd) if cwd else working_directory()
    try:
        out = git("rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", cwd=cwd)
    except CannotWorkHere as exc:
        raise NotARepository(f"not a git repository: {cwd} ({exc.message})") from None
    git_dir, common_dir = out.decode("utf-8", "surrogateescape").split("\n")[:2]
    return Repo(
        toplevel=Path(git_dir),
        git_dir=Path(git_dir),
        common_dir=Path(common_dir),
        prefix="",
        config=read_config(cwd),
    )
