"""What reconcile refuses to bring in, before anything is written: what git
would refuse to check out (``.git`` in any spelling, ``..``, a path through a
symlink: :func:`paths.checkout_refusal`), and trees no git would write (an
empty name, a name with a slash, one name twice, a file that is also a
directory). The other side is untrusted input: a peer's fetched branch."""

from __future__ import annotations

import subprocess

from ..errors import CannotWorkHere, InvalidInput
from ..paths import checkout_refusal
from ..repo import Repo
from .model import Entry
from .objects import path_name


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


def refuse_malformed(repo: Repo, ref: str, ours: str, theirs: str) -> None:
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
                    where = prefix + path_name(name)
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


def refuse_unsafe(ref: str, changed: dict[str, tuple[Entry | None, Entry | None]]) -> None:
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
