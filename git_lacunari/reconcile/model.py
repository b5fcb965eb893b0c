"""What a reconcile found and did, as data: the merge computed per path, and
what ``--abort`` and ``--continue`` did. No git, no board, no text for people:
:mod:`git_lacunari.views.reconcile` renders these."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

NULL_OID = "0" * 40


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


@dataclass(frozen=True)
class Merged:
    """``git lac reconcile REF``: the merge, written (or, in a dry run, planned)."""

    reconciliation: Reconciliation
    dry_run: bool


@dataclass(frozen=True)
class Aborted:
    """``--abort``: the reconcile of ``ref`` undone; ``notes`` for people
    (a stale index.lock removed)."""

    ref: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finished:
    """``--continue``: committed and recorded, or (``left``) not yet."""

    ref: str
    paths: list[str]
    left: list[str]  # conflicts still unresolved: nothing was committed


ReconcileOutcome = Merged | Aborted | Finished
