"""Landing: a claim's branch and tip, and claims whose locks wait
for their work to reach the destination.

Whether work has landed is git's answer (:mod:`git_lacunari.landing`), asked
by whoever sees the destination; the board records the claim's tip, keeps a
landing claim's write locks, and settles it when told that tip has landed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..errors import BuiltOn, InvalidInput, NotOpen
from ..model import EventKind, Lock, LockMode, PathSpec, Task, TaskState
from .claims import Claims
from .validate import validate_branch, validate_task_id, validate_tip

DEFAULT_LANDING_PERIOD_S = 24 * 3600.0
HOW = ("merged", "rebased", "cherry-picked", "squashed")  # landing.LandedBy


class Landings(Claims):
    def claim_tracks(self) -> list[tuple[int, str | None, str | None]]:
        """Our claims here: (task, branch, tip) as recorded for each."""
        return [(task, branch, tip) for task, branch, tip, _ in self.claim_tracks_landing()]

    def claim_tracks_landing(self) -> list[tuple[int, str | None, str | None, bool]]:
        """:meth:`claim_tracks`, each with whether it is landing."""
        rows = self.store.all("claim_tracks", agent=self.agent, instance=self.instance)
        return [(int(r["id"]), r["branch"], r["tip"], r["landing_since"] is not None) for r in rows]

    def held_by_task(self, task_id: int) -> list[Lock]:
        """The locks a claim holds (a landing claim: its kept write locks)."""
        with self.store.read():
            return self._task_locks(validate_task_id(task_id))

    def track(self, tracks: Sequence[tuple[int, str | None, str]]) -> list[int]:
        """Move our claims here to the tips given, ``(task, branch, tip)``
        each (a None branch keeps the one recorded); the ids that moved."""
        checked = [
            [validate_task_id(t), validate_branch(b), validate_tip(tip)] for t, b, tip in tracks
        ]
        if not checked:
            return []
        with self.store.write():
            rows = self.store.all(
                "track_claims",
                agent=self.agent,
                instance=self.instance,
                tracks=json.dumps(checked),
            )
        return sorted(int(r["id"]) for r in rows)

    def land(self, task_id: int, *, branch: str | None, tip: str) -> Task:
        """``done`` before the work is in the destination: our claim stays,
        landing, with its write locks; its read locks are freed."""
        task_id = validate_task_id(task_id)
        branch, tip = validate_branch(branch), validate_tip(tip)
        with self.store.write():
            row = self.store.one(
                "land",
                task_id=task_id,
                agent=self.agent,
                instance=self.instance,
                branch=branch,
                tip=tip,
            )
            if row is None:
                task = self._require_task(task_id)
                if task.state == TaskState.CLAIMED and task.owner == self.agent:
                    raise self._elsewhere(task, "--take-over on a claim moves it here first")
                if task.state == TaskState.CLAIMED:
                    raise self._not_ours(task)
                raise NotOpen(
                    task=task_id, state=task.state, advice="claim it before marking it done"
                )
            freed = [
                r["pattern"] for r in self.store.all("delete_task_read_locks", task_id=task_id)
            ]
            kept = [r["pattern"] for r in self.store.all("task_locks", task_id=task_id)]
            self._event(
                EventKind.LANDING, task_id, tip=tip, branch=row["branch"], unlocked=freed, kept=kept
            )
            task = Task.from_row(row)
            task.locks = self._task_locks(task_id)
            return task

    def release(self, task_id: int, *, force: bool = False, reason: str | None = None) -> Task:
        """:meth:`Claims.release`, but a landing claim another live claim is
        built on (stacked on its line: that claim's locks were granted
        beside it) is refused without ``force``: released, the stacked line
        would land its commits while its task stood open for someone to
        redo. Nothing is changed by the refusal."""
        if not force:
            with self.store.read():
                task = self._task_row(validate_task_id(task_id))
            if task is not None and task.landing:
                stacked = self.built_on_by(task.id)
                if stacked:
                    first = stacked[0][0]
                    raise BuiltOn(
                        task=task.id,
                        built_on_by=stacked,
                        advice=(
                            f"released, #{first} would land its commits and #{task.id} would "
                            f"stand open to be done again; let them land (the claim settles "
                            f"then), or `git lac release {task.id} --force --reason TEXT`"
                        ),
                    )
        return super().release(task_id, force=force, reason=reason)

    def built_on_by(self, task_id: int) -> list[tuple[int, str]]:
        """The live claims ``(task, holder)`` built on landing claim
        ``task_id``: a ``locked`` event of their holder's names it among the
        lines its locks were granted beside (``built_on``), oldest id first."""
        found: list[tuple[int, str]] = []
        for other in self.tasks(state=TaskState.CLAIMED):
            if other.id == task_id or other.owner is None:
                continue
            if any(
                e.kind == EventKind.LOCKED
                and e.agent == other.owner
                and task_id in (e.detail.get("built_on") or ())
                for e in self.log(other.id)
            ):
                found.append((other.id, other.owner))
        return found

    def landing_claims(self) -> list[Task]:
        """Every claim that waits for its work to land, oldest id first."""
        with self.store.read():
            return [Task.from_row(r) for r in self.store.all("landing_claims")]

    def settle_landed(self, task: Task, how: str) -> Task | None:
        """``task``'s work has landed (``how``: merged, rebased,
        cherry-picked, squashed) at the tip it had when it was read: done,
        its locks freed. None when the claim changed since (released,
        expired, settled, or a new tip)."""
        if how not in HOW:
            raise InvalidInput(f"work lands {', '.join(HOW)}, not {how!r}")
        if task.tip is None:
            return None
        with self.store.write():
            row = self.store.one("landed", task_id=task.id, tip=task.tip, how=how, agent=self.agent)
            if row is None:
                return None
            locks = [r["pattern"] for r in self.store.all("delete_task_locks", task_id=task.id)]
            self._event(
                EventKind.LANDED, task.id, how=how, tip=task.tip, holder=task.owner, locks=locks
            )
            self.store.one("notify_work", lane=task.lane)
            return Task.from_row(row)

    def live_claims(self) -> list[Task]:
        """Every claim whose tip is known, with its declared paths."""
        with self.store.read():
            tasks = [Task.from_row(r) for r in self.store.all("live_claims")]
            paths: dict[int, list[PathSpec]] = {}
            for r in self.store.all("live_claim_paths") if tasks else ():
                spec = PathSpec(r["pattern"], LockMode.stored(r["mode"]))
                paths.setdefault(int(r["task_id"]), []).append(spec)
            for task in tasks:
                task.paths = paths.get(task.id, [])
        return tasks

    def landing_period(self) -> float:
        row = self.store.one("get_setting", name="landing_period")
        return float(row["value"]) if row else DEFAULT_LANDING_PERIOD_S

    def set_landing_period(self, seconds: float) -> None:
        with self.store.write():
            self.store.run("set_setting", name="landing_period", value=repr(float(seconds)))

    def _task_locks(self, task_id: int) -> list[Lock]:
        return [Lock.from_row(r) for r in self.store.all("task_locks", task_id=task_id)]
