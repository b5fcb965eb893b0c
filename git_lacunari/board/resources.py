"""Named resource pools: values (ports, databases) a claim is granted in its
own transaction, and holds until it ends.

A pool is made by ``resource add``; a task needs N values of a pool
(``task add --needs-resource``, ``claim --resource``); its claim is granted
N distinct free values or refused whole (``resource_unavailable``). The
database frees them when the claim ends, whichever statement ends it
(the trigger ``lac_tasks_free_resources``, sql/*/0017_resources.sql). The
words (names, values, ``NAME[:N]``, the environment) are
:mod:`git_lacunari.pools`'.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInput, ResourceHeld, ResourceUnavailable
from ..model import EventKind, ResourceValue
from ..pools import POOL_CAP, parse_needs, parse_values, validate_pool_name
from ..store import Row
from .grants import Grants
from .validate import validate_task_id


@dataclass(frozen=True)
class PoolValue:
    """One value of a pool, and the claim holding it (None: free)."""

    value: str
    task: int | None
    holder: str | None

    def to_json(self) -> dict[str, object]:
        return {"value": self.value, "task": self.task, "holder": self.holder}


@dataclass
class Pool:
    name: str
    values: list[PoolValue] = field(default_factory=list)

    @property
    def free(self) -> int:
        return sum(1 for v in self.values if v.task is None)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "total": len(self.values),
            "free": self.free,
            "values": [v.to_json() for v in self.values],
        }


@dataclass(frozen=True)
class PoolChange:
    """What ``resource add`` or ``resource remove`` did to one pool."""

    name: str
    changed: list[str]  # added, or removed
    unchanged: list[str]  # added: already in the pool


# An event's detail is at most 100,000 bytes (PostgreSQL's lac_api_insert_event
# refuses more), and a pool's values listed whole can pass that (10,000 of
# them, up to 200 characters each). Such a list is written as several events
# of the same kind, each naming at most this many bytes of it.
EVENT_LIST_BYTES = 60_000


def _parts(items: Sequence[Any]) -> list[list[Any]]:
    """``items`` cut, in order, into lists of at most :data:`EVENT_LIST_BYTES`
    of JSON each (never an empty one: an empty list is no part)."""
    parts: list[list[Any]] = []
    size = 0
    for item in items:
        cost = len(json.dumps(item)) + 2
        if not parts or size + cost > EVENT_LIST_BYTES:
            parts.append([])
            size = 0
        parts[-1].append(item)
        size += cost
    return parts


def _short(task_id: int, need: Row) -> ResourceUnavailable | None:
    """One need (``resource_needs``' row): refused, when its pool has too few
    free values for what the claim still lacks."""
    wanted, held, free = int(need["wanted"]), int(need["held"]), int(need["free"])
    if held + free >= wanted:
        return None
    return ResourceUnavailable(
        task=task_id,
        resource=str(need["name"]),
        wanted=wanted,
        held=held,
        free=free,
        total=int(need["total"]),
    )


class Resources(Grants):
    # --- the pools ------------------------------------------------------------

    def resource_add(self, name: str, values: Sequence[str]) -> PoolChange:
        """Add ``values`` (``A-B`` ranges expanded) to pool ``name``, made by
        its first value. A value already in the pool is left as it is, held
        or free, and said to be there (``unchanged``): adding is idempotent."""
        name = validate_pool_name(name)
        wanted = parse_values(values)
        with self.store.write():
            self._serialize_grants()
            had = {v.value for v in self._pool_values(name)}
            new = [v for v in wanted if v not in had]
            if len(had) + len(new) > POOL_CAP:
                raise InvalidInput(
                    f"pool {name!r} has {len(had):,} values; {len(new):,} more would pass "
                    f"the cap of {POOL_CAP:,}"
                )
            added: set[str] = set()
            if new:
                rows = self.store.all("resource_add", name=name, values=json.dumps(new))
                added = {str(r["value"]) for r in rows if r["added"]}
            made = [v for v in wanted if v in added]
            if made:
                for part in _parts(made):
                    self._event(EventKind.RESOURCE_ADDED, None, name=name, added=part)
        return PoolChange(name, made, [v for v in wanted if v not in added])

    def resource_remove(self, name: str, values: Sequence[str] = ()) -> PoolChange:
        """Remove ``values`` from pool ``name`` (none given: the whole pool).
        A value a claim holds is never removed: refused whole
        (``resource_held``); a value not in the pool is bad input."""
        name = validate_pool_name(name)
        wanted = parse_values(values) if values else None
        with self.store.write():
            self._serialize_grants()
            have = {v.value: v for v in self._pool_values(name)}
            if not have:
                raise InvalidInput(f"no resource pool {name!r} on this board")
            for value in wanted or []:
                if value not in have:
                    raise InvalidInput(f"pool {name!r} has no value {value!r}")
            for value in wanted or list(have):
                held = have[value]
                if held.task is not None:
                    raise ResourceHeld(
                        resource=name, value=value, task=held.task, holder=held.holder
                    )
            rows = self.store.all(
                "resource_remove",
                name=name,
                values=None if wanted is None else json.dumps(wanted),
            )
            gone = {str(r["value"]) for r in rows}
            removed = [v for v in (wanted or list(have)) if v in gone]
            if removed:
                for part in _parts(removed):
                    self._event(EventKind.RESOURCE_REMOVED, None, name=name, removed=part)
        return PoolChange(name, removed, [])

    def resource_pools(self, name: str | None = None) -> list[Pool]:
        """Every pool (or the one named), its values in the order they are
        handed out, each with the claim holding it."""
        if name is not None:
            name = validate_pool_name(name)
        pools: dict[str, Pool] = {}
        with self.store.read():
            for row in self.store.all("pool_values", name=name):
                pool = pools.setdefault(str(row["name"]), Pool(str(row["name"])))
                task = None if row["task_id"] is None else int(row["task_id"])
                pool.values.append(PoolValue(str(row["value"]), task, row["holder"]))
        return list(pools.values())

    def _pool_values(self, name: str) -> list[PoolValue]:
        return [
            PoolValue(
                str(r["value"]),
                None if r["task_id"] is None else int(r["task_id"]),
                r["holder"],
            )
            for r in self.store.all("pool_values", name=name)
        ]

    # --- what a task needs, what a claim holds -----------------------------------

    def claim_resources(self, task_id: int) -> list[ResourceValue]:
        """The values task ``task_id``'s claim holds, by pool name, each
        pool's in the order they were handed out (empty when it holds
        none, or is not claimed). :func:`git_lacunari.pools.resource_env`
        makes environment variables of them."""
        task_id = validate_task_id(task_id)
        with self.store.read():
            return self._held(task_id)

    def claims_resources(self, task_ids: Sequence[int]) -> dict[int, list[ResourceValue]]:
        """:meth:`claim_resources` of many claims, in one query."""
        ids = sorted({validate_task_id(t) for t in task_ids})
        found: dict[int, list[ResourceValue]] = {}
        if not ids:
            return found
        with self.store.read():
            for row in self.store.all("claims_resources", ids=json.dumps(ids)):
                found.setdefault(int(row["task_id"]), []).append(
                    ResourceValue(str(row["name"]), str(row["value"]))
                )
        return found

    def resource_needs(self, task_id: int) -> list[tuple[str, int]]:
        """What task ``task_id`` needs of each pool: ``(name, count)``, by name."""
        task_id = validate_task_id(task_id)
        with self.store.read():
            return [
                (str(r["name"]), int(r["count"]))
                for r in self.store.all("task_resource_needs", task_id=task_id)
            ]

    def _held(self, task_id: int) -> list[ResourceValue]:
        return [
            ResourceValue(str(r["name"]), str(r["value"]))
            for r in self.store.all("task_resources", task_id=task_id)
        ]

    def _checked_needs(self, given: Sequence[str]) -> list[tuple[str, int]]:
        """``NAME[:N]`` given, parsed; inside a transaction: each pool exists
        and holds at least N values (else bad input, nothing written)."""
        needs = parse_needs(given)
        if not needs:
            return needs
        sizes = {
            str(r["name"]): int(r["total"])
            for r in self.store.all("pool_sizes", names=json.dumps([n for n, _ in needs]))
        }
        for name, count in needs:
            if name not in sizes:
                raise InvalidInput(
                    f"no resource pool {name!r} on this board (`git lac resource add {name} "
                    "VALUE...` makes it)"
                )
            if count > sizes[name]:
                raise InvalidInput(
                    f"{count} {name} wanted; pool {name!r} holds only {sizes[name]} value(s)"
                )
        return needs

    def _add_needs(self, task_id: int, needs: Sequence[tuple[str, int]]) -> None:
        for name, count in needs:
            self.store.run("insert_task_resource", task_id=task_id, name=name, count=count)

    def _resource_shortfall(self, task_id: int) -> ResourceUnavailable | None:
        """Why task ``task_id`` cannot be granted what it needs now (the
        first pool, by name, with too few free values), or None. The caller
        holds the grant lock (:meth:`_serialize_grants`), so the answer
        stands until it commits."""
        for row in self.store.all("resource_needs", task_id=task_id):
            short = _short(task_id, row)
            if short is not None:
                return short
        return None

    def _resource_shortfalls(self, task_ids: Sequence[int]) -> dict[int, ResourceUnavailable]:
        """:meth:`_resource_shortfall` of many tasks, in one query (``ready``:
        what ``claim --next`` would pass over), for those that fall short."""
        found: dict[int, ResourceUnavailable] = {}
        if not task_ids:
            return found
        for row in self.store.all("tasks_resource_needs", ids=json.dumps(sorted(set(task_ids)))):
            task = int(row["task_id"])
            short = None if task in found else _short(task, row)
            if short is not None:
                found[task] = short
        return found

    def _grant_resources(self, task_id: int) -> list[ResourceValue]:
        """Grant our claim of ``task_id`` what it still lacks of each pool it
        needs, or raise :class:`ResourceUnavailable` (rolling the claim back);
        every value it holds after."""
        self._serialize_grants()
        short = self._resource_shortfall(task_id)
        if short is not None:
            raise short
        granted = self.store.all(
            "grant_resources", task_id=task_id, agent=self.agent, instance=self.instance
        )
        held = self._held(task_id)
        if granted:
            new = {(str(r["name"]), str(r["value"])) for r in granted}
            for part in _parts([v.to_json() for v in held if (v.name, v.value) in new]):
                self._event(EventKind.GRANTED, task_id, resources=part)
        return held
