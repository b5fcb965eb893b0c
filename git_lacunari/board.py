"""The domain verbs of the board, written once over the store protocol.

Every rule that decides who may do what lives in SQL of its dialect
(``lac_claimable`` and its SQLite twin) or here, once: the claiming UPDATE is
the only way a task becomes claimed, and :meth:`Board._grant` is the only
way a lock is granted. Refusals are raised as the typed reasons of
:mod:`git_lacunari.errors`; times come from the board's clock (:meth:`Board.now`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from . import paths
from .errors import (
    AlreadyClaimed,
    AlreadyOpen,
    InvalidInput,
    MissingCapability,
    NotFound,
    NotOpen,
    NotOwner,
    PathLocked,
    Refused,
    UnmetDependency,
)
from .identity import Identity, validate_name
from .model import (
    DEFAULT_LANE,
    DEFAULT_STALE_AFTER_S,
    STATES,
    Conflict,
    Event,
    EventKind,
    Lock,
    LockMode,
    PathSpec,
    Task,
    TaskState,
)
from .store import Store
from .store.query_names import QueryName

MAX_TITLE = 500
MAX_BODY = 1_000_000
# How many claimable-but-path-blocked tasks `claim --next` steps over before
# it gives up; each is a cheap indexed query.
MAX_NEXT_SKIPS = 200
SWEEP_EVERY_S = 10.0
# A listing says how many more rows match, counted up to this many: a count
# never reads more than COUNT_CAP index entries, so a page costs the same on
# a board of a thousand tasks and of a million.
COUNT_CAP = 10_000

BlobLookup = Callable[[list[str]], dict[str, str]]
# What both backends store: ids are 64-bit (SQLite INTEGER, PostgreSQL
# bigint), priorities 32-bit (PostgreSQL integer). Checked before any SQL.
MAX_TASK_ID = 2**63 - 1
PRIORITY_RANGE = (-(2**31), 2**31 - 1)


def validate_task_id(value: Any) -> int:
    try:
        number = int(str(value), 10)
    except ValueError:
        number = 0
    if number <= 0 or str(value).strip().lstrip("+") != str(number):
        raise InvalidInput(f"task id {str(value)[:40]!r} is not a positive whole number")
    if number > MAX_TASK_ID:
        raise InvalidInput(f"task id {number} is too large: at most {MAX_TASK_ID}")
    return number


def validate_priority(value: int) -> int:
    low, high = PRIORITY_RANGE
    if not low <= value <= high:
        raise InvalidInput(f"priority {value} is out of range: from {low} to {high}")
    return value


def _no_surrogates(text: str, what: str) -> str:
    # Lone surrogates are bytes argv could not decode: no backend stores them
    # and no terminal can be written them.
    if any("\ud800" <= c <= "\udfff" for c in text):
        raise InvalidInput(f"{what} is not valid UTF-8 text")
    return text


def validate_lane(lane: str) -> str:
    return validate_name(lane, "lane")


def validate_title(title: str) -> str:
    if not title.strip():
        raise InvalidInput("a task needs a non-empty title")
    if len(title) > MAX_TITLE:
        raise InvalidInput(
            f"title is {len(title)} characters; at most {MAX_TITLE} (put the rest in --body)"
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in title):
        raise InvalidInput("title must be one line without control characters")
    return _no_surrogates(title, "title").strip()


def validate_body(body: str) -> str:
    if len(body) > MAX_BODY:
        raise InvalidInput(f"body is {len(body)} characters; at most {MAX_BODY}")
    if "\0" in body:
        raise InvalidInput("body must not contain NUL characters")
    return _no_surrogates(body, "body")


def validate_state(state: str) -> str:
    if state not in STATES:
        raise InvalidInput(f"unknown state {state[:40]!r}: one of {', '.join(STATES)}")
    return state


def validate_limit(limit: int | None) -> int | None:
    """A page size: a positive whole number, or None (or 0) for no limit."""
    if limit is None or limit == 0:
        return None
    if limit < 0 or limit > MAX_TASK_ID:
        raise InvalidInput(f"--limit {limit} is out of range: 0 (no limit) or a positive number")
    return limit


T = TypeVar("T")


@dataclass
class Page(Generic[T]):
    """One page of a listing: its items, and how many more match (counted
    up to :data:`COUNT_CAP`; ``more_exact`` is false when there are more)."""

    items: list[T]
    more: int = 0
    more_exact: bool = True


@dataclass
class Claim:
    task: Task
    locks: list[Lock]
    again: bool  # it was already ours: an idempotent retry


class Board:
    def __init__(
        self,
        store: Store,
        identity: Identity,
        *,
        prefix: str = "",
        ignorecase: bool = False,
        blob_ids: BlobLookup | None = None,
    ) -> None:
        self.store = store
        self.identity = identity
        self.agent = identity.name
        self.instance = identity.instance  # where we run: claims and locks are held here
        self.prefix = prefix
        self.ignorecase = ignorecase
        self.blob_ids = blob_ids
        # Merged into every event this Board records: who acted, where the
        # agent is a service (`git lac serve` records the person on its page).
        self.audit: dict[str, Any] = {}
        self._agent_recorded = False
        self._last_sweep = float("-inf")

    # --- helpers ------------------------------------------------------------

    def normalize(self, pattern: str) -> str:
        return paths.normalize(pattern, self.prefix)

    def specs(self, writes: Iterable[str] = (), reads: Iterable[str] = ()) -> list[PathSpec]:
        """Validated, de-duplicated path specs; a pattern both read and written is a write."""
        found: dict[str, LockMode] = {}
        for pattern in reads:
            found.setdefault(self.normalize(pattern), LockMode.READ)
        for pattern in writes:
            found[self.normalize(pattern)] = LockMode.WRITE
        return [PathSpec(p, m) for p, m in found.items()]

    def now(self) -> float:
        """The board's clock (the store's): every age and every staleness is
        measured against it, never against this machine's clock."""
        row = self.store.one("now_value")
        return float(row["now"]) if row else 0.0

    def _event(self, kind: EventKind, task_id: int | None, **detail: Any) -> None:
        self.store.run(
            "insert_event",
            task_id=task_id,
            agent=self.agent,
            kind=kind,
            detail=json.dumps({**self.audit, **detail}, sort_keys=True),
        )

    def _ensure_agent(self) -> None:
        """Put our capabilities where ``lac_claimable`` reads them, once per Board."""
        if not self._agent_recorded:
            caps = json.dumps(list(self.identity.capabilities))
            self.store.atomic("upsert_agent", agent=self.agent, caps=caps)
            self._record_instance()
            self._agent_recorded = True

    def _record_instance(self) -> None:
        host, _, path = self.identity.instance_where.partition(":")
        self.store.atomic(
            "upsert_instance", instance=self.instance, agent=self.agent, host=host, path=path
        )

    def where_of(self, instance: str | None) -> str:
        """An instance as people know it: host:path (or its id, if never recorded)."""
        row = self.store.one("get_instance", instance=instance) if instance else None
        if row is None:
            return f"instance {instance or 'unknown'}"
        return f"{row['host']}:{row['path']}"

    def _is_ours(self, owner: str | None, instance: str | None) -> bool:
        """Held by us *here*: the same agent name at another instance is another."""
        return owner == self.agent and instance == self.instance

    def _elsewhere(self, task: Task, advice: str = "") -> Refused:
        """Our name, another working tree: refused as already claimed, naming where."""
        return AlreadyClaimed(
            task=task.id, holder=task.owner, where=self.where_of(task.instance), advice=advice
        )

    def _task_row(self, task_id: int) -> Task | None:
        row = self.store.one("get_task", task_id=task_id)
        return Task.from_row(row) if row else None

    def _require_task(self, task_id: int) -> Task:
        task = self._task_row(task_id)
        if task is None:
            raise NotFound(task=task_id)
        return task

    def _not_ours(self, task: Task, advice: str = "") -> Refused:
        return NotOwner(agent=self.agent, task=task.id, holder=task.owner, advice=advice)

    def _require_own_claim(self, task_id: int, advice: str = "") -> Task:
        """The task, if it is claimed by us; else refused as ``not_owner``."""
        task = self._require_task(task_id)
        if task.state != TaskState.CLAIMED or task.owner != self.agent:
            raise self._not_ours(task, advice)
        if task.instance != self.instance:
            raise self._elsewhere(task, advice)
        return task

    def _task_specs(self, task_id: int) -> list[PathSpec]:
        return [
            PathSpec(r["pattern"], LockMode.stored(r["mode"]))
            for r in self.store.all("task_paths", task_id=task_id)
        ]

    # --- tasks --------------------------------------------------------------

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
    ) -> Task:
        title = validate_title(title)
        body = validate_body(body)
        lane = validate_lane(lane)
        priority = validate_priority(priority)
        deps = sorted({validate_task_id(d) for d in after})
        caps = sorted({validate_name(c, "capability") for c in needs})
        specs = self.specs(writes, reads)
        with self.store.write():
            self._require_existing(deps)
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
                self.store.run("insert_dep", task_id=task_id, depends_on=dep)
            for spec in specs:
                self.store.run(
                    "insert_task_path", task_id=task_id, pattern=spec.pattern, mode=spec.mode.code
                )
            self.store.one("notify_work", lane=lane)
            self._event(
                EventKind.CREATED,
                task_id,
                title=title,
                lane=lane,
                priority=priority,
                after=deps,
                needs=caps,
                paths=[[s.pattern, s.mode] for s in specs],
            )
            return self.show(task_id)

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
            self._require_task(task_id)
            self._require_existing(dep_ids)
            if task_id in dep_ids or self.store.one(
                "depends_transitively", deps=json.dumps(dep_ids), task_id=task_id
            ):
                raise InvalidInput(
                    f"task #{task_id} cannot wait on {', '.join(f'#{d}' for d in dep_ids)}: "
                    "that would be a dependency cycle"
                )
            for dep in dep_ids:
                self.store.run("insert_dep", task_id=task_id, depends_on=dep)
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
    ) -> Page[Task]:
        """Tasks in id order, at most ``limit`` (None: all), and how many more.

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
        tasks = self.mark_stale([Task.from_row(r) for r in rows], now)
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

    # --- claiming -----------------------------------------------------------

    def _why_not_claimable(self, task_id: int) -> Refused:
        """Looked up only after the claiming UPDATE came back empty."""
        task = self._task_row(task_id)
        if task is None:
            return NotFound(task=task_id)
        if task.state == TaskState.CLAIMED and task.owner == self.agent:
            return self._elsewhere(task, "--take-over moves it here (on the record)")
        if task.state == TaskState.CLAIMED:
            return AlreadyClaimed(task=task_id, holder=task.owner)
        if task.state != TaskState.OPEN:
            return NotOpen(task=task_id, state=task.state)
        for dep in self.store.all("task_deps", task_id=task_id):
            if dep["state"] != TaskState.DONE:
                return UnmetDependency(
                    task=task_id, dependency=int(dep["id"]), dependency_state=dep["state"]
                )
        for cap in task.needs:
            if cap not in self.identity.capabilities:
                return MissingCapability(task=task_id, capability=cap, agent=self.agent)
        return NotOpen(task=task_id, state=task.state, advice="it could not be claimed")

    def claim(
        self,
        task_id: int,
        *,
        writes: Sequence[str] = (),
        reads: Sequence[str] = (),
        stale_after: float | None = None,
        take_over: bool = False,
    ) -> Claim:
        """Claim one task by id, with its declared path locks, or be refused whole.

        ``take_over``: our agent name holds it from another instance (a crashed
        machine, an old clone); move the claim and its locks here, recorded
        as ``taken_over``. It never takes another agent's claim.
        """
        task_id = validate_task_id(task_id)
        extra = self.specs(writes, reads)
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
                return self._finish_claim(row, extra, again=False)
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
                current = self._take_over(task_id, current.get("instance"))
            else:
                # Our own claim, here: claiming it again is a harmless retry.
                self.store.run(
                    "heartbeat",
                    agent=self.agent,
                    instance=self.instance,
                    ids=json.dumps([task_id]),
                )
            return self._finish_claim({**current, "has_paths": True}, extra, again=True)

    def _take_over(self, task_id: int, previous: str | None) -> dict[str, Any]:
        """Move our agent's claim of ``task_id`` and its locks to this instance."""
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
        return dict(row)

    def _finish_claim(self, row: dict[str, Any], extra: list[PathSpec], again: bool) -> Claim:
        """Take the claimed task's path locks (or raise, rolling the claim back)."""
        task = Task.from_row(row)
        for spec in extra:
            self.store.run(
                "insert_task_path", task_id=task.id, pattern=spec.pattern, mode=spec.mode.code
            )
        locks: list[Lock] = []
        if row["has_paths"] or extra:
            task.paths = self._task_specs(task.id)
            locks = self._grant(task.paths, task.id)
        if locks and not again:  # the claiming statement recorded the claim
            self._event(EventKind.LOCKED, task.id, paths=[[lk.pattern, lk.mode] for lk in locks])
        task.locks = locks
        return Claim(task, locks, again)

    def claim_next(
        self,
        lane: str = DEFAULT_LANE,
        *,
        writes: Sequence[str] = (),
        reads: Sequence[str] = (),
        stale_after: float | None = None,
        wait: float | None = None,
    ) -> Claim:
        """The highest-priority, oldest claimable open task in ``lane`` whose
        paths are free; with ``wait``, block up to that many seconds for one."""
        deadline = time.monotonic() + (wait or 0.0)
        while True:
            try:
                return self._claim_next_once(lane, writes, reads, stale_after)
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
    ) -> Claim:
        lane = validate_lane(lane)
        extra = self.specs(writes, reads)
        self._ensure_agent()
        self._sweep_now_and_then()
        stale_after = self.claim_stale_after(stale_after)
        if not extra:
            row = self.store.atomic(
                "claim_next_free",
                lane=lane,
                agent=self.agent,
                instance=self.instance,
                stale_after=stale_after,
            )
            if row is not None:
                return Claim(Task.from_row(row), [], again=False)
        skipped: list[int] = []
        with self.store.write():
            while len(skipped) <= MAX_NEXT_SKIPS:
                candidate = self.store.one(
                    "next_candidate", lane=lane, agent=self.agent, skip=json.dumps(skipped)
                )
                if candidate is None:
                    break
                task_id = int(candidate["id"])
                if candidate["has_paths"] or extra:
                    self._serialize_grants()
                    if self._conflicts(self._task_specs(task_id) + extra):
                        skipped.append(task_id)
                        continue
                row = self.store.one(
                    "claim",
                    task_id=task_id,
                    agent=self.agent,
                    instance=self.instance,
                    stale_after=stale_after,
                )
                if row is None:  # taken between our look and our claim
                    skipped.append(task_id)
                    continue
                return self._finish_claim(row, extra, again=False)
        raise NotFound(lane=lane, blocked=skipped)

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
            if self.store.one("release", task_id=task_id, owner=task.owner) is None:
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
                task = self._require_task(task_id)
                if task.state == TaskState.CLAIMED and task.owner == self.agent:
                    raise self._elsewhere(task, "--take-over on a claim moves it here first")
                if task.state == TaskState.CLAIMED:
                    raise self._not_ours(task)
                raise NotOpen(
                    task=task_id, state=task.state, advice="claim it before marking it done"
                )
            locks = self.store.all("delete_task_locks", task_id=task_id)
            self._event(EventKind.DONE, task_id, locks=[r["pattern"] for r in locks])
            return self._require_task(task_id)

    def touch(self) -> None:
        """Refresh the heartbeat of all our claims: every command does this,
        in one statement (a single round trip on PostgreSQL)."""
        self.store.atomic("heartbeat", agent=self.agent, instance=self.instance, ids=None)
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
                    self._require_own_claim(task_id)  # raises, naming why
            return refreshed

    # --- liveness -------------------------------------------------------------

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
        ``now`` on the board's clock (read from the store when not given)."""
        if any(t.state == TaskState.CLAIMED for t in tasks):
            default = self.default_stale_after()
            now = self.now() if now is None else now
            for task in tasks:
                if task.state == TaskState.CLAIMED and task.heartbeat_at is not None:
                    task.stale = now - task.heartbeat_at > (task.stale_after or default)
        return tasks

    def sweep(self, stale_after: float | None = None) -> list[dict[str, Any]]:
        """Give every stale claim back to the board with its path locks, keeping
        its attempt count, and record ``expired`` (previous holder, silence).
        ``stale_after`` (a keeper's) is a floor: no claim silent for less is expired."""
        # Claims carry their own stale-after; the board's covers claims made
        # before they did. A keeper's own value only ever lengthens it.
        default = self.default_stale_after()
        expired: list[dict[str, Any]] = []
        with self.store.write():
            for row in self.store.all(
                "stale_claims", default_stale=default, at_least=stale_after or 0.0
            ):
                task_id = int(row["id"])
                if not self.store.one(
                    "expire",
                    state=TaskState.OPEN,
                    task_id=task_id,
                    owner=row["owner"],
                    heartbeat_at=row["heartbeat_at"],
                ):
                    continue  # it heartbeat after we looked
                locks = [r["pattern"] for r in self.store.all("delete_task_locks", task_id=task_id)]
                fact = {
                    "task": task_id,
                    "previous_owner": row["owner"],
                    "silent_for": round(float(row["silent_for"]), 3),
                    "attempts": int(row["attempts"]),
                    "locks": locks,
                }
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
                self.store.one("release", task_id=task_id, owner=self.agent)
                self.store.one("notify_work", lane=task.lane)
            return self._require_task(task_id)

    # --- locks --------------------------------------------------------------

    def _conflicts(self, wanted: Sequence[PathSpec]) -> list[Conflict]:
        """Other agents' locks overlapping ``wanted``.

        Candidates come from the key index in one query for all wanted keys
        (``candidate_locks_batch``: the keys' ancestors exactly, their
        subtrees as index ranges). Plain paths and directories are matched
        through a :class:`paths.LiteralIndex`, so N wanted against M held in
        one directory costs about N lookups, not N x M comparisons; only globs
        (wanted or held) are compared pattern by pattern, and only with the
        candidates of their key.

        Before granting on the strength of this answer, a transaction must
        hold :meth:`_serialize_grants`, or two grants could race past it.
        """
        if not wanted:
            return []
        keys = sorted({paths.index_key(spec.pattern) for spec in wanted})
        # A subtree range covers the ranges of the keys below it: ask for the
        # outermost only, and each ancestor key once.
        outer = [k for i, k in enumerate(keys) if not any(k.startswith(o) for o in keys[:i])]
        exact = sorted({a for k in keys for a in paths.ancestor_keys(k)})
        rows = self.store.all(
            "candidate_locks_batch",
            exact=json.dumps(exact),
            ranges=json.dumps([{"lo": k, "hi": k + paths.KEY_RANGE_END} for k in outer]),
        )
        by_lock_key: dict[str, list[Lock]] = {}
        seen: set[int] = set()
        for row in rows:
            lock = Lock.from_row(row)
            if lock.id in seen or self._is_ours(lock.agent, lock.instance):
                continue
            seen.add(lock.id)
            by_lock_key.setdefault(str(row["key"]), []).append(lock)
        lock_keys = sorted(by_lock_key)
        by_key: dict[str, tuple[paths.LiteralIndex[Lock], list[Lock], list[Lock]]] = {}
        found: list[Conflict] = []
        for spec in wanted:
            key = paths.index_key(spec.pattern)
            if key not in by_key:
                by_key[key] = self._candidates(key, by_lock_key, lock_keys)
            index, held_globs, others = by_key[key]
            if paths.is_literal(spec.pattern):
                hits = index.overlapping(spec.pattern) + [
                    lk
                    for lk in held_globs
                    if paths.overlap(lk.pattern, spec.pattern, self.ignorecase)
                ]
            else:
                hits = [
                    lk for lk in others if paths.overlap(lk.pattern, spec.pattern, self.ignorecase)
                ]
            for lock in sorted(hits, key=lambda lk: lk.id):
                if spec.mode == LockMode.READ and lock.mode == LockMode.READ:
                    continue
                found.append(Conflict(spec.pattern, lock, wanted=spec.mode))
        return found

    def _candidates(
        self, key: str, by_lock_key: dict[str, list[Lock]], lock_keys: list[str]
    ) -> tuple[paths.LiteralIndex[Lock], list[Lock], list[Lock]]:
        """The fetched locks that may overlap a pattern of ``key`` (those of
        its ancestor keys and of its subtree), literal ones indexed."""
        import bisect

        others = [lk for a in paths.ancestor_keys(key) for lk in by_lock_key.get(a, [])]
        at = bisect.bisect_left(lock_keys, key)
        while at < len(lock_keys) and lock_keys[at].startswith(key):
            if lock_keys[at] != key:  # the key itself is one of its ancestor keys
                others += by_lock_key[lock_keys[at]]
            at += 1
        index: paths.LiteralIndex[Lock] = paths.LiteralIndex(self.ignorecase)
        held_globs: list[Lock] = []
        for lock in others:
            if paths.is_literal(lock.pattern):
                index.add(lock.pattern, lock)
            else:
                held_globs.append(lock)
        return index, held_globs, others

    def _serialize_grants(self) -> None:
        self.store.one("serialize_locks")

    def _grant(self, wanted: Sequence[PathSpec], task_id: int | None) -> list[Lock]:
        """Grant every lock in ``wanted`` or refuse them all (raising rolls back).

        What does not depend on other grants (the blob ids, from git) is
        looked up first; then the board-wide serialisation is taken for the
        short grant itself: one query for the candidates, one for our own
        locks on these patterns, one statement inserting every new lock.
        """
        if not wanted:
            return []
        literal = [s.pattern.rstrip("/") for s in wanted if paths.is_literal(s.pattern)]
        blobs = self.blob_ids(literal) if self.blob_ids and literal else {}
        self._serialize_grants()
        conflicts = self._conflicts(wanted)
        if conflicts:
            raise PathLocked(conflicts)
        mine = {
            (lk.pattern, lk.task_id): lk
            for lk in (
                Lock.from_row(r)
                for r in self.store.all(
                    "own_locks_on",
                    agent=self.agent,
                    patterns=json.dumps(sorted({s.pattern for s in wanted})),
                )
            )
            if lk.instance == self.instance
        }
        granted: dict[str, Lock] = {}
        new: list[dict[str, Any]] = []
        for spec in wanted:
            held = mine.get((spec.pattern, task_id))
            if held is not None:
                if held.mode == LockMode.READ and spec.mode == LockMode.WRITE:
                    self.store.run("upgrade_lock", lock_id=held.id)
                    held.mode = LockMode.WRITE
                granted[spec.pattern] = held
                continue
            new.append(
                {
                    "pattern": spec.pattern,
                    "key": paths.index_key(spec.pattern),
                    "mode": spec.mode.code,
                    "base_blob": blobs.get(spec.pattern.rstrip("/")),
                }
            )
        if new:
            for row in self.store.all(
                "insert_locks",
                locks=json.dumps(new),
                agent=self.agent,
                task_id=task_id,
                instance=self.instance,
            ):
                lock = Lock.from_row(row)
                granted[lock.pattern] = lock
        return [granted[spec.pattern] for spec in wanted]

    def lock(
        self,
        patterns: Sequence[str],
        *,
        mode: LockMode = LockMode.WRITE,
        task_id: int | None = None,
    ) -> list[Lock]:
        if not patterns:
            raise InvalidInput("name at least one path pattern to lock")
        mode = LockMode(mode)  # one spelling: a stray 'r' fails here, loudly
        specs = self.specs(patterns, ()) if mode == LockMode.WRITE else self.specs((), patterns)
        if task_id is not None:
            task_id = validate_task_id(task_id)
        with self.store.write():
            if task_id is not None:
                self._require_own_claim(task_id, "claim it first")
            locks = self._grant(specs, task_id)
            self._event(EventKind.LOCKED, task_id, paths=[[lk.pattern, lk.mode] for lk in locks])
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
        others = [(Lock.from_row(r), r["task_heartbeat_at"]) for r in rows]
        found: list[Conflict] = []
        for path in changed:
            for lock, beat in others:
                if paths.covers(lock.pattern, path, self.ignorecase):
                    found.append(Conflict(path, lock, heartbeat_at=beat))
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

    # --- the whole life of a task (issue 14) ----------------------------------

    def _require_editable(self, task: Task) -> None:
        """Open, or claimed by us: the rule ``edit_task`` states in SQL."""
        if task.state == TaskState.CLAIMED and task.owner != self.agent:
            raise self._not_ours(task, "only its owner edits a claimed task")
        if task.state == TaskState.CLAIMED and task.instance != self.instance:
            raise self._elsewhere(task, "only where it is claimed is it edited")
        if task.state not in (TaskState.OPEN, TaskState.CLAIMED):
            raise NotOpen(task=task.id, state=task.state, advice="reopen it to edit it")

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
                self.store.run("insert_dep", task_id=task_id, depends_on=dep)
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

    # --- lock administration (issue 14) -------------------------------------------

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
                    locks=[[lk.pattern, lk.mode, lk.agent] for lk in locks],
                )
            return freed

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

    # --- for agents in a loop (issue 14) ----------------------------------------

    def ready(self, lane: str = DEFAULT_LANE) -> tuple[list[Task], list[tuple[Task, Refused]]]:
        """What ``claim --next`` would take in ``lane``, in its order, and for
        each open task it would not take, why. The claimable rule is the SQL
        one; the reasons are those a refused claim gives."""
        lane = validate_lane(lane)
        self._ensure_agent()
        self._sweep_now_and_then()  # as claim --next does, so both see the same board
        ready: list[Task] = []
        blocked: list[tuple[Task, Refused]] = []
        with self.store.read():
            for row in self.store.all("lane_open_tasks", lane=lane, agent=self.agent):
                task = Task.from_row(row)
                if not row["claimable"]:
                    blocked.append((task, self._why_not_claimable(task.id)))
                    continue
                if row["has_paths"]:
                    task.paths = self._task_specs(task.id)
                    conflicts = self._conflicts(task.paths)
                    if conflicts:
                        blocked.append((task, PathLocked(conflicts)))
                        continue
                ready.append(task)
        return ready, blocked
