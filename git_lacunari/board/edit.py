"""Edit time: what the agent-harness hook asks of the board."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from .. import paths
from ..model import Conflict, LockMode, PathSpec
from .locks import Locks
from .notices import Notice, taken_from


@dataclass
class EditView:
    """:meth:`EditTime.edit_view`'s answer."""

    others: list[Conflict]  # other agents' locks covering the paths
    covered: set[str]  # the paths one of our own write locks here covers
    claims: list[int]  # our claims here, in work before landing, newest first
    in_work: list[int]  # those not landing, newest first
    oldest_heartbeat_age: float | None  # seconds, on the board's clock
    now: float | None
    # What was taken from us here (a claim force-released or expired, locks
    # force-unlocked), oldest first: the edit hook tells it (lease_notices.py).
    taken: list[Notice] = field(default_factory=list)


class EditTime(Locks):
    def edit_view(self, changed: Sequence[str]) -> EditView:
        """What the edit hook needs about these repo-relative paths (a
        directory with a trailing ``/`` stands for everything below it, and
        ``./`` for the whole work tree), in
        one consistent read: other agents' locks covering them (as the guards
        see them) or, for a directory, inside it too; those our own locks
        here cover; our claims here, newest first, with the board's clock;
        and what was taken from us here (take-over notices)."""
        # A directory (``d/``) is asked as everything below it, ``d/**``: the
        # key index then reads the locks under ``d/`` and those of its
        # ancestors (globs such as ``**/*.py``), not every lock of the board.
        # The top of the work tree (``./``) is everything: ``**``.
        below = {
            ("**" if t == "./" else paths.literal(t.rstrip("/")) + "/**"): t
            for t in changed
            if t.endswith("/")
        }
        concrete = [p.rstrip("/") for p in changed if p != "./"]
        with self.store.read():
            holdings = self.covering(concrete)
            inside = [
                replace(c, path=below[c.path])  # said as the directory asked for
                for c in self._conflicts([PathSpec(b, LockMode.WRITE) for b in below])
            ]
            claims = self.store.all("own_claims", agent=self.agent, instance=self.instance)
            # In the same read: the hook tells a lost claim at the next edit.
            taken = self.store.all("taken_events_about", agent=self.agent, instance=self.instance)
        now = float(claims[0]["now"]) if claims else None
        # Covered for an edit: by a write lock of ours. A path our claim only
        # reads is undeclared for writing (its read lock goes at done, before
        # the change lands).
        ours = {
            h.path
            for h in holdings
            if self._is_ours(h.lock.agent, h.lock.instance) and h.lock.mode == LockMode.WRITE
        }
        others = [h for h in holdings if not self._is_ours(h.lock.agent, h.lock.instance)]
        seen = {h.lock.id for h in others}
        others += [c for c in inside if c.lock.id not in seen]
        return EditView(
            others=others,
            covered={p for p in changed if p.rstrip("/") in ours},
            claims=[int(r["id"]) for r in claims],
            in_work=[int(r["id"]) for r in claims if r["landing_since"] is None],
            oldest_heartbeat_age=(
                max(float(r["now"]) - float(r["heartbeat_at"] or 0.0) for r in claims)
                if claims
                else None
            ),
            now=now,
            taken=taken_from(taken, self.agent, self.instance),
        )
