"""Claims: by id, next in a lane, released, done, failed, and what is ready."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    InvalidInput,
    NotFound,
    NotOpen,
    PathLocked,
    Refused,
)
from ..model import (
    DEFAULT_LANE,
    EventKind,
    Lock,
    PathSpec,
    ResourceValue,
    Task,
    TaskState,
)
from ..rules import LandingLine, Meeting, built_on_detail, steer
from .core import COUNT_CAP
from .tasks import Tasks
from .validate import validate_lane, validate_limit, validate_task_id

# How many claimable-but-path-blocked tasks `claim --next` steps over before
# it gives up; each is a cheap indexed query.
MAX_NEXT_SKIPS = 200

# `ready --all` reads the lane this many tasks at a time.
READY_PAGE_SIZE = 500


@dataclass
class ReadyPage:
    """One page of `git lac ready`: each task with None (ready) or why not,
    in the order `claim --next` takes them, and how many more open tasks."""

    lane: str
    rows: list[tuple[Task, Refused | None]]
    more: int = 0
    more_exact: bool = True


# Why `done` refuses a task that is not claimed, by its state.
DONE_ADVICE = {
    TaskState.OPEN: "claim it before marking it done",
    TaskState.DONE: "it is done already: nothing to do",
    TaskState.CANCELLED: "it was cancelled (`git lac task reopen` it to work on it again)",
    TaskState.PARKED: "it failed too often (`git lac task reopen` it to work on it again)",
}


@dataclass
class Claim:
    task: Task
    locks: list[Lock]
    again: bool  # it was already ours: an idempotent retry
    # claim --next, conflict-aware: the better tasks passed over,
    # each with the busy paths its declared paths meet (rules.steer); and
    # the claimer's own landing lines the task taken meets, to start from.
    passed_over: list[Meeting] = field(default_factory=list)
    start_from: list[LandingLine] = field(default_factory=list)
    # --take-over: where the claim was held before it moved here.
    taken_from: str | None = None
    # The resource pools' values the claim holds (granted now, or before).
    resources: list[ResourceValue] = field(default_factory=list)


@dataclass(frozen=True)
class Instance:
    """One working tree an agent has acted from, as the board knows it."""

    id: str
    where: str  # host:path
    last_seen: float
    claims: int  # held there now
    locks: int
    here: bool  # this working tree's own


class Claims(Tasks):
    def claim(
        self,
        task_id: int,
        *,
        writes: Sequence[str] = (),
        reads: Sequence[str] = (),
        stale_after: float | None = None,
        take_over: bool = False,
        resources: Sequence[str] = (),
        max_age: float | None = None,
    ) -> Claim:
        """Claim one task by id, with its declared path locks and the resource
        values it needs, or be refused whole.

        ``take_over``: our agent name holds it from another instance (a crashed
        machine, an old clone); move the claim and its locks here, recorded
        as ``taken_over``. It never takes another agent's claim.
        ``resources``: ``NAME[:N]`` more the task needs (recorded on it, as
        ``writes`` are), granted with what it needed already.

        ``max_age``: the claim lives at most this many seconds from its
        ``claimed_at``, heartbeats or not (:meth:`_cap`).
        """
        task_id = validate_task_id(task_id)
        extra = self.specs(writes, reads)
        needs: list[tuple[str, int]] = []
        if resources:  # bad input before anything is written, even our heartbeat
            with self.store.read():
                needs = self._checked_needs(resources)
        self._ensure_agent()
        stale_after = self.claim_stale_after(stale_after)
        with self.store.write():
            row = self.store.one(
                "claim",
                task_id=task_id,
                agent=self.agent,
                instance=self.instance,
                stale_after=stale_after,
            )
            if row is not None:
                return self._finish_claim(self._cap(row, max_age), extra, again=False, needs=needs)
            current = self.store.one("get_task", task_id=task_id)
            if (
                current is None
                or current["state"] != TaskState.CLAIMED
                or current["owner"] != self.agent
            ):
                raise self._why_not_claimable(task_id)
            if current["instance"] != self.instance:
                if not take_over:
                    raise self._why_not_claimable(task_id)
                return self._moved_here(task_id, current.get("instance"), extra, needs)
            else:
                # Our own claim, here: claiming it again is a harmless retry.
                self.store.run(
                    "heartbeat",
                    agent=self.agent,
                    instance=self.instance,
                    ids=json.dumps([task_id]),
                )
            current = self._cap(current, max_age)
            return self._finish_claim(
                {**current, "has_paths": True, "has_resources": True},
                extra,
                again=True,
                needs=needs,
            )

    def _cap(self, row: dict[str, Any], max_age: float | None) -> dict[str, Any]:
        """``claim --max-age``: cap the claim just made (or claimed again)
        here, in its transaction; the row as it now stands."""
        if max_age is None:
            return row
        self.store.one(
            "cap_claim",
            task_id=int(row["id"]),
            agent=self.agent,
            instance=self.instance,
            max_age=max_age,
        )
        return {**row, "max_age": max_age}

    def instances(self) -> list[Instance]:
        """The working trees our agent has acted from (`git lac instance list`),
        the most recent first, with what each holds now."""
        rows = self.store.all("agent_instances", agent=self.agent)
        return [
            Instance(
                id=r["id"],
                where=f"{r['host']}:{r['path']}",
                last_seen=float(r["last_seen"]),
                claims=int(r["claims"]),
                locks=int(r["locks"]),
                here=r["id"] == self.instance,
            )
            for r in rows
        ]

    def adopt(self, instance: str) -> list[Claim]:
        """Move every claim our agent holds at ``instance`` (another working
        tree of ours: a moved or copied clone, a dead machine) here, with its
        locks, each recorded as ``taken_over``: ``claim --take-over`` for all
        of them at once. Locks taken with `git lac lock` belong to no claim
        and stay; the instance's list says how many."""
        if instance == self.instance:
            raise InvalidInput(f"instance {instance} is this working tree's own")
        if instance not in {i.id for i in self.instances()}:
            raise InvalidInput(
                f"no instance {instance!r} of {self.agent} on this board "
                "(`git lac instance list` shows them)"
            )
        self._ensure_agent()
        moved = []
        with self.store.write():
            for row in self.store.all("instance_claims", instance=instance, agent=self.agent):
                moved.append(self._moved_here(int(row["id"]), instance, []))
        return moved

    def _moved_here(
        self,
        task_id: int,
        previous: str | None,
        extra: list[PathSpec],
        needs: Sequence[tuple[str, int]] = (),
    ) -> Claim:
        """Our claim at ``previous`` moved here with its locks and resource
        values (the one take-over of `claim --take-over` and `instance
        adopt`), naming where it was."""
        current, was = self._take_over(task_id, previous)
        # Its values move with it (they are the task's); a move grants
        # nothing unless ``needs`` (claim --resource) asks, so a pool emptied
        # meanwhile never refuses a move.
        claim = self._finish_claim(
            {**current, "has_paths": True, "has_resources": False}, extra, again=True, needs=needs
        )
        return dataclasses.replace(claim, taken_from=was, resources=self._held(task_id))

    def _take_over(self, task_id: int, previous: str | None) -> tuple[dict[str, Any], str]:
        """Move our agent's claim of ``task_id`` and its locks to this instance;
        the claim, and where it was held (host:path)."""
        was = self.where_of(previous)
        row = self.store.one("take_over", task_id=task_id, agent=self.agent, instance=self.instance)
        if row is None:
            raise self._why_not_claimable(task_id)
        self.store.run("take_over_locks", task_id=task_id, agent=self.agent, instance=self.instance)
        self._event(
            EventKind.TAKEN_OVER,
            task_id,
            previous_instance=previous,
            previous_where=was,
            instance=self.instance,
            where=self.identity.instance_where,
        )
        return dict(row), was

    def _finish_claim(
        self,
        row: dict[str, Any],
        extra: list[PathSpec],
        again: bool,
        lines: Sequence[LandingLine] = (),
        needs: Sequence[tuple[str, int]] = (),
    ) -> Claim:
        """Take the claimed task's path locks, then grant the resource values
        it needs (or raise, rolling the claim back); ``lines``: landing lines
        it starts from, whose locks do not refuse it; ``needs``: resource
        needs to record on it first. A task that needs no resource pays
        nothing for them (its claiming row says so: ``has_resources``)."""
        task = Task.from_row(row)
        for spec in extra:
            self.store.run(
                "insert_task_path", task_id=task.id, pattern=spec.pattern, mode=spec.mode.code
            )
        locks: list[Lock] = []
        if row["has_paths"] or extra:
            task.paths = self._task_specs(task.id)
            locks = self._grant(task.paths, task.id, lines)
        if locks and not again:  # the claiming statement recorded the claim
            on = built_on_detail(lines)
            self._event(
                EventKind.LOCKED, task.id, paths=[[lk.pattern, lk.mode] for lk in locks], **on
            )
        task.locks = locks
        held: list[ResourceValue] = []
        if needs:
            self._add_needs(task.id, needs)
        if (needs or row.get("has_resources")) and not task.landing:
            # A landing claim's work is finished: it is granted nothing more.
            held = self._grant_resources(task.id)
        return Claim(task, locks, again, resources=held)

    def claim_next(
        self,
        lane: str = DEFAULT_LANE,
        *,
        writes: Sequence[str] = (),
        reads: Sequence[str] = (),
        stale_after: float | None = None,
        wait: float | None = None,
        busy: Sequence[str] = (),
        own: Sequence[LandingLine] = (),
        strict: bool = False,
        max_age: float | None = None,
    ) -> Claim:
        """The highest-priority, oldest claimable open task in ``lane`` whose
        paths are free; with ``wait``, block up to that many seconds for one.

        ``busy``: paths other agents' live lines of work change (declared or
        observed); ``own``: the landing lines this claim could start from
        (ours, and others' whose tips our clone has). A task whose declared
        paths meet none of them is preferred, then one that meets only
        those landing lines (the claim names the lines to start from: their
        locks do not refuse it, :meth:`Grants._conflicts`), then one that
        meets another's work, which ``strict`` never takes
        (:func:`rules.steer`)."""
        deadline = time.monotonic() + (wait or 0.0)
        while True:
            try:
                return self._claim_next_once(
                    lane, writes, reads, stale_after, busy, own, strict, max_age
                )
            except NotFound:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise
                self.store.wait_for_work(left)

    def _claim_next_once(
        self,
        lane: str,
        writes: Sequence[str],
        reads: Sequence[str],
        stale_after: float | None,
        busy: Sequence[str] = (),
        own: Sequence[LandingLine] = (),
        strict: bool = False,
        max_age: float | None = None,
    ) -> Claim:
        lane = validate_lane(lane)
        extra = self.specs(writes, reads)
        self._ensure_agent()
        self._sweep_now_and_then()
        # A capped claim takes the general path: the cap is set in the
        # claim's own transaction, never a moment after it.
        if not extra and max_age is None:  # a task declaring no paths meets nothing busy
            # None: the board's stale-after, read by the claiming statement
            # itself (one round trip for the whole claim).
            row = self.store.atomic(
                "claim_next_free",
                lane=lane,
                agent=self.agent,
                instance=self.instance,
                stale_after=stale_after,
            )
            if row is not None:
                return Claim(Task.from_row(row), [], again=False)
        stale_after = self.claim_stale_after(stale_after)
        skipped: list[int] = []  # tried, or passed over: the candidates' query skips them
        short: list[int] = []  # passed over: a resource pool they need has too few free
        passed: list[Meeting] = []  # passed over: their paths meet busy ones
        by_tip: dict[tuple[int | None, str | None], LandingLine] = {
            (line.task, line.tip): line for line in own if line.tip
        }
        stacked: dict[int, list[LandingLine]] = {}  # task -> the landing lines whose locks it meets

        def candidates() -> Iterator[tuple[int, list[str]]]:
            """The claimable tasks whose paths are free, in the board's
            order, with their declared patterns: only these are steered
            among, so a task passed over was one we could have taken."""
            while len(skipped) <= MAX_NEXT_SKIPS:
                candidate = self.store.one(
                    "next_candidate", lane=lane, agent=self.agent, skip=json.dumps(skipped)
                )
                if candidate is None:
                    return
                task_id = int(candidate["id"])
                skipped.append(task_id)
                specs = (self._task_specs(task_id) if candidate["has_paths"] else []) + extra
                if specs:
                    # Held to the end of this transaction: what is free now
                    # stays free until we claim.
                    self._serialize_grants()
                    conflicts = self._conflicts(specs)
                    met = [by_tip.get((c.lock.task_id, c.landing_tip)) for c in conflicts]
                    if None in met:
                        continue  # a lock not of a landing line it can start from
                    stacked[task_id] = [line for line in met if line is not None]
                if candidate.get("has_resources"):
                    # Under the grant lock to the end of this transaction, as
                    # for paths: enough free now stays enough until we claim.
                    self._serialize_grants()
                    if self._resource_shortfall(task_id) is not None:
                        short.append(task_id)
                        continue
                yield task_id, [sp.pattern for sp in specs]

        with self.store.write():
            for task_id, met in steer(
                candidates(), busy, own, passed, strict=strict, ignorecase=self.ignorecase
            ):
                row = self.store.one(
                    "claim",
                    task_id=task_id,
                    agent=self.agent,
                    instance=self.instance,
                    stale_after=stale_after,
                )
                if row is None:  # taken between our look and our claim
                    continue
                row = self._cap(row, max_age)
                lines = {line.task: line for line in stacked.get(task_id, [])}
                lines.update((line.task, line) for line in (met.lines if met else []))
                start_from = sorted(lines.values(), key=lambda line: line.task)
                got = self._finish_claim(row, extra, again=False, lines=start_from)
                got.passed_over = [m for m in passed if m.task != task_id]
                got.start_from = start_from
                return got
        raise NotFound(lane=lane, blocked=[t for t in skipped if t not in short], short=short)

    def release(self, task_id: int, *, force: bool = False, reason: str | None = None) -> Task:
        task_id = validate_task_id(task_id)
        if force and not (reason and reason.strip()):
            raise InvalidInput("--force needs --reason TEXT: say why for the history")
        with self.store.write():
            task = self._require_task(task_id)
            if task.state != TaskState.CLAIMED:
                raise NotOpen(task=task_id, state=task.state, advice="only a claim is released")
            if task.owner != self.agent and not force:
                raise self._not_ours(task, "--force --reason TEXT releases it anyway")
            if task.owner == self.agent and task.instance != self.instance and not force:
                raise self._elsewhere(task, "--force --reason TEXT releases it anyway")
            if (
                self.store.one("release", task_id=task_id, owner=task.owner, agent=self.agent)
                is None
            ):
                raise self._why_not_claimable(task_id)
            locks = self.store.all("delete_task_locks", task_id=task_id)
            freed = [r["pattern"] for r in locks]
            self.store.one("notify_work", lane=task.lane)
            if self._is_ours(task.owner, task.instance):
                self._event(EventKind.RELEASED, task_id, locks=freed)
            else:
                self._event(
                    EventKind.FORCE_RELEASED,
                    task_id,
                    previous_owner=task.owner,
                    previous_instance=task.instance,  # where to tell it (board/notices.py)
                    reason=reason,
                    locks=freed,
                )
            return self._require_task(task_id)

    def done(self, task_id: int) -> Task:
        task_id = validate_task_id(task_id)
        with self.store.write():
            if (
                self.store.one("done", task_id=task_id, agent=self.agent, instance=self.instance)
                is None
            ):
                raise self._not_held(
                    task_id,
                    elsewhere="--take-over on a claim moves it here first",
                    advice=DONE_ADVICE,
                )
            locks = self.store.all("delete_task_locks", task_id=task_id)
            self._event(EventKind.DONE, task_id, locks=[r["pattern"] for r in locks])
            return self._require_task(task_id)

    def fail(
        self, task_id: int, *, status: int, max_attempts: int, reason: str | None = None
    ) -> Task:
        """A run of our claim failed: back on the board with a ``failed``
        event, or parked (visibly, state ``parked``) once it has failed
        ``max_attempts`` times. ``status`` is the command's exit status."""
        with self.store.write():
            task = self._require_own_claim(task_id)
            locks = [r["pattern"] for r in self.store.all("delete_task_locks", task_id=task_id)]
            detail: dict[str, Any] = {"exit_code": status, "attempt": task.attempts, "locks": locks}
            if reason is not None:  # it never ran: why (a worktree that could not be made)
                detail["reason"] = reason
            self._event(EventKind.FAILED, task_id, **detail)
            if task.attempts >= max_attempts:
                self.store.one("park", task_id=task_id, owner=self.agent)
                self._event(
                    EventKind.PARKED, task_id, attempts=task.attempts, max_attempts=max_attempts
                )
            else:
                self.store.one("release", task_id=task_id, owner=self.agent, agent=self.agent)
                self.store.one("notify_work", lane=task.lane)
            return self._require_task(task_id)

    def ready(self, lane: str = DEFAULT_LANE) -> tuple[list[Task], list[tuple[Task, Refused]]]:
        """What ``claim --next`` would take in ``lane``, in its order, and for
        each open task it would not take, why (every open task of the lane)."""
        ready: list[Task] = []
        blocked: list[tuple[Task, Refused]] = []
        for task, refused in self.ready_stream(lane):
            if refused is None:
                ready.append(task)
            else:
                blocked.append((task, refused))
        return ready, blocked

    def ready_page(self, lane: str = DEFAULT_LANE, *, limit: int | None = None) -> ReadyPage:
        """The first ``limit`` open tasks of ``lane`` (None: all) in the order
        ``claim --next`` takes them, each ready or with why not, with its
        paths, locks and dependencies; and how many more open tasks there are
        (counted up to COUNT_CAP beyond the page)."""
        lane = validate_lane(lane)
        limit = validate_limit(limit)
        self._ensure_agent()
        self._sweep_now_and_then()  # as claim --next does, so both see the same board
        with self.store.read():
            rows, _ = self._ready_rows(lane, limit, None)
            more = 0
            if limit is not None and len(rows) == limit:
                row = self.store.one("lane_open_more", lane=lane, cap=limit + COUNT_CAP + 1)
                more = max(0, (int(row["n"]) if row else 0) - limit)
        return ReadyPage(lane, rows, min(more, COUNT_CAP), more <= COUNT_CAP)

    def ready_stream(
        self, lane: str = DEFAULT_LANE, *, page_size: int | None = None
    ) -> Iterator[tuple[Task, Refused | None]]:
        """Every open task of ``lane`` as :meth:`ready_page` judges it, read
        ``page_size`` at a time (each page one read transaction, keyed on
        where the last ended) and handed out as it is read: a listing of a
        million tasks never holds more than one page."""
        lane = validate_lane(lane)
        page_size = page_size or READY_PAGE_SIZE
        self._ensure_agent()
        self._sweep_now_and_then()
        after: tuple[int, float, int] | None = None
        while True:
            with self.store.read():
                rows, after = self._ready_rows(lane, page_size, after)
            yield from rows
            if len(rows) < page_size:
                return

    def _ready_rows(
        self, lane: str, limit: int | None, after: tuple[int, float, int] | None
    ) -> tuple[list[tuple[Task, Refused | None]], tuple[int, float, int] | None]:
        """One page of open tasks after ``after`` (priority, created_at, id),
        judged: one query for the page, one for its details, and one grant
        check per claimable task that declares paths."""
        page = self.store.all(
            "lane_open_page",
            lane=lane,
            agent=self.agent,
            limit=limit,
            after_priority=after[0] if after else None,
            after_created=after[1] if after else None,
            after_id=after[2] if after else None,
        )
        tasks = [Task.from_row(row) for row in page]
        self._fill_details(tasks)
        short = self._resource_shortfalls([int(r["id"]) for r in page if r["claimable"]])
        judged: list[tuple[Task, Refused | None]] = []
        for row, task in zip(page, tasks, strict=True):
            if not row["claimable"]:
                deps = [(int(d["id"]), str(d["state"])) for d in task.depends_on]
                judged.append((task, self._why_not(task.id, task, deps)))
                continue
            conflicts = self._conflicts(task.paths) if task.paths else []
            judged.append((task, PathLocked(conflicts) if conflicts else short.get(task.id)))
        last = (
            (int(page[-1]["priority"]), float(page[-1]["created_at"]), int(page[-1]["id"]))
            if page
            else after
        )
        return judged, last
