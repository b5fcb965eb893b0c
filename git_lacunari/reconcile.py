"""Reconcile: bring another line of work onto this one with real three-way merges.

Everything is planned before anything is written: the trees of both sides
and of the base come from one ``git ls-tree`` each, blobs from one
``git cat-file --batch``, and the per-file merges run ``git merge-file`` in
parallel. The base of each file is the content both sides started from,
found by content address: ``--base``, else the blob recorded when the path
was locked, else the merge base, else (unrelated histories) the newest blob of
that path that both histories contain.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .board import Board
from .errors import CannotWorkHere, InvalidInput, Refused
from .repo import Repo, git

Entry = tuple[str, str]  # (mode, blob id)
TEXT_MODES = ("100644", "100755")
PROGRESS_OVER = 200
GIT = shutil.which("git") or "git"
SCRATCH_DIR = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


@dataclass
class FilePlan:
    path: str
    action: str  # take, keep, delete, merge, conflict
    base: str | None = None  # blob id of the base used
    base_source: str | None = None  # --base, lock, merge-base, shared-history, none
    reason: str = ""
    outcome: str = ""  # taken, kept, deleted, merged, conflicted (after a real run)
    theirs: Entry | None = None
    ours: Entry | None = None
    content: bytes | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "action": self.action,
            "base": self.base,
            "base_source": self.base_source,
            "reason": self.reason,
            "outcome": self.outcome,
        }


def _commit(repo: Repo, rev: str, what: str) -> str:
    try:
        return (
            git("rev-parse", "--verify", "-q", f"{rev}^{{commit}}", cwd=repo.toplevel)
            .decode()
            .strip()
        )
    except CannotWorkHere:
        raise InvalidInput(f"{what} {rev!r} is not a commit here") from None


def tree(repo: Repo, commit: str) -> dict[str, Entry]:
    out = git("ls-tree", "-r", "-z", "--full-tree", commit, cwd=repo.toplevel)
    entries: dict[str, Entry] = {}
    for item in out.split(b"\0"):
        if item:
            meta, _, name = item.partition(b"\t")
            mode, _kind, oid = meta.decode().split()
            entries[name.decode("utf-8", "surrogateescape")] = (mode, oid)
    return entries


def read_blobs(repo: Repo, oids: set[str]) -> dict[str, bytes]:
    """Every blob in one `git cat-file --batch`."""
    if not oids:
        return {}
    ordered = sorted(oids)
    proc = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=repo.toplevel,
        input="\n".join(ordered).encode() + b"\n",
        capture_output=True,
        check=True,
    )
    data, pos, blobs = proc.stdout, 0, {}
    for oid in ordered:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        size = int(header[2])
        blobs[oid] = data[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
    return blobs


def history_blobs(repo: Repo, commit: str, paths: list[str]) -> dict[str, list[str]]:
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
            parts = meta.split()
            path = fields[i + 1].decode("utf-8", "surrogateescape")
            found.setdefault(path, []).append(parts[3].decode())
            i += 2
        else:
            i += 1
    return found


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:8000]


def plan(
    repo: Repo, ref: str, *, base_rev: str | None, lock_bases: Callable[[list[str]], dict[str, str]]
) -> list[FilePlan]:
    theirs_commit = _commit(repo, ref, "REF")
    base_commit = _commit(repo, base_rev, "--base") if base_rev else None
    ours_commit = _commit(repo, "HEAD", "HEAD")
    ours, theirs = tree(repo, ours_commit), tree(repo, theirs_commit)
    changed = sorted(p for p in set(ours) | set(theirs) if ours.get(p) != theirs.get(p))
    if base_commit is None:
        merge_base = (
            subprocess.run(
                ["git", "merge-base", ours_commit, theirs_commit],
                cwd=repo.toplevel,
                capture_output=True,
                text=True,
            ).stdout.strip()
            or None
        )
    else:
        merge_base = None
    base_of_trees = base_commit or merge_base
    base_tree = tree(repo, base_of_trees) if base_of_trees else {}
    locked = lock_bases(changed)
    shared: dict[str, str] = {}
    if base_commit is None and merge_base is None:
        # Unrelated histories: the newest blob of the path that both have held.
        mine, other = (
            history_blobs(repo, ours_commit, changed),
            history_blobs(repo, theirs_commit, changed),
        )
        for path in changed:
            theirs_seen = set(other.get(path, []))
            common = [b for b in mine.get(path, []) if b in theirs_seen]
            if common:
                shared[path] = common[0]
    plans = []
    for path in changed:
        o, t = ours.get(path), theirs.get(path)
        if base_commit is not None:
            b, source = base_tree.get(path, (None, None))[1], "--base"
        elif path in locked:
            b, source = locked[path], "lock"
        elif merge_base is not None:
            b, source = base_tree.get(path, (None, None))[1], "merge-base"
        elif path in shared:
            b, source = shared[path], "shared-history"
        else:
            b, source = None, "none"
        plans.append(_classify(path, o, t, b, source))
    return plans


def _classify(path: str, o: Entry | None, t: Entry | None, b: str | None, source: str) -> FilePlan:
    item = FilePlan(path, "", base=b, base_source=source, ours=o, theirs=t)
    o_oid, t_oid = (o[1] if o else None), (t[1] if t else None)
    known = source != "none"  # some base exists (a blob, or a base tree without the path)
    if known and o_oid == b:
        item.action = "take" if t else "delete"
        item.reason = (
            "added on their side"
            if o is None
            else "deleted on their side"
            if t is None
            else "changed only on their side"
        )
    elif known and t_oid == b:
        item.action = "keep"
        item.reason = (
            "added on our side"
            if t is None and b is None
            else "deleted on our side"
            if o is None
            else "changed only on our side"
        )
    elif o is None or t is None:
        if not known:  # nothing shows that the other side deleted it
            item.action = "take" if t else "keep"
            item.reason = "present on one side only"
        else:
            item.action = "conflict"
            item.reason = (
                "deleted by us, modified by them"
                if o is None
                else "modified by us, deleted by them"
            )
    elif o[0] != t[0]:
        item.action = "conflict"
        item.reason = f"mode or type differs (ours {o[0]}, theirs {t[0]}): not merged as text"
    elif o[0] not in TEXT_MODES:
        item.action, item.reason = "conflict", f"not a regular file ({o[0]}): not merged as text"
    else:
        item.action = "merge"
        item.reason = "changed on both sides" if b else "added on both sides"
    return item


def _merge_one(
    item: FilePlan, blobs: dict[str, bytes], scratch: Path, n: int, labels: tuple[str, str, str]
) -> None:
    assert item.ours and item.theirs
    ours, theirs = blobs[item.ours[1]], blobs[item.theirs[1]]
    base = blobs[item.base] if item.base else b""
    if is_binary(ours) or is_binary(theirs) or is_binary(base):
        item.action, item.reason = "conflict", "binary on both sides: not merged as text; kept ours"
        return
    files = []
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        path = scratch / f"{n}.{name}"
        path.write_bytes(data)
        files.append(str(path))
    # Without -p, merge-file writes the result over "ours": no pipes to pump,
    # which is most of the cost of a short process run from Python.
    code = subprocess.call(
        [GIT, "merge-file", "-L", labels[0], "-L", labels[1], "-L", labels[2], *files],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if code < 0 or code > 127:
        raise CannotWorkHere(f"git merge-file failed on {item.path} (exit {code})")
    item.content = Path(files[0]).read_bytes()
    if code != 0:
        item.action, item.reason = "conflict", f"{code} conflicting region(s)"
        item.outcome = "conflicted"
    else:
        item.outcome = "merged"


def merge_texts(repo: Repo, plans: list[FilePlan], echo: Callable[[str], None], ref: str) -> None:
    """Run every text merge (in parallel), so conflicts are known before writing."""
    todo = [p for p in plans if p.action == "merge"]
    oids = {e[1] for p in todo for e in (p.ours, p.theirs) if e} | {p.base for p in todo if p.base}
    oids |= {p.theirs[1] for p in plans if p.action in ("take",) and p.theirs}
    oids |= {p.theirs[1] for p in plans if p.action == "conflict" and p.ours is None and p.theirs}
    blobs = read_blobs(repo, oids)
    for p in plans:
        if p.theirs and p.theirs[1] in blobs and p.action != "merge":
            p.content = blobs[p.theirs[1]]
    if len(todo) > PROGRESS_OVER:
        echo(f"git lac: merging {len(todo)} files with git merge-file…")
    with (
        # Scratch copies for merge-file, in memory where the machine has a tmpfs.
        tempfile.TemporaryDirectory(prefix="lac-merge-", dir=SCRATCH_DIR) as scratch,
        ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool,
    ):
        labels = ("ours (HEAD)", "base", f"theirs ({ref})")
        work = [(n, item) for n, item in enumerate(todo)]
        list(pool.map(lambda nx: _merge_one(nx[1], blobs, Path(scratch), nx[0], labels), work))


def writes_of(plans: list[FilePlan]) -> list[str]:
    return [
        p.path
        for p in plans
        if p.action in ("take", "delete", "merge")
        or (p.action == "conflict" and p.content is not None)
    ]


def apply(repo: Repo, plans: list[FilePlan]) -> None:
    top = repo.toplevel
    stage: list[str] = []
    remove: list[str] = []
    for p in plans:
        target = top / p.path
        if p.action == "keep":
            p.outcome = "kept"
        elif p.action == "delete":
            remove.append(p.path)
            p.outcome = "deleted"
        elif p.action in ("take", "merge") or (p.action == "conflict" and p.content is not None):
            target.parent.mkdir(parents=True, exist_ok=True)
            mode = (p.theirs or p.ours or ("100644", ""))[0]
            if mode == "120000":
                if target.is_symlink() or target.exists():
                    target.unlink()
                os.symlink((p.content or b"").decode("utf-8", "surrogateescape"), target)
            else:
                target.write_bytes(p.content or b"")
                target.chmod(0o755 if mode == "100755" else 0o644)
            if p.action != "conflict":
                stage.append(p.path)
                p.outcome = "taken" if p.action == "take" else "merged"
            else:
                p.outcome = "conflicted"
        else:
            p.outcome = "conflicted"
    if stage:
        git("add", "-f", "--", *stage, cwd=top)
    if remove:
        git("rm", "-q", "--", *remove, cwd=top)


def dirty_paths(repo: Repo, paths: list[str]) -> list[str]:
    if not paths:
        return []
    out = git(
        "status", "--porcelain", "-z", "--untracked-files=all", "--", *paths, cwd=repo.toplevel
    )
    return sorted(
        {item[3:].decode("utf-8", "surrogateescape") for item in out.split(b"\0") if len(item) > 3}
    )


def reconcile(
    repo: Repo,
    board: Board,
    ref: str,
    *,
    base_rev: str | None,
    dry_run: bool,
    echo: Callable[[str], None],
) -> list[FilePlan]:
    plans = plan(repo, ref, base_rev=base_rev, lock_bases=board.lock_bases)
    merge_texts(repo, plans, echo, ref)
    if dry_run:
        return plans
    targets = writes_of(plans)
    dirty = dirty_paths(repo, targets)
    if dirty:
        raise CannotWorkHere(
            f"uncommitted changes to {', '.join(dirty[:5])}"
            f"{' and more' if len(dirty) > 5 else ''} would be overwritten; commit or stash them"
        )
    if targets:
        held = board.held_by_others(targets)
        if held:
            first = held[0]
            raise Refused(
                "path_locked",
                f"{first.lock.agent} holds {first.lock.pattern} {first.lock.where}: "
                f"reconcile would write {first.path}",
                path=first.path,
                holder=first.lock.agent,
                task=first.lock.task_id,
                pattern=first.lock.pattern,
            )
    apply(repo, plans)
    merged = [p.path for p in plans if p.outcome in ("merged", "taken", "deleted")]
    conflicted = [p.path for p in plans if p.outcome == "conflicted"]
    board.record_reconciled(ref, merged, conflicts=conflicted)
    return plans
