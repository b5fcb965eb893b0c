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

The parts, each in its own module:

- :mod:`.model`: the data (per-path outcomes, the merge, what a command did);
- :mod:`.objects`: reading trees, diffs and history with git;
- :mod:`.safety`: what is refused before anything is written;
- :mod:`.merge`: the merge computed as objects only (pure: no writes);
- :mod:`.worktree`: writing it as a merge state, ``--abort``, ``--continue``;
- :mod:`.command`: the command's body, returning data; the views render it.
"""

from __future__ import annotations

from .model import (
    Aborted,
    BaseSource,
    Entry,
    FileResult,
    Finished,
    Merged,
    Outcome,
    ReconcileOutcome,
    Reconciliation,
    Stage,
)

__all__ = [
    "Aborted",
    "BaseSource",
    "Entry",
    "FileResult",
    "Finished",
    "Merged",
    "Outcome",
    "ReconcileOutcome",
    "Reconciliation",
    "Stage",
]
