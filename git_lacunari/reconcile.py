"""Reconcile: bring another line of work onto this one, as git merges.

The engine is git's own: ``git merge-tree --write-tree`` (the ort strategy:
renames, modes, symlinks, submodules, several merge bases through a virtual
base) computes the result as objects only, and git writes the work tree
(``git read-tree -m -u``), so git's own checks on every path and its refusal
to write through a symlink apply. Conflicts become a real merge state:
index stages 1/2/3, markers in the files, ``MERGE_HEAD``.

Where reconcile goes beyond ``git merge`` is the base. When a lock recorded
the blob a path had when work on it started, or ``--base`` names a commit,
or the histories are unrelated (the newest blob of a path both histories
contain), the merge runs on synthetic commits: a base commit holding that
content-addressed base tree, and ours' and theirs' trees as its children.
Without any of these, the merge is git's merge of the same two commits.

The other side is untrusted input (a peer's fetched branch): every path it
brings is checked the way git checks paths it checks out
(:func:`paths.checkout_refusal`) before anything is written.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from .edge import Result
from .errors import CannotWorkHere, InvalidInput, PathLocked
from .paths import checkout_refusal
from .repo import Repo, git

if TYPE_CHECKING:  # the board's module is imported only once a board is opened
    from .board import Board
    from .session import Session

NULL_OID = "0" * 40
STATE_FILE = "lac-reconcile.json"
# Operations git leaves half-done in the git dir, during which a merge is wrong.
BUSY_MARKERS = (
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
    ("rebase-merge", "rebase"),
    ("rebase-apply", "rebase or am"),
    ("BISECT_LOG", "bisect"),
)


class Outcome(StrEnum):
    """What happened (or, in a dry run, would happen) to one path."""

    TAKEN = "taken"  # their version, unchanged
    MERGED = "merged"  # a three-way result, different from both sides
    DELETED = "deleted"  # gone, as their side has it
    KEPT = "kept"  # our version stays
    CONFLICTED = "conflicted"  # left as a conflict for a person


class BaseSource(StrEnum):
    """Where the base of the three-way merge came from."""

    GIVEN = "--base"
    LOCK = "lock"  # the blob recorded when the path was locked
    MERGE_BASE = "merge-base"
    VIRTUAL = "virtual-merge-base"  # several merge bases, merged first, as git does
    SHARED = "shared-history"  # unrelated histories: the newest blob both contain
    NONE = "none"  # no common content at all


@dataclass(frozen=True)
class Entry:
    mode: str
    oid: str


@dataclass
class FileResult:
    path: str
    outcome: Outcome
    base_source: BaseSource
    base: str | None
    reason: str
    ours: Entry | None = None  # HEAD's entry (None: the path is new here)

    def to_json(self) -> dict[str, object]:
        return {
            "path": json_path(self.path),
            "outcome": self.outcome.value,
            "base": self.base,
            "base_source": self.base_source.value,
            "reason": json_path(self.reason),
        }


@dataclass(frozen=True)
class Stage:
    mode: str
    oid: str
    stage: int
    path: str


@dataclass
class Reconciliation:
    """A merge computed as objects only: nothing in the work tree or index yet."""

    ref: str
    ours: str  # HEAD's commit
    theirs: str  # REF's commit
    tree: str  # the merged tree (conflicted files with markers)
    clean: bool
    files: list[FileResult]
    stages: list[Stage] = field(default_factory=list)

    @property
    def conflicts(self) -> list[str]:
        return [f.path for f in self.files if f.outcome is Outcome.CONFLICTED]

    @property
    def written(self) -> list[str]:
        """Paths whose content in the work tree changes."""
        return [f.path for f in self.files if f.outcome is not Outcome.KEPT]


# --- git, for what must match git exactly ------------------------------------------


def _git_rc(repo: Repo, *args: str, input: bytes | None = None) -> tuple[int, bytes, str]:
    proc = subprocess.run(
        ["git", *args], cwd=repo.toplevel, input=input, capture_output=True, check=False
    )
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace").strip()


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _commit(repo: Repo, rev: str, what: str) -> str:
    code, out, _ = _git_rc(
        repo, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}"
    )
    oid = out.decode().strip()
    # rev-parse --verify takes "^X" (a negative revision) and prints "^<id>":
    # only a plain object id names one commit.
    if code != 0 or not _is_oid(oid):
        if rev == "HEAD":
            raise CannotWorkHere("HEAD has no commit yet: commit something first")
        raise InvalidInput(f"{what} {rev!r} is not a commit here")
    return oid


def _commits(repo: Repo, ref: str, base_rev: str | None) -> tuple[str, str, str | None]:
    """HEAD, REF and --base as commit ids, in one git process when all resolve."""
    named = [("HEAD", "HEAD"), (ref, "REF"), *([(base_rev, "--base")] if base_rev else [])]
    oids: list[str] = []
    if not any(rev.startswith("-") for rev, _ in named):
        # Without --verify rev-parse takes several revisions; "--" keeps a
        # name that is also a file from being read as one (and is echoed).
        code, out, _ = _git_rc(repo, "rev-parse", *(f"{rev}^{{commit}}" for rev, _ in named), "--")
        oids = [line for line in out.decode().split() if line != "--"] if code == 0 else []
    if len(oids) != len(named) or not all(map(_is_oid, oids)):
        oids = [_commit(repo, rev, what) for rev, what in named]  # names the one that fails
    return oids[0], oids[1], (oids[2] if base_rev else None)


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def shown(text: str) -> str:
    """A path (or git's message about one) as people see it: control and bidi
    characters escaped, so a crafted name cannot forge or hide report lines.
    The one rule is :func:`render.shown`, imported here only when needed."""
    from .render import shown as escaped

    return escaped(text)


def json_path(path: str) -> str:
    """A path for strict JSON: bytes that are not UTF-8 as ``\\xNN``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _diff(repo: Repo, a: str, b: str) -> dict[str, tuple[Entry | None, Entry | None]]:
    """Every path whose entry differs between two trees, with both entries."""
    out = git(
        "diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", a, b, cwd=repo.toplevel
    )
    fields = out.split(b"\0")
    changed: dict[str, tuple[Entry | None, Entry | None]] = {}
    for i in range(0, len(fields) - 1, 2):
        meta = fields[i].split()
        if not meta:
            break
        mode_a, mode_b, oid_a, oid_b = (m.decode().lstrip(":") for m in meta[:4])
        changed[_name(fields[i + 1])] = (
            Entry(mode_a, oid_a) if oid_a != NULL_OID else None,
            Entry(mode_b, oid_b) if oid_b != NULL_OID else None,
        )
    return changed


def _tree_entries(repo: Repo, treeish: str, paths: Sequence[str]) -> dict[str, Entry]:
    if not paths:
        return {}
    out = git("ls-tree", "-r", "-z", "--full-tree", treeish, "--", *paths, cwd=repo.toplevel)
    found: dict[str, Entry] = {}
    for item in out.split(b"\0"):
        if item:
            meta, _, name = item.partition(b"\t")
            mode, _kind, oid = meta.decode().split()
            found[_name(name)] = Entry(mode, oid)
    return found


def _history_blobs(repo: Repo, commit: str, paths: list[str]) -> dict[str, list[str]]:
    """For each path, the blob ids it had in ``commit``'s history, newest first."""
    if not paths:
        return {}
    out = git(
        "log",
        "--no-renames",
        "--raw",
        "-z",
        "--no-abbrev",
        "--format=",
        commit,
        "--",
        *paths,
        cwd=repo.toplevel,
    )
    found: dict[str, list[str]] = {}
    fields = out.split(b"\0")
    i = 0
    while i < len(fields):
        meta = fields[i].strip()
        if meta.startswith(b":") and i + 1 < len(fields):
            found.setdefault(_name(fields[i + 1]), []).append(meta.split()[3].decode())
            i += 2
        else:
            i += 1
    return found


def _read_trees(proc: subprocess.Popen[bytes], oids: list[str]) -> list[bytes]:
    """Raw tree objects from one running `git cat-file --batch`."""
    assert proc.stdin is not None and proc.stdout is not None
    raws = []
    # In chunks whose request fits a pipe's buffer: writing all of a wide
    # level's ids while git's answers fill the other pipe would deadlock.
    for start in range(0, len(oids), 256):
        chunk = oids[start : start + 256]
        proc.stdin.write(b"".join(oid.encode() + b"\n" for oid in chunk))
        proc.stdin.flush()
        for oid in chunk:
            header = proc.stdout.readline().split()
            if len(header) != 3 or header[1] != b"tree":
                raise CannotWorkHere(f"cannot read tree {oid}")
            raws.append(proc.stdout.read(int(header[2])))
            proc.stdout.read(1)  # the newline after each object
    return raws


def _entries(raw: bytes, width: int) -> list[tuple[bytes, bytes, str]]:
    """(mode, name, oid) of a raw tree object, exactly as stored."""
    found, pos = [], 0
    while pos < len(raw):
        space = raw.index(b" ", pos)
        nul = raw.index(b"\0", space)
        found.append((raw[pos:space], raw[space + 1 : nul], raw[nul + 1 : nul + 1 + width].hex()))
        pos = nul + 1 + width
    return found


def _refuse_malformed(repo: Repo, ref: str, ours: str, theirs: str) -> None:
    """Exit 2 for a tree no git would write: an empty name, a name with a
    slash, one name twice. Git's merge machinery assumes well-formed trees
    (some of these crash it), so every tree REF brings that is not ours
    already is read raw and checked, as fsck would, before anything else."""
    proc = subprocess.Popen(
        ["git", "cat-file", "--batch"],
        cwd=repo.toplevel,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        width = 32 if len(ours) == 64 else 20
        level: list[tuple[str, str, str | None]] = [("", f"{theirs}^{{tree}}", f"{ours}^{{tree}}")]
        while level:
            raws = _read_trees(proc, [t for _, t, _ in level] + [o for _, _, o in level if o])
            mine = iter(raws[len(level) :])
            below: list[tuple[str, str, str | None]] = []
            for (prefix, _tree, our_tree), raw in zip(level, raws, strict=False):
                ours_here = (
                    {n: (m, o) for m, n, o in _entries(next(mine), width)} if our_tree else {}
                )
                seen: set[bytes] = set()
                for mode, name, oid in _entries(raw, width):
                    where = prefix + _name(name)
                    if not name or b"/" in name or name in seen:
                        what = (
                            "an empty name"
                            if not name
                            else ("a name with a slash" if b"/" in name else "a name twice")
                        )
                        raise InvalidInput(
                            f"refusing {ref}: its tree {prefix or '/'} has {what} "
                            f"({where!r}; a crafted tree)"
                        )
                    seen.add(name)
                    theirs_mine = ours_here.get(name)
                    if mode == b"40000" and (theirs_mine is None or theirs_mine[1] != oid):
                        sub = theirs_mine[1] if theirs_mine and theirs_mine[0] == b"40000" else None
                        below.append((where + "/", oid, sub))
            level = below
    except (ValueError, OSError) as exc:
        raise InvalidInput(f"refusing {ref}: a tree in it cannot be read ({exc})") from None
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait()


def _refuse_unsafe(ref: str, changed: dict[str, tuple[Entry | None, Entry | None]]) -> None:
    """Exit 2 naming the first path git would refuse to check out; nothing is written."""
    brought = sorted(path for path, (_ours, theirs) in changed.items() if theirs is not None)
    for path in brought:
        why = checkout_refusal(path, changed[path][1].mode)  # type: ignore[union-attr]
        if why:
            raise InvalidInput(
                f"refusing {ref}: its path {path!r} cannot be checked out safely ({why})"
            )
    # A well-formed tree never holds one name as both a file and a directory;
    # a crafted one can (a symlink `evil` beside a directory `evil/`).
    files = set(brought)
    for path in brought:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in files:
                raise InvalidInput(
                    f"refusing {ref}: {parent!r} is both a file and a directory in it "
                    "(a crafted tree)"
                )


# --- the base: git's, or a content-addressed one -------------------------------------


def _write_tree(repo: Repo, base_tree: str | None, overrides: dict[str, Entry | None]) -> str:
    """A tree: ``base_tree`` (or nothing) with ``overrides`` applied, through a
    private index so the real one is never touched."""
    index = repo.git_dir / "lac-reconcile.index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    try:

        def run(*args: str, input: bytes | None = None) -> bytes:
            proc = subprocess.run(
                ["git", *args],
                cwd=repo.toplevel,
                env=env,
                input=input,
                capture_output=True,
                check=False,
            )
            if proc.returncode != 0:
                raise CannotWorkHere(
                    f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}"
                )
            return proc.stdout

        run("read-tree", *([base_tree] if base_tree else ["--empty"]))
        lines = b"".join(
            (f"{e.mode} {e.oid}\t" if e else f"0 {NULL_OID}\t").encode()
            + path.encode("utf-8", "surrogateescape")
            + b"\0"
            for path, e in overrides.items()
        )
        if lines:
            run("update-index", "-z", "--index-info", input=lines)
        return run("write-tree").decode().strip()
    finally:
        index.unlink(missing_ok=True)


def _commit_tree(repo: Repo, tree: str, parent: str | None, message: str) -> str:
    args = ["commit-tree", tree, *(["-p", parent] if parent else []), "-m", message]
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "git-lac",
        "GIT_AUTHOR_EMAIL": "git-lac@localhost",
        "GIT_COMMITTER_NAME": "git-lac",
        "GIT_COMMITTER_EMAIL": "git-lac@localhost",
        "GIT_AUTHOR_DATE": "1970-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "1970-01-01T00:00:00Z",
    }
    proc = subprocess.run(
        ["git", *args], cwd=repo.toplevel, env=env, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise CannotWorkHere(
            f"git commit-tree failed: {proc.stderr.decode(errors='replace').strip()}"
        )
    return proc.stdout.decode().strip()


@dataclass
class _Plan:
    """Which two commits to hand merge-tree, and where each file's base came from."""

    left: str
    right: str
    synthetic: bool
    source: BaseSource  # of every path without a content-addressed base
    base_tree: str | None  # the base actually merged on, to report blobs from
    overrides: dict[str, tuple[str, BaseSource]] = field(default_factory=dict)


def _plan(
    repo: Repo,
    ours: str,
    theirs: str,
    changed: dict[str, tuple[Entry | None, Entry | None]],
    base_commit: str | None,
    lock_bases: Callable[[list[str]], dict[str, str]],
) -> _Plan:
    if base_commit is not None:
        tree = f"{base_commit}^{{tree}}"
        return _synthetic(repo, ours, theirs, tree, {}, BaseSource.GIVEN)
    code, out, err = _git_rc(repo, "merge-base", "--all", ours, theirs)
    if code not in (0, 1):
        raise CannotWorkHere(f"git merge-base failed: {err}")
    bases = out.decode().split()
    locked = {p: (b, BaseSource.LOCK) for p, b in lock_bases(sorted(changed)).items()}
    if not bases:
        # Unrelated histories: the newest blob of each path that both have held.
        paths = sorted(changed)
        mine, other = _history_blobs(repo, ours, paths), _history_blobs(repo, theirs, paths)
        shared: dict[str, tuple[str, BaseSource]] = {}
        for path in paths:
            seen = set(other.get(path, []))
            common = [b for b in mine.get(path, []) if b in seen]
            if common:
                shared[path] = (common[0], BaseSource.SHARED)
        return _synthetic(
            repo, ours, theirs, None, {**shared, **locked}, BaseSource.NONE, unrelated=True
        )
    if len(bases) == 1:
        base_tree, source = f"{bases[0]}^{{tree}}", BaseSource.MERGE_BASE
    else:
        base_tree, source = _virtual_base(repo, bases), BaseSource.VIRTUAL
    in_base = _tree_entries(repo, base_tree, sorted(locked))
    differs = {p: b for p, b in locked.items() if p not in in_base or in_base[p].oid != b[0]}
    if not differs:
        return _Plan(ours, theirs, False, source, base_tree)
    return _synthetic(repo, ours, theirs, base_tree, differs, source)


def _virtual_base(repo: Repo, bases: list[str]) -> str:
    """Several merge bases merged into one tree, conflicts and all, as ort does."""
    current, tree = bases[0], f"{bases[0]}^{{tree}}"
    for other in bases[1:]:
        code, out, err = _git_rc(
            repo, "merge-tree", "--write-tree", "--allow-unrelated-histories", current, other
        )
        if code not in (0, 1):
            raise CannotWorkHere(f"git merge-tree failed: {err}")
        tree = out.decode().split()[0]
        current = _commit_tree(repo, tree, None, "lac virtual base")
    return tree


def _synthetic(
    repo: Repo,
    ours: str,
    theirs: str,
    base_tree: str | None,
    overrides: dict[str, tuple[str, BaseSource]],
    source: BaseSource,
    *,
    unrelated: bool = False,
) -> _Plan:
    """Commits ours' and theirs' trees as children of one base commit holding
    ``base_tree`` with the content-addressed ``overrides``."""
    entries: dict[str, Entry | None] = {}
    if overrides:
        sides = [_tree_entries(repo, c, sorted(overrides)) for c in (ours, theirs)]
        for path, (blob, _source) in overrides.items():
            mode = next((s[path].mode for s in sides if path in s), "100644")
            entries[path] = Entry(mode, blob)
    if unrelated:
        # Paths both sides hold identically are part of the base too, so that
        # they merge as unchanged instead of as added on both sides.
        for path, entry in _same_paths(repo, ours, theirs).items():
            entries.setdefault(path, entry)
    tree = _write_tree(repo, base_tree, entries)
    base = _commit_tree(repo, tree, None, "lac reconcile base")
    left = _commit_tree(repo, f"{ours}^{{tree}}", base, "lac reconcile ours")
    right = _commit_tree(repo, f"{theirs}^{{tree}}", base, "lac reconcile theirs")
    return _Plan(left, right, True, source, tree, overrides)


def _same_paths(repo: Repo, ours: str, theirs: str) -> dict[str, Entry]:
    mine = _tree_entries(repo, ours, ["."])
    diff = _diff(repo, ours, theirs)
    return {p: e for p, e in mine.items() if p not in diff}


# --- the merge ----------------------------------------------------------------------


def _merge_tree(
    repo: Repo, plan: _Plan, ref: str
) -> tuple[str, bool, list[Stage], dict[str, list[str]]]:
    """Run ort on the plan: the tree, whether clean, stage entries, messages by path."""
    # merge-tree labels conflict markers with its arguments, so a real merge
    # is given the names `git merge` would show; synthetic commits get
    # worktree-private refs named after what they stand for.
    refs: list[str] = []
    if not plan.synthetic and not ref.startswith("-"):
        left, right = "HEAD", ref
    else:
        refs = ["refs/worktree/lac-base/HEAD", f"refs/worktree/lac-base/{_label(ref)}"]
        for refname, oid in zip(refs, (plan.left, plan.right), strict=True):
            git("update-ref", "--no-deref", refname, oid, cwd=repo.toplevel)
        left, right = (refname.removeprefix("refs/") for refname in refs)
    try:
        code, out, err = _git_rc(
            repo, "merge-tree", "--write-tree", "-z", "--messages", left, right
        )
    finally:
        for refname in refs:
            _git_rc(repo, "update-ref", "-d", refname)
    if code not in (0, 1):
        raise CannotWorkHere(f"git merge-tree failed: {err or f'exit {code}'}")
    head, _, rest = out.partition(b"\0")
    stages: list[Stage] = []
    while rest and not rest.startswith(b"\0"):
        item, _, rest = rest.partition(b"\0")
        meta, _, name = item.partition(b"\t")
        mode, oid, stage = meta.decode().split()
        stages.append(Stage(mode, oid, int(stage), _name(name)))
    # Messages: <count> NUL <path>... NUL <type> NUL <text> NUL, repeated.
    messages: dict[str, list[str]] = {}
    fields = rest[1:].split(b"\0")
    i = 0
    while i < len(fields) and fields[i]:
        count = int(fields[i])
        names = [_name(f) for f in fields[i + 1 : i + 1 + count]]
        text = _name(fields[i + 2 + count]).strip()
        for path in names:
            messages.setdefault(path, []).append(text)
        i += count + 3
    return head.decode().strip(), code == 0, stages, messages


def _label(text: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in text).strip(".-")
    return safe.replace("..", "-") or "theirs"


def compute(
    repo: Repo,
    ref: str,
    *,
    base_rev: str | None = None,
    lock_bases: Callable[[list[str]], dict[str, str]] = lambda _paths: {},
) -> Reconciliation:
    """The merge of ``ref`` into HEAD as objects only; refuses unsafe paths (exit 2)."""
    ours, theirs, base = _commits(repo, ref, base_rev)
    _refuse_malformed(repo, ref, ours, theirs)
    changed = _diff(repo, ours, theirs)
    _refuse_unsafe(ref, changed)
    if not changed:
        return Reconciliation(ref, ours, theirs, "", True, [])
    plan = _plan(repo, ours, theirs, changed, base, lock_bases)
    tree, clean, stages, messages = _merge_tree(repo, plan, ref)
    written = _diff(repo, ours, tree)
    # Renames and directory/file conflicts can put content at paths of their own.
    _refuse_unsafe(ref, written)
    _refuse_unsafe(ref, {s.path: (None, Entry(s.mode, s.oid)) for s in stages})
    conflicted = {s.path for s in stages}
    paths = sorted(set(changed) | set(written) | conflicted)
    in_base = _tree_entries(repo, plan.base_tree, paths) if plan.base_tree else {}
    files = []
    for path in paths:
        ours_entry, theirs_entry = changed.get(path, (None, None))
        if path in conflicted:
            outcome = Outcome.CONFLICTED
        elif path not in written:
            outcome = Outcome.KEPT
        elif written[path][1] is None:
            outcome = Outcome.DELETED
        elif written[path][1] == theirs_entry:
            outcome = Outcome.TAKEN
        else:
            outcome = Outcome.MERGED
        source = plan.overrides[path][1] if path in plan.overrides else plan.source
        base = in_base[path].oid if path in in_base else None
        said = [m for m in messages.get(path, []) if not m.startswith("Auto-merging")]
        reason = "; ".join(said) or _reason(
            outcome, path in changed, source, ours_entry, theirs_entry
        )
        files.append(FileResult(path, outcome, source, base, reason, ours_entry))
    return Reconciliation(ref, ours, theirs, tree, clean, files, stages)


def _reason(
    outcome: Outcome,
    changed: bool,
    source: BaseSource,
    ours: Entry | None,
    theirs: Entry | None,
) -> str:
    # With no common content at all, a path one side lacks was not deleted there.
    one_side = "present on {} side only" if source is BaseSource.NONE else "added on {} side"
    if outcome is Outcome.KEPT:
        if not changed:
            return "unchanged"
        return one_side.format("our") if theirs is None and ours else "changed only on our side"
    if outcome is Outcome.TAKEN:
        return one_side.format("their") if ours is None else "changed only on their side"
    if outcome is Outcome.DELETED:
        return "deleted on their side"
    if outcome is Outcome.MERGED:
        return "changed on both sides, merged" if changed else "their change carried to this path"
    return "conflict"


# --- writing it: a real merge state ---------------------------------------------------


def _state_path(repo: Repo) -> Path:
    return repo.git_dir / STATE_FILE


def _merge_files(repo: Repo) -> list[Path]:
    return [repo.git_dir / n for n in ("MERGE_HEAD", "MERGE_MSG", "MERGE_MODE")]


def _preflight(repo: Repo, recon: Reconciliation) -> None:
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
    code, _, _ = _git_rc(repo, "diff-index", "--cached", "--quiet", "HEAD", "--")
    if code != 0:
        raise CannotWorkHere("the index has staged changes; commit or stash them first")
    dirty = _dirty(repo, recon)
    if dirty:
        raise CannotWorkHere(
            f"uncommitted changes, untracked or ignored files at {', '.join(map(shown, dirty[:5]))}"
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
    suspects = {_name(p) for p in out.split(b"\0") if p}
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
    return sorted({_name(item[3:]) for item in out.split(b"\0") if len(item) > 3})


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


def apply(repo: Repo, recon: Reconciliation) -> None:
    """Write the merge as ``git merge --no-commit`` leaves it: index (with
    stages 1/2/3 for conflicts), work tree, MERGE_HEAD, MERGE_MSG, ORIG_HEAD.

    The state file is written first, so that even a SIGKILL half-way leaves
    something `--abort` can undo (it restores the paths the merge writes)."""
    state = _State(recon.ref, recon.ours, recon.theirs, recon.written, recon.conflicts)
    with _uninterrupted():
        _save_state(repo, state)
        (repo.git_dir / "ORIG_HEAD").write_text(recon.ours + "\n")  # as `git merge` does
        # Git writes the work tree: it refuses unsafe paths, never writes through
        # a symlink, and a two-tree read-tree keeps unrelated local changes. It
        # checks everything before it writes anything.
        code, _, err = _git_rc(repo, "read-tree", "-m", "-u", recon.ours, recon.tree)
        if code != 0:
            _state_path(repo).unlink(missing_ok=True)
            first = err.splitlines()[0] if err else f"exit {code}"
            raise CannotWorkHere(f"git refused to write the merge, nothing written: {first}")
        if recon.stages:
            conflicted = sorted({s.path for s in recon.stages})
            lines = b"".join(_index_line("0", NULL_OID, None, p) for p in conflicted)
            lines += b"".join(_index_line(s.mode, s.oid, s.stage, s.path) for s in recon.stages)
            git("update-index", "-z", "--index-info", input=lines, cwd=repo.toplevel)
        merge_head, merge_msg, merge_mode = _merge_files(repo)
        message = f"Reconcile {recon.ref}\n"
        if recon.conflicts:
            message += "\n# Conflicts:\n" + "".join(f"#\t{p}\n" for p in recon.conflicts)
        merge_msg.write_text(message)
        merge_mode.write_text("no-ff")
        merge_head.write_text(recon.theirs + "\n")
        state.phase = "merging"
        _save_state(repo, state)


def unmerged(repo: Repo) -> list[str]:
    out = git("diff", "--name-only", "-z", "--diff-filter=U", cwd=repo.toplevel)
    return sorted({_name(p) for p in out.split(b"\0") if p})


@dataclass
class _State:
    """What `--abort` and `--continue` need, in the worktree's git dir."""

    ref: str
    orig_head: str
    theirs: str
    paths: list[str]
    conflicts: list[str]
    phase: str = "applying"  # then "merging", once MERGE_HEAD is written


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
    code, out, _ = _git_rc(repo, "rev-parse", "-q", "--verify", f"{rev}^{{commit}}")
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


def abort_reconcile(repo: Repo) -> str:
    """Back to exactly the state before the reconcile; returns its REF."""
    state = _in_progress(repo)
    if state.phase == "applying":
        _restore(repo, state)  # interrupted half-way: put back every path it writes
    else:
        # What `git merge --abort` does: reset the merge's paths and keep other
        # unstaged changes (reconcile refused to start over any path it writes).
        code, _, err = _git_rc(repo, "reset", "-q", "--merge", state.orig_head)
        if code != 0:
            raise CannotWorkHere(
                f"cannot undo the reconcile: {err.splitlines()[0] if err else code}",
                hint="git lac: changes made since the reconcile are in the way; "
                "keep them elsewhere or drop them (git checkout -- PATH), then --abort again",
            )
    for path in [*_merge_files(repo), _state_path(repo)]:
        path.unlink(missing_ok=True)
    return state.ref


def _restore(repo: Repo, state: _State) -> None:
    """The paths a merge writes, back as HEAD has them (index and work tree).
    reconcile refused to start over local changes to any of them, so this
    loses nothing; it never follows a symlink out of the work tree."""
    in_head = _tree_entries(repo, state.orig_head, state.paths)
    added = [p for p in state.paths if p not in in_head]
    if added:
        literal = [f":(literal){p}" for p in added]
        git(
            "rm",
            "-q",
            "-r",
            "-f",
            "--cached",
            "--ignore-unmatch",
            "--",
            *literal,
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
        literal = [f":(literal){p}" for p in in_head]
        git("checkout", "-q", "-f", state.orig_head, "--", *literal, cwd=repo.toplevel)


@dataclass(frozen=True)
class Finished:
    ref: str
    paths: list[str]
    left: list[str]  # conflicts still unresolved: nothing was committed


def finish(repo: Repo, board: Board) -> Finished:
    """Commit a resolved reconcile and record it."""
    state = _in_progress(repo)
    if state.phase == "applying":
        raise CannotWorkHere(
            "the reconcile was interrupted before it finished writing; "
            "undo it with `git lac reconcile --abort` and run it again"
        )
    left = unmerged(repo)
    if left:
        return Finished(state.ref, state.paths, left)
    code, _, err = _git_rc(repo, "commit", "--no-edit", "-q")
    if code != 0:
        lines = err.splitlines()
        raise CannotWorkHere(f"git commit failed: {lines[-1] if lines else f'exit {code}'}")
    board.record_reconciled(state.ref, state.paths, conflicts=[])
    _state_path(repo).unlink(missing_ok=True)
    return Finished(state.ref, state.paths, [])


def refuse_held(board: Board, recon: Reconciliation) -> None:
    """Refuse, before writing anything, a path another agent holds."""
    held = board.held_by_others(recon.written)
    if held:
        raise PathLocked(held, advice=f"reconcile would write {held[0].path}")


def reconcile(
    repo: Repo,
    open_board: Callable[[], Board],
    ref: str,
    *,
    base_rev: str | None,
    dry_run: bool,
) -> Reconciliation:
    """Merge ``ref`` into the work tree. The board is opened only once REF is
    known to be safe, so a refused tree leaves no trace, not even a board."""
    opened: list[Board] = []

    def board() -> Board:
        if not opened:
            opened.append(open_board())
        return opened[0]

    settle(repo, board)
    recon = compute(repo, ref, base_rev=base_rev, lock_bases=lambda p: board().lock_bases(p))
    if not recon.written:
        return recon  # their work is already here: nothing to write or record
    refuse_held(board(), recon)
    _preflight(repo, recon)  # a dry run says what a real run would refuse, too
    if not dry_run:
        # The `reconciled` event is recorded when the merge is committed
        # (--continue, or a plain commit noticed by the next reconcile): an
        # aborted reconcile leaves no trace on the board.
        apply(repo, recon)
    return recon


# --- the command: shared by the click command line and entry.py's fast path ------------


def command(
    session: Session,
    ref: str | None,
    *,
    base_rev: str | None,
    dry_run: bool,
    abort: bool,
    continue_: bool,
) -> Result:
    """`git lac reconcile`, without click: the fast path in :mod:`entry` calls
    it directly, so a reconcile pays for no command-line framework."""
    if sum((abort, continue_, ref is not None)) != 1:
        raise InvalidInput("give exactly one of REF, --abort and --continue")
    if (abort or continue_) and (dry_run or base_rev):
        raise InvalidInput("--abort and --continue take no REF, --base or --dry-run")
    settle(session.repo, session.board)
    if abort:
        undone = abort_reconcile(session.repo)
        return Result({"aborted": json_path(undone)}, f"reconcile of {shown(undone)} aborted")
    if continue_:
        finished = finish(session.repo, session.board())
        done = {"ref": json_path(finished.ref), "paths": [json_path(p) for p in finished.paths]}
        if finished.left:
            return Result(
                {**done, "conflicts": [json_path(p) for p in finished.left]},
                "",
                unfinished=f"{len(finished.left)} conflict(s) left: "
                f"{', '.join(map(shown, finished.left[:5]))}; resolve them and `git add`",
            )
        return Result({**done, "conflicts": []}, f"reconciled {shown(finished.ref)}: committed")
    assert ref is not None
    # The board must answer: reconcile never writes a path it cannot prove free.
    result = reconcile(session.repo, session.board, ref, base_rev=base_rev, dry_run=dry_run)
    counts: dict[str, int] = {}
    for f in result.files:
        counts[f.outcome.value] = counts.get(f.outcome.value, 0) + 1
    lines = [
        f"{f.outcome.value:<10} {shown(f.path)}  "
        f"(base: {f.base_source.value}{' ' + f.base[:12] if f.base else ''}; {shown(f.reason)})"
        for f in result.files
    ]
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "nothing to do"
    left = result.conflicts if not dry_run else []
    return Result(
        {
            "dry_run": dry_run,
            "clean": result.clean,
            "files": [f.to_json() for f in result.files],
            "counts": counts,
            "conflicts": [json_path(p) for p in result.conflicts],
        },
        "\n".join([*lines, f"{'plan' if dry_run else 'reconciled'}: {summary}"]),
        unfinished=(
            f"{len(left)} conflict(s) left; resolve them, `git add`, then "
            "`git lac reconcile --continue` (or --abort)"
            if left
            else None
        ),
    )
