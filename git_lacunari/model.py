"""The records the board hands out, with their JSON form."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

STATES = ("open", "claimed", "done", "cancelled", "parked")
DEFAULT_LANE = "default"
DEFAULT_STALE_AFTER_S = 30 * 60.0


def _json_value(value: Any) -> Any:
    # SQLite hands JSON columns back as text, PostgreSQL's jsonb as objects.
    return json.loads(value) if isinstance(value, str) else value


@dataclass
class PathSpec:
    pattern: str
    mode: str  # 'r' or 'w'


@dataclass
class Lock:
    id: int
    pattern: str
    mode: str
    agent: str
    task_id: int | None
    acquired_at: float
    base_blob: str | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Lock:
        return cls(
            id=int(row["id"]),
            pattern=row["pattern"],
            mode=row["mode"],
            agent=row["agent"],
            task_id=None if row["task_id"] is None else int(row["task_id"]),
            acquired_at=float(row["acquired_at"]),
            base_blob=row["base_blob"],
        )

    @property
    def where(self) -> str:
        return f"on task #{self.task_id}" if self.task_id is not None else "(no task)"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Conflict:
    """A requested pattern that overlaps a lock held by another agent."""

    requested: str
    mode: str
    lock: Lock

    @property
    def message(self) -> str:
        kind = "reading" if self.lock.mode == "r" else "holds"
        return f"{self.lock.agent} {kind} {self.lock.pattern} {self.lock.where}"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.requested,
            "mode": self.mode,
            "holder": self.lock.agent,
            "task": self.lock.task_id,
            "pattern": self.lock.pattern,
            "holder_mode": self.lock.mode,
        }


@dataclass
class Task:
    id: int
    title: str
    body: str
    lane: str
    priority: int
    state: str
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

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Task:
        return cls(
            id=int(row["id"]),
            title=row["title"],
            body=row["body"],
            lane=row["lane"],
            priority=int(row["priority"]),
            state=row["state"],
            owner=row["owner"],
            claimed_at=row["claimed_at"],
            heartbeat_at=row["heartbeat_at"],
            stale_after=row["stale_after"],
            attempts=int(row["attempts"]),
            needs=list(_json_value(row["needs"])),
            created_at=float(row["created_at"]),
            created_by=row["created_by"],
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["locks"] = [lock.to_json() for lock in self.locks]
        return data


@dataclass
class Event:
    id: int
    at: float
    task_id: int | None
    agent: str
    kind: str
    detail: dict[str, Any]

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Event:
        return cls(
            id=int(row["id"]),
            at=float(row["at"]),
            task_id=None if row["task_id"] is None else int(row["task_id"]),
            agent=row["agent"],
            kind=row["kind"],
            detail=dict(_json_value(row["detail"])),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
