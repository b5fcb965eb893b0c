"""The merge, computed as objects only: nothing in the work tree, the index
or the board is written here (private refs and a private index aside, both
removed before returning).

The engine is git's own: ``git merge-tree --write-tree`` (the ort strategy).
Where reconcile goes beyond ``git merge`` is the base: a lock's recorded
blob, ``--base``, or for unrelated histories the newest blob both contain,
merged on synthetic commits (see :mod:`git_lacunari.reconcile`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import CannotWorkHere, InvalidInput
from ..repo import Repo, git
from .model import NULL_OID, BaseSource, Entry, FileResult, Outcome, Reconciliation, Stage
from .objects import diff_trees, git_rc, history_blobs, is_oid, path_name, tree_entries
from .safety import refuse_malformed, refuse_unsafe


def _commit(repo: Repo, rev: str, what: str) -> str:
    code, out, _ = git_rc(
        repo, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}"
    )
    oid = out.decode().strip()
    # rev-parse --verify takes "^X" (a negative revision) and prints "^<id>":
    # only a plain object id names one commit.
    if code != 0 or not is_oid(oid):
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
        code, out, _ = git_rc(repo, "rev-parse", *(f"{rev}^{{commit}}" for rev, _ in named), "--")
        oids = [line for line in out.decode().split() if line != "--"] if code == 0 else []
    if len(oids) != len(named) or not all(map(is_oid, oids)):
        oids = [_commit(repo, rev, what) for rev, what in named]  # names the one that fails
    return oids[0], oids[1], (oids[2] if base_rev else None)


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
    code, out, err = git_rc(repo, "merge-base", "--all", ours, theirs)
    if code not in (0, 1):
        raise CannotWorkHere(f"git merge-base failed: {err}")
    bases = out.decode().split()
    locked = {p: (b, BaseSource.LOCK) for p, b in lock_bases(sorted(changed)).items()}
    if not bases:
        # Unrelated histories: the newest blob of each path that both have held.
        paths = sorted(changed)
        mine, other = history_blobs(repo, ours, paths), history_blobs(repo, theirs, paths)
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
    in_base = tree_entries(repo, base_tree, sorted(locked))
    differs = {p: b for p, b in locked.items() if p not in in_base or in_base[p].oid != b[0]}
    if not differs:
        return _Plan(ours, theirs, False, source, base_tree)
    return _synthetic(repo, ours, theirs, base_tree, differs, source)


def _virtual_base(repo: Repo, bases: list[str]) -> str:
    """Several merge bases merged into one tree, conflicts and all, as ort does."""
    current, tree = bases[0], f"{bases[0]}^{{tree}}"
    for other in bases[1:]:
        code, out, err = git_rc(
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
        sides = [tree_entries(repo, c, sorted(overrides)) for c in (ours, theirs)]
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
    mine = tree_entries(repo, ours, ["."])
    diff = diff_trees(repo, ours, theirs)
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
        code, out, err = git_rc(repo, "merge-tree", "--write-tree", "-z", "--messages", left, right)
    finally:
        for refname in refs:
            git_rc(repo, "update-ref", "-d", refname)
    if code not in (0, 1):
        raise CannotWorkHere(f"git merge-tree failed: {err or f'exit {code}'}")
    head, _, rest = out.partition(b"\0")
    stages: list[Stage] = []
    while rest and not rest.startswith(b"\0"):
        item, _, rest = rest.partition(b"\0")
        meta, _, name = item.partition(b"\t")
        mode, oid, stage = meta.decode().split()
        stages.append(Stage(mode, oid, int(stage), path_name(name)))
    # Messages: <count> NUL <path>... NUL <type> NUL <text> NUL, repeated.
    messages: dict[str, list[str]] = {}
    fields = rest[1:].split(b"\0")
    i = 0
    while i < len(fields) and fields[i]:
        count = int(fields[i])
        names = [path_name(f) for f in fields[i + 1 : i + 1 + count]]
        text = path_name(fields[i + 2 + count]).strip()
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
    refuse_malformed(repo, ref, ours, theirs)
    changed = diff_trees(repo, ours, theirs)
    refuse_unsafe(ref, changed)
    if not changed:
        return Reconciliation(ref, ours, theirs, "", True, [])
    plan = _plan(repo, ours, theirs, changed, base, lock_bases)
    tree, clean, stages, messages = _merge_tree(repo, plan, ref)
    written = diff_trees(repo, ours, tree)
    # Renames and directory/file conflicts can put content at paths of their own.
    refuse_unsafe(ref, written)
    refuse_unsafe(ref, {s.path: (None, Entry(s.mode, s.oid)) for s in stages})
    conflicted = {s.path for s in stages}
    paths = sorted(set(changed) | set(written) | conflicted)
    in_base = tree_entries(repo, plan.base_tree, paths) if plan.base_tree else {}
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
