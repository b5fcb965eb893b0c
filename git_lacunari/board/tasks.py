"""Tasks: adding, reading, listing, editing, cancelling and reopening them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .. import rules
from ..errors import (
    AlreadyClaimed,
    AlreadyOpen,
    InvalidInput,
    NotOpen,
)
from ..identity import validate_name
from ..model import (
    DEFAULT_LANE,
    Event,
    EventKind,
    Lock,
    LockMode,
    Task,
    TaskState,
)
from ..store.query_names import QueryName
from .core import COUNT_CAP, Page
from .liveness import Liveness
from .resources import Resources
from .validate import (
    validate_body,
    validate_lane,
    validate_limit,
    validate_priority,
    validate_state,
    validate_task_id,
    validate_title,
)


class Tasks(Liveness, Resources):
    def add_task(
        self,
        title: str,
        *,
        body: str = "",
        lane: str = DEFAULT_LANE,
        priority: int = 0,
        after: Sequence[int] = (),
        needs: Sequence[str] = (),
        writes: Sequence[str] = (),
        reads: Sequence[str] = (),
        resources: Sequence[str] = (),
    ) -> Task:
        """``resources``: ``NAME[:N]`` of the resource pools its claim is
        granted values of (board/resources.py); each pool must exist and
        hold at least N values."""
        from ..pools import parse_needs

        title = validate_title(title)
        body = validate_body(body)
        lane = validate_lane(lane)
        priority = validate_priority(priority)
        deps = sorted({validate_task_id(d) for d in after})
        caps = sorted({validate_name(c, "capability") for c in needs})
        specs = self.specs(writes, reads)
        parse_needs(resources)  # its words first, before the board is asked
        with self.store.write():
            self._require_existing(deps)
            wants = self._checked_needs(resources)
            row = self.store.one(
                "insert_task",
                title=title,
                body=body,
                lane=lane,
                priority=priority,
                needs=json.dumps(caps),
                agent=self.agent,
            )
            assert row is not None
            task_id = int(row["id"])
            for dep in deps:
                self._insert_dep(task_id, dep)
            for spec in specs:
                self.store.run(
                    "insert_task_path", task_id=task_id, pattern=spec.pattern, mode=spec.mode.code
                )
            for name, count in wants:
                self.store.run("insert_task_resource", task_id=task_id, name=name, count=count)
            self.store.one("notify_work", lane=lane)
            said: dict[str, Any] = {}
            if wants:
                said["resources"] = [{"name": n, "count": c} for n, c in wants]
            self._event(
                EventKind.CREATED,
                task_id,
                title=title,
                lane=lane,
                priority=priority,
                after=deps,
                needs=caps,
                paths=[[s.pattern, s.mode] for s in specs],
                **said,
            )
            return self.show(task_id)

    def _insert_dep(self, task_id: int, dep: int) -> None:
        """The statement refuses another agent's claim itself (PostgreSQL:
        ``lac_api_insert_dep``; SQLite: inserts nothing), under our check."""
        self.store.run(
            "insert_dep",
            task_id=task_id,
            depends_on=dep,
            agent=self.agent,
            instance=self.instance,
        )

    def _require_existing(self, ids: Sequence[int]) -> None:
        if not ids:
            return
        missing = self.store.all("missing_tasks", ids=json.dumps(list(ids)))
        if missing:
            raise InvalidInput(f"no task #{int(missing[0]['id'])} to depend on")

    def add_dependencies(self, task_id: int, deps: Sequence[int]) -> Task:
        """Make ``task_id`` wait on ``deps``; a dependency cycle is refused."""
        task_id = validate_task_id(task_id)
        dep_ids = sorted({validate_task_id(d) for d in deps})
        if not dep_ids:
            raise InvalidInput("name at least one task to depend on")
        with self.store.write():
            task = self._require_task(task_id)
            if task.state == TaskState.CLAIMED:  # another's claim is not ours to change
                self._require_editable(task)
            self._require_existing(dep_ids)
            if task_id in dep_ids or self.store.one(
                "depends_transitively", deps=json.dumps(dep_ids), task_id=task_id
            ):
                raise InvalidInput(
                    f"task #{task_id} cannot wait on {', '.join(f'#{d}' for d in dep_ids)}: "
                    "that would be a dependency cycle"
                )
            for dep in dep_ids:
                self._insert_dep(task_id, dep)
            self._event(EventKind.DEPENDS, task_id, after=dep_ids)
            return self.show(task_id)

    def show(self, task_id: int, *, now: float | None = None) -> Task:
        task_id = validate_task_id(task_id)
        with self.store.read():
            task = self._require_task(task_id)
            task.depends_on = [dict(r) for r in self.store.all("task_deps", task_id=task_id)]
            task.paths = self._task_specs(task_id)
            task.locks = [Lock.from_row(r) for r in self.store.all("task_locks", task_id=task_id)]
            return self.mark_stale([task], now)[0]

    def tasks(
        self,
        *,
        state: str | None = None,
        lane: str | None = None,
        mine: bool = False,
        now: float | None = None,
    ) -> list[Task]:
        """Every task (of ``state``, ``lane``, mine), unpaged: for callers that
        need them all; people page through :meth:`task_page`."""
        states = None if state is None else [state]
        page = self.task_page(states=states, every=state is None, lane=lane, mine=mine, now=now)
        return page.items

    def task_page(
        self,
        *,
        states: Sequence[str] | None = None,
        every: bool = False,
        lane: str | None = None,
        mine: bool = False,
        limit: int | None = None,
        now: float | None = None,
        details: bool = False,
    ) -> Page[Task]:
        """Tasks in id order, at most ``limit`` (None: all), and how many more;
        with ``details`` each with its paths, locks and dependencies (one more
        query for the whole page).

        Which: those in ``states``; else with ``every`` all of them; else the
        live ones (neither done nor cancelled), what people look at. Each
        shape has its own query and index (sql/<dialect>/0003_scale.sql), so
        the default page reads about ``limit`` rows whatever the board's size.
        """
        wanted = sorted({validate_state(s) for s in states}) if states else None
        if lane is not None:
            validate_lane(lane)
        limit = validate_limit(limit)
        page_query: QueryName
        more_query: QueryName
        page_query, more_query = (
            ("state_tasks_page", "state_tasks_more")
            if wanted
            else ("all_tasks_page", "all_tasks_more")
            if every
            else ("live_tasks_page", "live_tasks_more")
        )
        params: dict[str, Any] = {"lane": lane, "owner": self.agent if mine else None}
        if wanted:
            params["states"] = json.dumps(wanted)
        with self.store.read():
            rows = self.store.all(page_query, limit=limit, **params)
            more = 0
            if limit is not None and len(rows) == limit:
                row = self.store.one(
                    more_query,
                    after=rows[-1]["id"] if rows else 0,
                    cap=COUNT_CAP + 1,
                    **params,
                )
                more = int(row["n"]) if row else 0
            tasks = [Task.from_row(r) for r in rows]
            if details:
                self._fill_details(tasks)
        tasks = self.mark_stale(tasks, now)
        return Page(tasks, min(more, COUNT_CAP), more <= COUNT_CAP)

    def log(self, task_id: int | None = None) -> list[Event]:
        """Every event, of one task or of the board, oldest first (unpaged)."""
        return self.log_page(task_id).items

    def log_page(self, task_id: int | None = None, *, limit: int | None = None) -> Page[Event]:
        """The newest ``limit`` events (None: all), shown oldest first, and how
        many earlier ones there are; read backwards along an index."""
        limit = validate_limit(limit)
        with self.store.read():
            if task_id is not None:
                task_id = validate_task_id(task_id)
                self._require_task(task_id)
                rows = self.store.all("task_events_page", task_id=task_id, limit=limit)
            else:
                rows = self.store.all("events_page", limit=limit)
            more = 0
            if limit is not None and len(rows) == limit and rows:
                params: dict[str, Any] = {"before": rows[-1]["id"], "cap": COUNT_CAP + 1}
                if task_id is not None:
                    row = self.store.one("task_events_more", task_id=task_id, **params)
                else:
                    row = self.store.one("events_more", **params)
                more = int(row["n"]) if row else 0
        events = [Event.from_row(r) for r in reversed(rows)]
        return Page(events, min(more, COUNT_CAP), more <= COUNT_CAP)

    def _require_editable(self, task: Task) -> None:
        """Open, or claimed by us (:func:`git_lacunari.rules.edit_refusal`)."""
        refusal = rules.edit_refusal(
            task, agent=self.agent, instance=self.instance, where=self.where_of
        )
        if refusal is not None:
            raise refusal

    def edit_task(
        self,
        task_id: int,
        *,
        title: str | None = None,
        body: str | None = None,
        lane: str | None = None,
        priority: int | None = None,
        needs: Sequence[str] | None = None,
        writes: Sequence[str] = (),
        reads: Sequence[str] = (),
        drop_paths: Sequence[str] = (),
        add_after: Sequence[int] = (),
        drop_after: Sequence[int] = (),
        reason: str | None = None,
    ) -> Task:
        """Change a task while it is open, or while it is our claim; one
        ``edited`` event lists every change as ``[before, after]``. A path
        declared on a claimed task is locked at once (all or nothing), a
        dropped one is unlocked."""
        task_id = validate_task_id(task_id)
        new_title = validate_title(title) if title is not None else None
        new_body = validate_body(body) if body is not None else None
        new_lane = validate_lane(lane) if lane is not None else None
        new_needs = (
            sorted({validate_name(c, "capability") for c in needs}) if needs is not None else None
        )
        added = self.specs(writes, reads)
        dropped = sorted({self.normalize(p) for p in drop_paths})
        more_deps = sorted({validate_task_id(d) for d in add_after})
        fewer_deps = sorted({validate_task_id(d) for d in drop_after})
        if set(more_deps) & set(fewer_deps) or {s.pattern for s in added} & set(dropped):
            raise InvalidInput("the same dependency or path is both added and dropped")
        with self.store.write():
            task = self._require_task(task_id)
            self._require_editable(task)
            changes: dict[str, Any] = {}
            for name, old, new in (
                ("title", task.title, new_title),
                ("body", task.body, new_body),
                ("lane", task.lane, new_lane),
                ("priority", task.priority, priority),
                ("needs", task.needs, new_needs),
            ):
                if new is not None and new != old:
                    changes[name] = [old, new]
            current = {s.pattern: s.mode for s in self._task_specs(task_id)}
            for pattern in dropped:
                if pattern not in current:
                    raise InvalidInput(f"task #{task_id} declares no path {pattern!r} to drop")
                self.store.run("delete_task_path", task_id=task_id, pattern=pattern)
                self.store.run("delete_task_lock", task_id=task_id, pattern=pattern)
            grown = [s for s in added if current.get(s.pattern) not in (s.mode, LockMode.WRITE)]
            for spec in grown:
                self.store.run(
                    "insert_task_path", task_id=task_id, pattern=spec.pattern, mode=spec.mode.code
                )
            if dropped:
                changes["dropped_paths"] = dropped
            if grown:
                changes["added_paths"] = [[s.pattern, s.mode] for s in grown]
            self._edit_deps(task_id, more_deps, fewer_deps, changes)
            if not changes:
                raise InvalidInput(f"nothing to change on task #{task_id}")
            after = {
                k: v[1]
                for k, v in changes.items()
                if k in ("title", "body", "lane", "priority", "needs")
            }
            if (
                self.store.one(
                    "edit_task",
                    task_id=task_id,
                    agent=self.agent,
                    instance=self.instance,
                    title=after.get("title", task.title),
                    body=after.get("body", task.body),
                    lane=after.get("lane", task.lane),
                    priority=after.get("priority", task.priority),
                    needs=json.dumps(after.get("needs", task.needs)),
                )
                is None
            ):  # it changed hands between our look and our write
                self._require_editable(self._require_task(task_id))
            if task.state == TaskState.CLAIMED and grown:
                self._grant(grown, task_id)
            if "body" in changes:  # a body can be long: the event says only that it changed
                changes["body"] = {
                    "before_chars": len(task.body),
                    "after_chars": len(after["body"]),
                }
            self.store.one("notify_work", lane=after.get("lane", task.lane))
            self._event(EventKind.EDITED, task_id, changes=changes, reason=reason)
            return self.show(task_id)

    def _edit_deps(
        self, task_id: int, more: Sequence[int], fewer: Sequence[int], changes: dict[str, Any]
    ) -> None:
        if more:
            self._require_existing(more)
            if task_id in more or self.store.one(
                "depends_transitively", deps=json.dumps(list(more)), task_id=task_id
            ):
                raise InvalidInput(
                    f"task #{task_id} cannot wait on {', '.join(f'#{d}' for d in more)}: "
                    "that would be a dependency cycle"
                )
            have = {int(r["id"]) for r in self.store.all("task_deps", task_id=task_id)}
            new = [d for d in more if d not in have]
            for dep in new:
                self._insert_dep(task_id, dep)
            if new:
                changes["added_after"] = new
        for dep in fewer:
            if self.store.one("delete_dep", task_id=task_id, depends_on=dep) is None:
                raise InvalidInput(f"task #{task_id} does not wait on #{dep}")
        if fewer:
            changes["dropped_after"] = list(fewer)

    def cancel_task(self, task_id: int, *, reason: str | None = None) -> Task:
        """Cancel an open or parked task, or our own claim (its locks freed).
        Tasks that wait on it stay blocked (``unmet_dependency``, state
        ``cancelled``): cancelling is not doing, so each is listed in the
        event as ``waiting`` for someone to drop the dependency or reopen."""
        task_id = validate_task_id(task_id)
        with self.store.write():
            task = self._require_task(task_id)
            cancelled = self.store.one(
                "cancel", task_id=task_id, agent=self.agent, instance=self.instance
            )
            if cancelled is None:
                if task.state == TaskState.CLAIMED and task.owner == self.agent:
                    raise self._elsewhere(task, "cancel it where it is claimed")
                if task.state == TaskState.CLAIMED:
                    raise self._not_ours(task, "release --force --reason TEXT it first")
                raise NotOpen(
                    task=task_id, state=task.state, advice="only unfinished work is cancelled"
                )
            locks = [r["pattern"] for r in self.store.all("delete_task_locks", task_id=task_id)]
            waiting = [
                int(r["id"])
                for r in self.store.all("dependents", task_id=task_id)
                if r["state"] not in (TaskState.DONE, TaskState.CANCELLED)
            ]
            if locks:
                self.store.one("notify_work", lane=task.lane)
            self._event(
                EventKind.CANCELLED,
                task_id,
                reason=reason,
                previous_state=task.state,
                locks=locks,
                waiting=waiting,
            )
            return self.show(task_id)

    def reopen_task(self, task_id: int, *, reason: str | None = None) -> Task:
        """A done, cancelled or parked task back to open, its attempts reset
        to 0 (the event keeps the old count and owner)."""
        task_id = validate_task_id(task_id)
        with self.store.write():
            task = self._require_task(task_id)
            if task.state == TaskState.OPEN:
                raise AlreadyOpen(task=task_id)
            if task.state == TaskState.CLAIMED:
                raise AlreadyClaimed(task=task_id, holder=task.owner)
            if self.store.one("reopen", task_id=task_id) is None:
                raise self._why_not_claimable(task_id)
            self.store.one("notify_work", lane=task.lane)
            self._event(
                EventKind.REOPENED,
                task_id,
                reason=reason,
                previous_state=task.state,
                previous_owner=task.owner,
                attempts=task.attempts,
            )
            return self.show(task_id)
