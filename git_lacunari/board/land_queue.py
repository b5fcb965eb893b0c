"""The landing queue (``git lac land``): the board's side of a returned line.

The lander (:mod:`git_lacunari.land_queue`) takes landing lines onto the
destination; one it cannot take (a conflict there, a failed
``lac.land.check``) goes back to its holder here: the claim stays the
holder's, in work, with its locks, ``returned`` with why. A line that lands
is settled by :meth:`Landings.settle_landed`, the one rule for that.
"""

from __future__ import annotations

import json
from typing import Any

from ..model import EventKind, Task
from .landing import Landings
from .validate import validate_task_id, validate_tip


class LandQueue(Landings):
    def return_line(self, task: Task, detail: dict[str, Any]) -> Task | None:
        """``task``'s landing line (at the tip it had when read) goes back to
        its holder with ``detail`` (why); None when the claim changed since
        (landed, released, expired, a new tip)."""
        task_id = validate_task_id(task.id)
        if task.tip is None:
            return None
        tip = validate_tip(task.tip)
        with self.store.write():
            row = self.store.one(
                "return_line", task_id=task_id, tip=tip, detail=json.dumps(detail), agent=self.agent
            )
            if row is None:
                return None
            self._event(EventKind.RETURNED, task_id, holder=task.owner, **detail)
            return Task.from_row(row)

    def returned_claims(self, *, mine: bool = False) -> list[Task]:
        """The claims whose landing line came back (``mine``: ours only)."""
        with self.store.read():
            tasks = [Task.from_row(r) for r in self.store.all("returned_claims")]
        return [t for t in tasks if not mine or t.owner == self.agent]
