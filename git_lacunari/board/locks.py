"""Locks taken without a claim, given back, listed, and checked; the guards' questions."""

from __future__ import annotations

import json
from collections.abc import Sequence

from .. import paths
from ..errors import (
    InvalidInput,
    NotOwner,
)
from ..model import (
    Conflict,
    EventKind,
    Lock,
    LockMode,
)
from ..rules import LandingLine, built_on_detail
from .grants import Grants
from .validate import validate_task_id


class Locks(Grants):
    def lock(
        self,
        patterns: Sequence[str],
        *,
        mode: LockMode = LockMode.WRITE,
        task_id: int | None = None,
        built_on: Sequence[LandingLine] = (),
    ) -> list[Lock]:
        """Lock ``patterns`` (under our claim ``task_id``, or none), or be
        refused whole. ``built_on``: landing lines our branch contains, whose
        locks do not refuse us (:meth:`Grants._conflicts`)."""
        if not patterns:
            raise InvalidInput("name at least one path pattern to lock")
        mode = LockMode(mode)  # one spelling: a stray 'r' fails here, loudly
        specs = self.specs(patterns, ()) if mode == LockMode.WRITE else self.specs((), patterns)
        if task_id is not None:
            task_id = validate_task_id(task_id)
        with self.store.write():
            if task_id is not None:
                self._require_own_claim(task_id, "claim it first")
            locks = self._grant(specs, task_id, built_on)
            if self._granted_new:  # a lock held already is no event (the database agrees)
                on = built_on_detail(built_on)
                self._event(
                    EventKind.LOCKED, task_id, paths=[[lk.pattern, lk.mode] for lk in locks], **on
                )
            return locks

    def unlock(self, patterns: Sequence[str]) -> list[Lock]:
        if not patterns:
            raise InvalidInput("name at least one path pattern to unlock, or --task ID")
        wanted = [self.normalize(p) for p in patterns]
        with self.store.write():
            freed: list[Lock] = []
            for pattern in wanted:
                rows = self.store.all(
                    "delete_agent_lock", agent=self.agent, instance=self.instance, pattern=pattern
                )
                if not rows:
                    raise NotOwner(agent=self.agent, path=pattern)
                freed.extend(Lock.from_row(r) for r in rows)
            self._event(EventKind.UNLOCKED, None, paths=[lk.pattern for lk in freed])
            return freed

    def unlock_task(self, task_id: int) -> list[Lock]:
        task_id = validate_task_id(task_id)
        with self.store.write():
            self._require_own_claim(task_id)
            freed = [Lock.from_row(r) for r in self.store.all("delete_task_locks", task_id=task_id)]
            self._event(EventKind.UNLOCKED, task_id, paths=[lk.pattern for lk in freed])
            return freed

    def locks(self, *, mine: bool = False, path: str | None = None) -> list[Lock]:
        wanted = self.normalize(path) if path is not None else None
        rows = self.store.all("list_locks", agent=self.agent if mine else None)
        found = [Lock.from_row(r) for r in rows]
        if wanted is not None:
            found = [lk for lk in found if paths.overlap(lk.pattern, wanted, self.ignorecase)]
        return found

    def held_by_others(self, changed: Sequence[str]) -> list[Conflict]:
        """Other agents' locks (read or write) covering any of these concrete,
        repo-relative paths: what the guards refuse. One indexed query. Our
        own name's locks held at another instance are another's."""
        return [
            h for h in self.covering(changed) if not self._is_ours(h.lock.agent, h.lock.instance)
        ]

    def held_by_other_agents(self, changed: Sequence[str]) -> list[Conflict]:
        """Locks of agents other than us by name, whatever instance: what the
        server refuses. A push names its pusher, never the working tree it
        was made in, so a holder's own push of its paths passes."""
        return [h for h in self.covering(changed) if h.lock.agent != self.agent]

    def covering(self, changed: Sequence[str]) -> list[Conflict]:
        """Every lock, ours included, covering any of these concrete paths."""
        if not changed:
            return []
        keys = paths.covering_keys(changed)
        rows = self.store.all("covering_locks", keys=json.dumps(keys))
        # Each path is compared only with the locks whose literal head starts
        # it (paths.PrefixIndex), not with every lock of its directories.
        index: paths.PrefixIndex[tuple[Lock, float | None, str | None]] = paths.PrefixIndex()
        for row in rows:
            lock = Lock.from_row(row)
            index.add(lock.pattern, (lock, row["task_heartbeat_at"], row["landing_tip"]))
        found: list[Conflict] = []
        for path in changed:
            for lock, beat, tip in sorted(index.covering_candidates(path), key=lambda c: c[0].id):
                if paths.covers(lock.pattern, path, self.ignorecase):
                    found.append(Conflict(path, lock, heartbeat_at=beat, landing_tip=tip))
        return found

    def lock_bases(self, changed: Sequence[str]) -> dict[str, str]:
        """The blob each of these paths had when it was locked (newest lock wins)."""
        if not changed:
            return {}
        rows = self.store.all("lock_bases", paths=json.dumps(list(changed)))
        return {r["pattern"]: r["base_blob"] for r in rows}

    def record_reconciled(self, ref: str, merged: Sequence[str], conflicts: Sequence[str]) -> None:
        """A ``reconciled`` event for each task whose locked paths were merged."""
        with self.store.write():
            by_task: dict[int | None, list[str]] = {}
            for holding in self.covering(merged):
                by_task.setdefault(holding.lock.task_id, []).append(holding.path)
            for task_id, task_paths in (by_task or {None: list(merged)}).items():
                self._event(
                    EventKind.RECONCILED,
                    task_id,
                    ref=ref,
                    paths=sorted(set(task_paths)),
                    conflicts=list(conflicts),
                )

    def check(self, patterns: Sequence[str]) -> list[Conflict]:
        """May I write these? Every other agent's lock (read or write) in the way."""
        if not patterns:
            raise InvalidInput("name at least one path to check")
        specs = self.specs(patterns, ())
        with self.store.read():
            return self._conflicts(specs)

    def force_unlock(self, patterns: Sequence[str], *, reason: str | None) -> list[Lock]:
        """Remove every agent's lock on exactly these patterns, on the record:
        one ``force_unlocked`` event per task (or one for task-less locks)
        naming each previous holder, as ``release --force`` does for claims."""
        if not (reason and reason.strip()):
            raise InvalidInput("unlock --force needs --reason TEXT: say why for the history")
        if not patterns:
            raise InvalidInput("name at least one path pattern to unlock")
        wanted = sorted({self.normalize(p) for p in patterns})
        with self.store.write():
            freed: list[Lock] = []
            for pattern in wanted:
                rows = self.store.all("delete_pattern_locks", pattern=pattern)
                if not rows:
                    raise NotOwner(
                        agent=self.agent, path=pattern, advice="nobody holds a lock on it"
                    )
                freed.extend(Lock.from_row(r) for r in rows)
            by_task: dict[int | None, list[Lock]] = {}
            for lk in freed:
                by_task.setdefault(lk.task_id, []).append(lk)
            for task_id, locks in by_task.items():
                self._event(
                    EventKind.FORCE_UNLOCKED,
                    task_id,
                    reason=reason,
                    previous_holders=sorted({lk.agent for lk in locks}),
                    # Where each ran, to tell it (board/notices.py).
                    previous_instances={
                        agent: sorted({lk.instance or "" for lk in locks if lk.agent == agent})
                        for agent in sorted({lk.agent for lk in locks})
                    },
                    locks=[[lk.pattern, lk.mode, lk.agent] for lk in locks],
                )
            return freed
