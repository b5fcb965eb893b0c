"""Take-over notices: a claim or a lock of ours that someone else
removed by force (``release --force``, ``unlock --force``, the page's
force-release), or a claim of ours the keeper expired (stale, or past its
``--max-age``), read back from the events that recorded it.

The force actions and the keeper's expiry record where the holder ran
(``previous_instance``, ``previous_instances``), so a notice reaches the
working tree that held the claim or lock, not every tree of the same agent
name. Events without it were written before notices existed and are never
notices.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import NotOpen, Refused
from ..model import Event, EventKind, TaskState
from ..text import shown
from .core import BoardCore

# How far back along a task's history `done` looks for the force release
# that took it from us (stopping at our own latest claim of it).
TASK_HISTORY_LOOKBACK = 200


def at_utc(then: float) -> str:
    """A moment on the board's clock, the same for every reader: UTC."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(then))


@dataclass(frozen=True)
class Notice:
    """One force action, or one expiry, that took something of ours."""

    event: int  # the event's id
    kind: str  # force_released or expired (a claim), or force_unlocked (locks)
    by: str  # who did it
    at: float  # when, on the board's clock
    task: int | None
    patterns: tuple[str, ...]  # the lock patterns that went with it
    reason: str | None
    person: str | None = None  # the page's signed-in person, when done there
    # An expiry's why: "max_age" (with max_age) or "stale" (with stale_after
    # and how long it had been silent).
    why: str | None = None
    max_age: float | None = None
    stale_after: float | None = None
    silent_for: float | None = None

    @property
    def lost_claim(self) -> bool:
        """A claim of ours was taken (not only locks)."""
        return self.kind in (EventKind.FORCE_RELEASED, EventKind.EXPIRED)

    @classmethod
    def of(cls, event: Event, agent: str) -> Notice:
        detail = event.detail
        if event.kind in (EventKind.FORCE_RELEASED, EventKind.EXPIRED):
            patterns = [str(p) for p in detail.get("locks") or [] if isinstance(p, str)]
        else:  # force_unlocked: [pattern, mode, holder] for every lock it removed
            patterns = [
                str(lk[0])
                for lk in detail.get("locks") or []
                if isinstance(lk, list) and len(lk) >= 3 and lk[2] == agent
            ]
        reason = detail.get("reason")
        person = detail.get("person")
        return cls(
            event=event.id,
            kind=str(event.kind),
            by=event.agent,
            at=event.at,
            task=event.task_id,
            patterns=tuple(sorted(set(patterns))),
            reason=str(reason) if reason is not None else None,
            person=str(person) if person is not None else None,
            why=str(detail["why"]) if isinstance(detail.get("why"), str) else None,
            max_age=_seconds(detail.get("max_age")),
            stale_after=_seconds(detail.get("stale_after")),
            silent_for=_seconds(detail.get("silent_for")),
        )

    def said(self) -> str:
        """One line for people: what was taken, by whom, when, why."""
        if self.kind == EventKind.EXPIRED:
            return self._expiry()
        who = shown(self.by) + (f" ({shown(self.person)} on the page)" if self.person else "")
        why = f"force: {shown(self.reason)}" if self.reason else "force"
        locks = ", ".join(shown(p) for p in self.patterns)
        if self.kind == EventKind.FORCE_RELEASED:
            what = f"your claim of task #{self.task} was released"
            tail = f"; its locks went with it: {locks}" if locks else ""
        else:
            plural = "s" if len(self.patterns) > 1 else ""
            on = f" on #{self.task}" if self.task is not None else ""
            verb = "were" if plural else "was"
            what, tail = f"your lock{plural} {locks or '?'}{on} {verb} removed", ""
        return f"{what} by {who} at {at_utc(self.at)} ({why}){tail}"

    def _expiry(self) -> str:
        from ..durations import format_duration

        if self.why == "max_age" and self.max_age is not None:
            why = f"max age {format_duration(self.max_age)}"
        elif self.silent_for is not None and self.stale_after is not None:
            why = (
                f"silent {format_duration(self.silent_for)}, "
                f"stale after {format_duration(self.stale_after)}"
            )
        else:
            why = "stale"
        locks = ", ".join(shown(p) for p in self.patterns)
        tail = f"; its locks went with it: {locks}" if locks else ""
        return f"your claim of task #{self.task} expired at {at_utc(self.at)} ({why}){tail}"

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "kind": self.kind,
            "by": self.by,
            "person": self.person,
            "at": self.at,
            "task": self.task,
            "locks": list(self.patterns),
            "reason": self.reason,
            "why": self.why,
            "max_age": self.max_age,
            "stale_after": self.stale_after,
            "message": self.said(),
        }


def _seconds(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def concerns(event: Event, agent: str, instance: str) -> bool:
    """Whether ``event`` took a claim or lock of ``agent`` held at ``instance``."""
    detail = event.detail
    if event.kind in (EventKind.FORCE_RELEASED, EventKind.EXPIRED):
        return detail.get("previous_owner") == agent and detail.get("previous_instance") == instance
    if event.kind == EventKind.FORCE_UNLOCKED:
        where = detail.get("previous_instances")
        return isinstance(where, dict) and instance in (where.get(agent) or [])
    return False


def taken_from(rows: Sequence[Mapping[str, Any]], agent: str, instance: str) -> list[Notice]:
    """The notices among ``taken_events_about``'s rows, oldest first."""
    events = [Event.from_row(dict(r)) for r in rows]
    return [Notice.of(e, agent) for e in events if concerns(e, agent, instance)]


class Notices(BoardCore):
    def _concerns_us(self, event: Event) -> bool:
        return concerns(event, self.agent, self.instance)

    def notices(self) -> list[Notice]:
        """Every claim or lock of ours (this agent, this working tree) that
        another agent removed by force, or the keeper expired, oldest first."""
        with self.store.read():
            rows = self.store.all("taken_events_about", agent=self.agent, instance=self.instance)
        return taken_from(rows, self.agent, self.instance)

    def released_from_us(self, task_id: int) -> Notice | None:
        """The force release (or the expiry) that took ``task_id`` from us,
        unless we have claimed it again since."""
        rows = self.store.all(
            "task_events_page", task_id=task_id, limit=TASK_HISTORY_LOOKBACK
        )  # newest first
        for row in rows:
            event = Event.from_row(row)
            if event.kind == EventKind.CLAIMED and event.agent == self.agent:
                return None
            if event.kind in (EventKind.FORCE_RELEASED, EventKind.EXPIRED) and self._concerns_us(
                event
            ):
                return Notice.of(event, self.agent)
        return None

    def _not_held(
        self, task_id: int, *, elsewhere: str = "", advice: Mapping[TaskState, str] | None = None
    ) -> Refused:
        """Why ``done`` or ``heartbeat TASK`` cannot act on ``task_id``, which
        is not claimed by us here. Claimed by our name in another working
        tree: already claimed there (``elsewhere`` says what to do); by
        another agent: not ours; no longer claimed: not open, and if it was
        taken from us by force the notice says by whom (else ``advice`` for
        its state; without it, not ours). A notice said is marked on the
        refusal (``told``), so the command records it as told."""
        task = self._require_task(task_id)
        taken = self.released_from_us(task_id)  # released by force: say by whom
        said = taken.said() if taken else ""
        refusal: Refused
        if task.state == TaskState.CLAIMED and task.owner == self.agent:
            refusal = self._elsewhere(task, elsewhere or said)
            said = "" if elsewhere else said
        elif task.state == TaskState.CLAIMED:
            refusal = self._not_ours(task, said)
        elif taken is not None:
            refusal = NotOpen(task=task_id, state=task.state, advice=said)
        elif advice is not None:
            refusal = NotOpen(task=task_id, state=task.state, advice=advice.get(task.state, ""))
        else:
            refusal = self._not_ours(task)
        if taken is not None and said:
            refusal.told = (taken.event,)
        return refusal
