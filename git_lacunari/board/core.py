"""The part every other part stands on: the store, the identity acting, the
board's clock, the event record, and the few lookups they all make."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .. import paths, rules
from ..errors import (
    AlreadyClaimed,
    NotFound,
    NotOwner,
    Refused,
)
from ..identity import Identity
from ..model import (
    EventKind,
    Lock,
    LockMode,
    PathSpec,
    Task,
    TaskState,
)
from ..store import Row, Store
from .validate import validate_task_id

# A listing says how many more rows match, counted up to this many: a count
# never reads more than COUNT_CAP index entries, so a page costs the same on
# a board of a thousand tasks and of a million.
COUNT_CAP = 10_000

BlobLookup = Callable[[list[str]], dict[str, str]]


T = TypeVar("T")


@dataclass
class Page(Generic[T]):
    """One page of a listing: its items, and how many more match (counted
    up to :data:`COUNT_CAP`; ``more_exact`` is false when there are more)."""

    items: list[T]
    more: int = 0
    more_exact: bool = True


CASE_SETTING = "case"
# the root commit of the repository the board was made for (`git lac init`)
REPOSITORY_SETTING = "repository_root"
CASE_RULES = ("fold", "exact")


class BoardCore:
    """The constructor every part shares, and the helpers they all use."""

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
        self._clone_ignorecase = ignorecase  # core.ignorecase: only when the board has no rule
        self._case_rule: str | None = None  # read once: fold, exact, or "" (none recorded)
        self.blob_ids = blob_ids
        # Merged into every event this Board records: who acted, where the
        # agent is a service (`git lac serve` records the person on its page).
        self.audit: dict[str, Any] = {}
        self._agent_recorded = False
        self._granted_new = False  # set by each grant (grants.py)
        self._last_sweep = float("-inf")
        # Asked for its take-over notices (liveness.tell) once in this
        # command: the command line does not ask again (Session.tell).
        self.notices_asked = False

    # --- the case rule --------------------------------------------------------

    @property
    def case_rule(self) -> str | None:
        """The board's case rule (``fold``: case variants of a path are one
        path; ``exact``), recorded by ``git lac init``; None on a board made
        without one (it then follows each clone's ``core.ignorecase``)."""
        if self._case_rule is None:
            row = self.store.one("get_setting", name=CASE_SETTING)
            value = str(row["value"]) if row else ""
            self._case_rule = value if value in CASE_RULES else ""
        return self._case_rule or None

    @property
    def ignorecase(self) -> bool:
        """Do case variants of a path name one path? The board decides
        (:attr:`case_rule`), so that clones with different
        ``core.ignorecase`` contend for one path; else this clone's setting."""
        rule = self.case_rule
        return self._clone_ignorecase if rule is None else rule == "fold"

    @ignorecase.setter
    def ignorecase(self, value: bool) -> None:
        self._clone_ignorecase = value

    def set_case_rule(self, rule: str) -> None:
        with self.store.write():
            self.store.run("set_setting", name=CASE_SETTING, value=rule)
        self._case_rule = rule

    # --- the repository the board was made for ---------------------------------

    def recorded_root(self) -> str | None:
        """The root commit ``git lac init`` recorded for the repository this
        board was made for; None on a board that records none."""
        row = self.store.one("get_setting", name=REPOSITORY_SETTING)
        return str(row["value"]) if row is not None else None

    def record_root(self, root: str) -> None:
        with self.store.write():
            self.store.run("set_setting", name=REPOSITORY_SETTING, value=root)

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

    def database_boards(self) -> tuple[list[str], str | None]:
        """Every board of this board's database, and which one this is
        (the embedded board is the only one of its file)."""
        current = self.store.one("current_board")
        names = [str(r["board"]) for r in self.store.all("list_boards")]
        return names, (str(current["board"]) if current else None)

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
            with self.store.write():  # one commit for both
                self.store.run("upsert_agent", agent=self.agent, caps=caps)
                self._record_instance()
            self._agent_recorded = True

    def place_later(self) -> None:
        """Record our agent (its capabilities, which claims read) now, and
        this instance only at :meth:`record_place`: a desk whose claim is
        refused is never made, and is no place the agent acted from."""
        caps = json.dumps(list(self.identity.capabilities))
        with self.store.write():
            self.store.run("upsert_agent", agent=self.agent, caps=caps)
        self._agent_recorded = True

    def record_place(self, identity: Identity) -> None:
        """Act as ``identity`` from now on and record where its instance is:
        a desk's path is known only once its task is (``claim --next --worktree``)."""
        self.identity = identity
        with self.store.write():
            self._record_instance()

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
        return rules.is_ours(owner, instance, self.agent, self.instance)

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

    def require_claim(self, task_id: int, advice: str = "") -> Task:
        """Our claim of the task, here; else refused as ``lock --task`` and
        ``wait --lock --task`` refuse it (``not_owner``, ``not_found``, or
        held elsewhere). For a caller that must know before it waits."""
        task_id = validate_task_id(task_id)
        with self.store.read():
            return self._require_own_claim(task_id, advice)

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

    def _fill_details(self, tasks: Sequence[Task]) -> None:
        """Set each task's declared paths, locks and dependencies (what
        ``tasks --json`` and ``ready --json`` report), for all of them in one
        query (``tasks_details``), never one per task."""
        if not tasks:
            return
        ids = json.dumps(sorted({t.id for t in tasks}))
        found: dict[int, Row] = {}
        for got in self.store.all("tasks_details", ids=ids):
            found[int(got["id"])] = got
        for task in tasks:
            row = found.get(task.id)
            if row is None:  # gone meanwhile (another transaction)
                continue
            task.paths = [
                PathSpec(p["pattern"], LockMode.stored(p["mode"])) for p in _listed(row["paths"])
            ]
            task.locks = [Lock.from_row(lk) for lk in _listed(row["locks"])]
            task.depends_on = [
                {"id": int(d["id"]), "state": d["state"], "title": d["title"]}
                for d in _listed(row["depends_on"])
            ]

    def _why_not_claimable(self, task_id: int) -> Refused:
        """Looked up only after the claiming UPDATE came back empty
        (:func:`git_lacunari.rules.why_not_claimable`)."""
        task = self._task_row(task_id)
        deps: list[tuple[int, str]] = []
        if task is not None and task.state == TaskState.OPEN:
            deps = [
                (int(r["id"]), str(r["state"]))
                for r in self.store.all("task_deps", task_id=task_id)
            ]
        return self._why_not(task_id, task, deps)

    def _why_not(self, task_id: int, task: Task | None, deps: list[tuple[int, str]]) -> Refused:
        """Why ``task`` (its dependencies ``deps`` already read) is not claimable."""
        return rules.why_not_claimable(
            task_id,
            task,
            deps,
            agent=self.agent,
            capabilities=self.identity.capabilities,
            where=self.where_of,
        )


def _listed(value: Any) -> list[Any]:
    """A JSON array as the driver gave it: parsed (psycopg's jsonb) or text (SQLite)."""
    if isinstance(value, str):
        parsed: list[Any] = json.loads(value)
        return parsed
    return list(value or [])
