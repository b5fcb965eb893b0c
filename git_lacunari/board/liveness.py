"""Liveness: heartbeats, staleness, the sweep that gives stale claims back."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from .. import rules
from ..model import (
    DEFAULT_STALE_AFTER_S,
    EventKind,
    Task,
    TaskState,
)
from .notices import Notices
from .validate import validate_task_id

SWEEP_EVERY_S = 10.0


class Liveness(Notices):
    def touch(self) -> None:
        """Refresh the heartbeat of all our claims: every command does this,
        in one statement, and says we were seen, in one transaction (one
        commit, so one flush to disk, for both)."""
        with self.store.write():
            self.store.run("heartbeat", agent=self.agent, instance=self.instance, ids=None)
            self.seen()

    def record_holder(self, name: str, what: str) -> None:
        with self.store.write():
            self.store.run("set_setting", name=f"holder:{name}", value=what)

    def holder_of(self, name: str) -> str:
        row = self.store.one("get_setting", name=f"holder:{name}")
        return str(row["value"]) if row else "unknown"

    def heartbeat(self, task_ids: Sequence[int] = ()) -> list[int]:
        ids = sorted({validate_task_id(t) for t in task_ids})
        with self.store.write():
            rows = self.store.all(
                "heartbeat",
                agent=self.agent,
                instance=self.instance,
                ids=json.dumps(ids) if ids else None,
            )
            refreshed = sorted(int(r["id"]) for r in rows)
            for task_id in ids:
                if task_id not in refreshed:
                    raise self._not_held(task_id)
            return refreshed

    def default_stale_after(self) -> float:
        row = self.store.one("get_setting", name="stale_after")
        return float(row["value"]) if row else DEFAULT_STALE_AFTER_S

    def claim_stale_after(self, given: float | None) -> float:
        """The stale-after a new claim carries: its own, else the board's now.
        Recorded in the claim, so neither a later change of the board's nor a
        keeper can make a live claim stale sooner than it was promised."""
        return given if given is not None else self.default_stale_after()

    def set_default_stale_after(self, seconds: float) -> None:
        with self.store.write():
            self.store.run("set_setting", name="stale_after", value=repr(float(seconds)))

    def mark_stale(self, tasks: list[Task], now: float | None = None) -> list[Task]:
        """Set ``stale`` on claims silent longer than their stale-after, at
        ``now`` on the board's clock (read from the store when not given):
        :func:`git_lacunari.rules.is_stale`."""
        if any(t.state == TaskState.CLAIMED for t in tasks):
            default = self.default_stale_after()
            now = self.now() if now is None else now
            for task in tasks:
                if task.state == TaskState.CLAIMED and task.heartbeat_at is not None:
                    task.stale = rules.is_stale(
                        task.state, task.heartbeat_at, task.stale_after, default, now
                    )
        return tasks

    def sweep(self, stale_after: float | None = None) -> list[dict[str, Any]]:
        """Give every stale claim, and every claim in work past its max-age
        (heartbeats or not), back to the board with its path locks, keeping
        its attempt count, and record ``expired`` (previous holder and where
        it was held, silence, why: ``stale`` with its stale-after, or
        ``max_age`` with its max-age and age). ``stale_after`` (a keeper's)
        is a floor for staleness: no claim silent for less is expired stale."""
        # Claims carry their own stale-after; the board's covers claims made
        # before they did. A keeper's own value only ever lengthens it.
        default = self.default_stale_after()
        expired: list[dict[str, Any]] = []
        with self.store.write():
            for row in self.store.all(
                "stale_claims", default_stale=default, at_least=stale_after or 0.0
            ):
                task_id = int(row["id"])
                gone = self.store.one(
                    "expire",
                    state=TaskState.OPEN,
                    task_id=task_id,
                    owner=row["owner"],
                    heartbeat_at=row["heartbeat_at"],
                )
                if not gone:
                    continue  # it heartbeat after we looked
                # PostgreSQL's expire frees the claim's locks itself (and says which).
                locks = list(gone.get("locks") or []) + [
                    r["pattern"] for r in self.store.all("delete_task_locks", task_id=task_id)
                ]
                aged = bool(row["aged"])
                fact = {
                    "task": task_id,
                    "previous_owner": row["owner"],
                    # Where it was held: its holder is told there
                    # (board/notices.py), as for a force release.
                    "previous_instance": row["instance"],
                    "silent_for": round(float(row["silent_for"]), 3),
                    "attempts": int(row["attempts"]),
                    "locks": locks,
                    # Why: past its max-age (heartbeats or not), else stale.
                    "why": "max_age" if aged else "stale",
                }
                if aged:
                    fact["max_age"] = float(row["max_age"])
                    fact["age"] = round(float(row["age"]), 3)
                else:
                    stale = row["stale_after"]
                    fact["stale_after"] = float(stale) if stale is not None else default
                self._event(
                    EventKind.EXPIRED, task_id, **{k: v for k, v in fact.items() if k != "task"}
                )
                self.store.one("notify_work", lane=row["lane"])
                expired.append(fact)
        self._last_sweep = time.monotonic()
        return expired

    def _sweep_now_and_then(self) -> None:
        # Without a keeper a board still recovers: claimers sweep, at most
        # every SWEEP_EVERY_S per Board (so a busy drainer pays one cheap
        # indexed query per interval, and each short-lived CLI call pays one).
        if time.monotonic() - self._last_sweep >= SWEEP_EVERY_S:
            self.sweep()

    def seen(self) -> None:
        """This agent is alive (every command says so, see :meth:`touch`)."""
        self.store.atomic("agent_seen", agent=self.agent)

    def sweep_locks(self, stale_after: float | None = None) -> list[dict[str, Any]]:
        """Give back the task-less locks of agents not seen for the stale
        period (the board's, or ``stale_after``): a ``locks_expired`` event per
        agent with what it held and how long it had been silent."""
        stale = stale_after if stale_after is not None else self.default_stale_after()
        expired: dict[str, dict[str, Any]] = {}
        with self.store.write():
            for row in self.store.all("silent_agent_locks", stale=stale):
                if self.store.one("expire_lock", lock_id=row["id"], stale=stale) is None:
                    continue  # its agent was seen after we looked
                fact = expired.setdefault(
                    row["agent"],
                    {
                        "agent": row["agent"],
                        "silent_for": round(float(row["silent_for"]), 3),
                        "locks": [],
                    },
                )
                fact["locks"].append(row["pattern"])
            for fact in expired.values():
                self._event(
                    EventKind.LOCKS_EXPIRED,
                    None,
                    previous_owner=fact["agent"],
                    silent_for=fact["silent_for"],
                    locks=fact["locks"],
                )
        return list(expired.values())
