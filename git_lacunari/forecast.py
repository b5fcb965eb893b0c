"""Forecast: the collisions coming between live lines of work, before they merge.

Each live claim works on a branch (a tip commit). Against the destination
(``lac.target``) every line has changed some files since it forked from it;
two lines that change one file will meet at merge time, declared or not. For
each such pair the forecast asks git itself whether the merge would conflict:
``git merge-tree --write-tree`` computes the merge as objects only, touching
no working tree, no index and no ref, so it is safe to run anywhere, any time.

The cost is kept to what the answer needs:

- one ``git diff --name-only`` per line, for what it changed since it forked
  from the destination (renames off: a rename is its two paths, so a rename
  against an edit shares a path and is a candidate);
- one ``git merge-tree --stdin`` process for every pair at once, and only for
  the pairs that share a path, or where one line's file is the other's
  directory (the only way two lines with disjoint paths can still conflict).

Pure data in, data out: the board, the terminal and the command line live
elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .paths import covers
from .repo import git

# The pseudo-line that stands for the destination in a pair.
DESTINATION = "destination"


@dataclass(frozen=True)
class Line:
    """One live line of work: a label people read (``#12 dana``), its tip
    commit, and the paths its claim declared (to tell declared from not)."""

    label: str
    tip: str
    declared: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Meeting:
    """Two lines (or a line and the destination) that change the same files."""

    first: str
    second: str
    both: tuple[str, ...]  # files both change since they forked from the destination
    conflicts: tuple[str, ...]  # the files git would leave conflicted
    undeclared: tuple[str, ...]  # of ``both``, those some side's claim did not declare

    @property
    def conflicting(self) -> bool:
        return bool(self.conflicts)


@dataclass(frozen=True)
class Forecast:
    destination: str  # the commit the lines are compared against
    changed: dict[str, tuple[str, ...]]  # label -> files its line changed
    meetings: tuple[Meeting, ...] = field(default=())


def changed_files(cwd: Path, base: str, tip: str) -> tuple[str, ...]:
    """Files ``tip`` changed since it forked from ``base`` (``base...tip``)."""
    out = git("diff", "--no-renames", "--name-only", "-z", f"{base}...{tip}", "--", cwd=cwd)
    return tuple(sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}))


def _nested(a: Iterable[str], b: set[str]) -> bool:
    """Whether a file of one side is a directory of the other (a file/directory
    conflict between otherwise disjoint changes)."""
    for path in a:
        parts = path.split("/")
        if any("/".join(parts[:i]) in b for i in range(1, len(parts))):
            return True
    return False


def merge_conflicts(cwd: Path, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, ...]]:
    """For each (commit, commit) pair, the files git's merge of the two would
    leave conflicted (empty: it merges cleanly). One git process for all."""
    if not pairs:
        return []
    feed = "".join(f"{a} {b}\n" for a, b in pairs).encode()
    out = git(
        "merge-tree",
        "--write-tree",
        "--stdin",
        "-z",
        "--name-only",
        "--no-messages",
        "--allow-unrelated-histories",
        cwd=cwd,
        input=feed,
    )
    # Per merge: status NUL, tree NUL, conflicted names each NUL, then NUL.
    tokens = out.decode("utf-8", "surrogateescape").split("\0")
    results: list[tuple[str, ...]] = []
    at = 0
    for _ in pairs:
        status, at = tokens[at], at + 2  # the status, then the tree id
        names: list[str] = []
        while tokens[at] != "":
            names.append(tokens[at])
            at += 1
        at += 1
        results.append(tuple(sorted(set(names))) if status == "0" else ())
    return results


def _undeclared(
    both: Iterable[str], sides: Sequence[frozenset[str]], ignorecase: bool
) -> tuple[str, ...]:
    """The files some side changed without its claim declaring them (the
    board's own path rule, :func:`paths.covers`)."""
    return tuple(
        path
        for path in both
        if not all(any(covers(p, path, ignorecase) for p in side) for side in sides)
    )


def forecast(
    cwd: Path,
    destination: str,
    lines: Sequence[Line],
    *,
    ignorecase: bool = False,
    with_destination: bool = True,
) -> Forecast:
    """Every pair of ``lines`` that change a common file, and whether git
    would merge them cleanly; with ``with_destination``, each line against
    what the destination changed since the line forked from it."""
    dest = git("rev-parse", "--verify", "-q", f"{destination}^{{commit}}", cwd=cwd)
    dest_id = dest.decode().strip()
    changed = {line.label: changed_files(cwd, dest_id, line.tip) for line in lines}
    candidates: list[tuple[Line | None, Line, tuple[str, ...]]] = []
    for i, a in enumerate(lines):
        mine = set(changed[a.label])
        for b in lines[i + 1 :]:
            theirs = set(changed[b.label])
            both = tuple(sorted(mine & theirs))
            if both or _nested(mine, theirs) or _nested(theirs, mine):
                candidates.append((a, b, both))
        if with_destination:
            moved = set(changed_files(cwd, a.tip, dest_id))
            both = tuple(sorted(mine & moved))
            if both or _nested(mine, moved) or _nested(moved, mine):
                candidates.append((None, a, both))
    pairs = [(first.tip if first else dest_id, second.tip) for first, second, _ in candidates]
    conflicts = merge_conflicts(cwd, pairs)
    meetings = []
    for (first, second, both), conflicted in zip(candidates, conflicts, strict=True):
        sides = (second.declared,) if first is None else (first.declared, second.declared)
        meetings.append(
            Meeting(
                first=first.label if first else DESTINATION,
                second=second.label,
                both=both,
                conflicts=conflicted,
                undeclared=_undeclared(both, sides, ignorecase),
            )
        )
    return Forecast(dest_id, changed, tuple(meetings))
