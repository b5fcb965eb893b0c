"""The records the board hands out, with their JSON form."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class TaskState(StrEnum):
    OPEN = "open"
    CLAIMED = "claimed"
    DONE = "done"
    CANCELLED = "cancelled"
    PARKED = "parked"  # failed too often in a drainer; visible, not claimable


class LockMode(StrEnum):
    """The one spelling of a lock mode in every output. The tables store the
    first letter (``r``/``w``: their constraints and the upgrade compare it);
    :attr:`code` and :meth:`stored` are the only translation."""

    READ = "read"
    WRITE = "write"

    @property
    def code(self) -> str:
        return self.value[0]

    @classmethod
    def stored(cls, code: str) -> LockMode:
        return {"r": cls.READ, "w": cls.WRITE}[code]


class EventKind(StrEnum):
    CREATED = "created"
    DEPENDS = "depends"
    CLAIMED = "claimed"  # written by the claiming statement itself
    LOCKED = "locked"
    UNLOCKED = "unlocked"
    RELEASED = "released"
    FORCE_RELEASED = "force_released"
    DONE = "done"
    EXPIRED = "expired"
    FAILED = "failed"
    PARKED = "parked"
    RECONCILED = "reconciled"
    EDITED = "edited"
    CANCELLED = "cancelled"
    REOPENED = "reopened"
    FORCE_UNLOCKED = "force_unlocked"
    LOCKS_EXPIRED = "locks_expired"  # the keeper returned a silent agent's task-less locks
    TAKEN_OVER = "taken_over"  # the same agent moved its claim to another instance
    SETTING = "setting"  # a board setting changed (PostgreSQL writes it: stale-after, case)
    LANDING = "landing"  # done, its work not yet in the destination: write locks kept
    LANDED = "landed"  # its work reached the destination: done, locks freed
    RETURNED = "returned"  # the lander could not land its line: back to its holder (0016)
    GRANTED = "granted"  # a claim was granted values of resource pools (0017)
    FREED = "freed"  # its claim ended: those values went back (written by the database)
    RESOURCE_ADDED = "resource_added"  # values added to a pool
    RESOURCE_REMOVED = "resource_removed"  # values removed from a pool


STATES = tuple(TaskState)
DEFAULT_LANE = "default"
DEFAULT_STALE_AFTER_S = 30 * 60.0


def _json_value(value: Any) -> Any:
    # SQLite hands JSON columns back as text, PostgreSQL's jsonb as objects.
    return json.loads(value) if isinstance(value, str) else value


_EVENT_KINDS = frozenset(k.value for k in EventKind)


@dataclass
class PathSpec:
    pattern: str
    mode: LockMode


@dataclass(frozen=True)
class ResourceValue:
    """One value of a named resource pool (``port`` ``8101``)."""

    name: str
    value: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "value": self.value}


@dataclass
class Lock:
    id: int
    pattern: str
    mode: LockMode
    agent: str
    task_id: int | None
    acquired_at: float
    base_blob: str | None
    instance: str | None = None  # where the holder runs (one working tree of one clone)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Lock:
        return cls(
            id=int(row["id"]),
            pattern=row["pattern"],
            mode=LockMode.stored(row["mode"]),
            agent=row["agent"],
            task_id=None if row["task_id"] is None else int(row["task_id"]),
            acquired_at=float(row["acquired_at"]),
            base_blob=row["base_blob"],
            instance=row.get("instance"),
        )

    @property
    def where(self) -> str:
        return f"on task #{self.task_id}" if self.task_id is not None else "(no task)"

    def to_json(self) -> dict[str, Any]:
        # Its fields as they are (all plain values): dataclasses.asdict's deep
        # copy costs more than the rest of a 100,000-row listing together.
        return dict(self.__dict__)


@dataclass
class Conflict:
    """A path someone wants (or changed) that another agent's lock covers.

    The one record behind every ``path_locked`` refusal: the board's grants
    and ``check``, the guards, reconcile.
    """

    path: str  # as asked for (a pattern) or changed (a path)
    lock: Lock  # the other agent's
    wanted: LockMode = LockMode.WRITE
    heartbeat_at: float | None = None  # of the lock's claim, where the query gave it
    ref: str | None = None  # pre-push: the ref and commit that change the path
    commit: str | None = None
    # The lock's claim's tip while that claim is landing (done, its work not
    # in the destination yet): a line built on that tip is not refused by it.
    landing_tip: str | None = None

    @property
    def message(self) -> str:
        kind = "reading" if self.lock.mode == LockMode.READ else "holds"
        return f"{self.lock.agent} {kind} {self.lock.pattern} {self.lock.where}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "path": self.path,
            "wanted": self.wanted,
            "holder": self.lock.agent,
            "task": self.lock.task_id,
            "pattern": self.lock.pattern,
            "mode": self.lock.mode,
            "heartbeat_at": self.heartbeat_at,
            # null but for a landing claim's lock: every key always present
            "landing_tip": self.landing_tip,
        }
        if self.ref is not None:
            data.update(ref=self.ref, commit=self.commit)
        return data


@dataclass
class Task:
    id: int
    title: str
    body: str
    lane: str
    priority: int
    state: TaskState
    owner: str | None
    claimed_at: float | None
    heartbeat_at: float | None
    stale_after: float | None
    attempts: int
    needs: list[str]
    created_at: float
    created_by: str
    depends_on: list[dict[str, Any]] = field(default_factory=list)
    paths: list[PathSpec] = field(default_factory=list)
    locks: list[Lock] = field(default_factory=list)
    stale: bool = False  # silent longer than its stale-after (Board.mark_stale)
    instance: str | None = None  # where the owner runs, while claimed
    branch: str | None = None  # the branch the claim works on
    tip: str | None = None  # that branch's last commit the board was told of
    landing_since: float | None = None  # done, waiting for its work to land
    # The lander gave its landing line back (0016): since when, and why (the
    # tip, the conflicting paths or the check's exit code and last lines).
    returned_at: float | None = None
    returned: dict[str, Any] | None = None
    # `claim --max-age` (0018): the claim lives at most this long from
    # claimed_at, heartbeats or not (None: no cap; only a claim has one).
    max_age: float | None = None

    @property
    def expires_at(self) -> float | None:
        """When the keeper expires this claim whatever its heartbeat (its
        max-age), on the board's clock; None without one, or once landing."""
        if self.max_age is None or self.claimed_at is None or self.landing:
            return None
        return float(self.claimed_at) + self.max_age

    @property
    def landing(self) -> bool:
        """Claimed, and done by its holder: its write locks wait for its work
        to reach the destination (shown as ``landing``)."""
        return self.state == TaskState.CLAIMED and self.landing_since is not None

    @property
    def is_returned(self) -> bool:
        """Claimed, its landing line given back by the lander (conflict or
        failed check): in work again, its locks still its holder's."""
        return self.state == TaskState.CLAIMED and self.returned_at is not None

    @property
    def shown_state(self) -> str:
        if self.landing:
            return "landing"
        return "returned" if self.is_returned else str(self.state)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Task:
        return cls(
            id=int(row["id"]),
            title=row["title"],
            body=row["body"],
            lane=row["lane"],
            priority=int(row["priority"]),
            state=TaskState(row["state"]),
            owner=row["owner"],
            claimed_at=row["claimed_at"],
            heartbeat_at=row["heartbeat_at"],
            stale_after=None if row["stale_after"] is None else float(row["stale_after"]),
            attempts=int(row["attempts"]),
            needs=list(_json_value(row["needs"])),
            created_at=float(row["created_at"]),
            created_by=row["created_by"],
            instance=row.get("instance"),
            branch=row.get("branch"),
            tip=row.get("tip"),
            landing_since=row.get("landing_since"),
            returned_at=row.get("returned_at"),
            returned=None if row.get("returned") is None else dict(_json_value(row["returned"])),
            max_age=(
                float(row["max_age"])
                if row.get("max_age") is not None and row["state"] == TaskState.CLAIMED
                else None
            ),
        )

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)  # a shallow copy, nested records below (see Lock.to_json)
        data["landing"] = self.landing
        data["shown_state"] = self.shown_state
        data["expires_at"] = self.expires_at
        data["returned"] = dict(self.returned) if self.returned is not None else None
        data["needs"] = list(self.needs)
        data["depends_on"] = [dict(d) for d in self.depends_on]
        data["paths"] = [{"pattern": p.pattern, "mode": p.mode} for p in self.paths]
        data["locks"] = [lock.to_json() for lock in self.locks]
        return data


@dataclass
class Event:
    id: int
    at: float
    task_id: int | None
    agent: str
    kind: EventKind | str  # a kind this code does not know is shown as written
    detail: dict[str, Any]

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Event:
        return cls(
            id=int(row["id"]),
            at=float(row["at"]),
            task_id=None if row["task_id"] is None else int(row["task_id"]),
            agent=row["agent"],
            kind=EventKind(row["kind"]) if row["kind"] in _EVENT_KINDS else str(row["kind"]),
            detail=dict(_json_value(row["detail"])),
        )

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)  # see Lock.to_json; detail is JSON already
