"""Honest leases at edit time: the edit hook tells what was taken from us.

A claim force-released or expired (and locks force-unlocked) is told to its
working tree by the next ``git lac`` command (:meth:`Session.tell`). An agent
that only edits runs none, and an exit-0 stderr never reaches its model, so
the edit hook tells it too, in the harness's protocol, on its own record
(a command having told it does not stop the hook telling it):

- the first edit of a path the lost claim (or lock) held is refused, the
  notice as the refusal's reason: nothing was written over work that is no
  longer held for us; an edit of it again is judged as any edit is;
- any other edit carries the notice once, beside the answer, as context for
  the model (:func:`git_lacunari.agents.answer` renders it: Claude Code's
  ``additionalContext``; a harness with no such field refuses that call,
  saying it, which is the only thing its model reads).

:func:`edit_notice` decides; it returns what to say and whether the call is
refused for it, and each harness renders it. The record is one small file
per working tree and board beside the commands' (``liveness.TOLD_DIR``),
read only when the board names something taken.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from .board import Board
    from .board.notices import Notice
    from .repo import Repo

ADVICE = (
    "nothing was written; it is no longer held for you: `git lac claim` it again "
    "(or edit again to write it anyway)"
)


class EditNotice(NamedTuple):
    """What the edit hook tells: ``text`` (empty: nothing), and whether the
    call is refused for it (it writes a path a lost claim or lock held)."""

    text: str = ""
    refuse: bool = False


def _record_file(board: Board, repo: Repo) -> Path:
    from .liveness import told_file

    told = told_file(board, repo)
    return told.with_name(f"edit-{told.name}")


def _read(file: Path) -> tuple[set[int], set[int]]:
    """(told, refused): the events this working tree's edit hook has said,
    and those whose first edit it has refused. Unreadable: nothing yet."""
    try:
        data = json.loads(file.read_text())
        return {int(i) for i in data["told"]}, {int(i) for i in data["refused"]}
    except (OSError, ValueError, TypeError, KeyError):
        return set(), set()


def _write(file: Path, told: set[int], refused: set[int], live: set[int]) -> None:
    """Only events that still concern us are kept: the record stays small. A
    record that cannot be written leaves the notice to be told again."""
    data = {"told": sorted(told & live), "refused": sorted(refused & live)}
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data) + "\n")
        os.replace(tmp, file)
    except OSError:
        pass


def _held(notice: Notice, written: Sequence[str], ignorecase: bool) -> bool:
    """Does the call write a path the notice's claim or locks held? A
    directory (``d/``) is everything below it; the whole tree (``./``), all."""
    from .paths import covers, overlap

    for path in written:
        for pattern in notice.patterns:
            if path == "./":
                return True
            if path.endswith("/"):
                if overlap(pattern, path.rstrip("/") + "/**", ignorecase):
                    return True
            elif covers(pattern, path, ignorecase):
                return True
    return False


def edit_notice(
    board: Board, repo: Repo, taken: Sequence[Notice], written: Sequence[str]
) -> EditNotice:
    """What this edit hook call tells of ``taken`` (the board's notices for
    this agent here, :attr:`EditView.taken`), recorded as told."""
    if not taken:
        return EditNotice()
    file = _record_file(board, repo)
    told, refused = _read(file)
    fresh = [n for n in taken if n.event not in told]
    hits = [n for n in taken if n.event not in refused and _held(n, written, board.ignorecase)]
    if not fresh and not hits:
        return EditNotice()
    said = list(dict.fromkeys(n.said() for n in [*hits, *fresh]))
    live = {n.event for n in taken}
    if hits:
        _write(
            file, told | {n.event for n in [*hits, *fresh]}, refused | {n.event for n in hits}, live
        )
        return EditNotice("; ".join(said) + f"; {ADVICE}", refuse=True)
    _write(file, told | {n.event for n in fresh}, refused, live)
    return EditNotice("; ".join(said))
