"""The board's rules in Python, each written once: pure functions of plain
facts, no I/O, no store.

A rule that the database must also enforce (a claimer or a write function
cannot be trusted to ask Python) has a twin in SQL; a rule the live page
needs between two pushes has its answer computed here and sent to it. Each
docstring names the twins and the test that pins them to this form over
generated inputs (tests/test_rules.py), so that a change to one that is not
made to the others fails there.

The overlap of two path patterns is a rule too; its Python form is
:func:`git_lacunari.paths.overlap` (with :func:`~git_lacunari.paths.covers`),
pinned to its PostgreSQL twin ``lac_overlap`` (sql/postgres/0004_overlap.sql)
by tests/test_overlap_sql.py. :func:`conflict` below builds on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from . import paths
from .errors import (
    AlreadyClaimed,
    MissingCapability,
    NotFound,
    NotOpen,
    NotOwner,
    Refused,
    UnmetDependency,
)
from .model import LockMode, Task, TaskState

# --- claimability -------------------------------------------------------------


def unmet_dependencies(deps: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    """The dependencies ``(id, state)`` that are not done, in the order given."""
    return [(dep, state) for dep, state in deps if state != TaskState.DONE]


def missing_capabilities(needs: Iterable[str], held: Iterable[str]) -> list[str]:
    """What the task needs that the agent does not hold, in the task's order."""
    have = set(held)
    return [cap for cap in needs if cap not in have]


def claimable(dep_states: Iterable[str], needs: Iterable[str], held: Iterable[str]) -> bool:
    """May an agent holding ``held`` claim a task whose dependencies are in
    ``dep_states`` and that needs ``needs``? (State aside: the claiming
    statement checks ``open`` itself.) Every dependency done, every needed
    capability held by that one agent.

    Twins: PostgreSQL ``lac_claimable(task, agent)`` (sql/postgres/0001_board.sql)
    and SQLite's ``claimable`` fragment (sql/sqlite/queries.sql), which every
    claimer runs; pinned to this by tests/test_rules.py::test_claimable_matches_sql.
    """
    return not unmet_dependencies((0, s) for s in dep_states) and not missing_capabilities(
        needs, held
    )


def why_not_claimable(
    task_id: int,
    task: Task | None,
    deps: Sequence[tuple[int, str]],
    *,
    agent: str,
    capabilities: Iterable[str],
    where: Callable[[str | None], str],
) -> Refused:
    """Why ``agent`` cannot claim ``task``: the reason a refused claim gives,
    looked up only after the claiming statement came back empty (so a claim
    of ours is one held at another instance). The same order as
    :func:`claimable` (dependencies, then capabilities), after the state.
    ``where`` names an instance for people (a store lookup the caller
    supplies; asked only for our own claim held elsewhere)."""
    if task is None:
        return NotFound(task=task_id)
    if task.state == TaskState.CLAIMED and task.owner == agent:
        return AlreadyClaimed(
            task=task.id,
            holder=task.owner,
            where=where(task.instance),
            advice="--take-over moves it here (on the record)",
        )
    if task.state == TaskState.CLAIMED:
        return AlreadyClaimed(task=task_id, holder=task.owner)
    if task.state != TaskState.OPEN:
        return NotOpen(task=task_id, state=task.state)
    for dep, state in unmet_dependencies(deps):
        return UnmetDependency(task=task_id, dependency=dep, dependency_state=state)
    for cap in missing_capabilities(task.needs, capabilities):
        return MissingCapability(task=task_id, capability=cap, agent=agent)
    return NotOpen(task=task_id, state=task.state, advice="it could not be claimed")


def claimable_by_someone(needs: Sequence[str], agents_caps: Iterable[Iterable[str]]) -> bool:
    """Does one known agent hold every capability ``needs`` names? What the
    live page asks (it speaks for no agent in particular): the capability
    half of :func:`claimable` for some agent, never a union of several
    agents' capabilities, which no single claimer has."""
    return any(not missing_capabilities(needs, caps) for caps in agents_caps)


# --- staleness ----------------------------------------------------------------


def stale_limit(stale_after: float | None, default: float, at_least: float = 0.0) -> float:
    """How long a claim may stay silent: its own stale-after, else the board's
    (``default``); a keeper's ``at_least`` only ever lengthens it."""
    return max(default if stale_after is None else stale_after, at_least)


def stale_at(
    state: str,
    heartbeat_at: float | None,
    stale_after: float | None,
    default: float,
    at_least: float = 0.0,
) -> float | None:
    """The board time after which a claim is stale (None: not a claim, or
    never heartbeat). The live page is sent this and compares it with its
    board clock each second (web/static/app.js ``isStale``), so the page
    has no staleness rule of its own."""
    if state != TaskState.CLAIMED or heartbeat_at is None:
        return None
    return heartbeat_at + stale_limit(stale_after, default, at_least)


def is_stale(
    state: str,
    heartbeat_at: float | None,
    stale_after: float | None,
    default: float,
    now: float,
    at_least: float = 0.0,
) -> bool:
    """Is a claim silent longer than its stale-after at ``now`` (board clock)?
    ``heartbeat_at + limit < now``, written as SQL writes it so the float
    arithmetic is the same.

    Twins: SQLite ``stale_claims`` (sql/sqlite/queries.sql), PostgreSQL
    ``lac_api_stale_claims`` and ``lac_api_expire`` (sql/postgres/0005_team.sql);
    the page compares :func:`stale_at` with its clock. Pinned by
    tests/test_rules.py::test_staleness_matches_sql (on a board whose clock
    the test holds still).
    """
    at = stale_at(state, heartbeat_at, stale_after, default, at_least)
    return at is not None and at < now


# --- ownership and editing ----------------------------------------------------


def is_ours(owner: str | None, instance: str | None, agent: str, here: str) -> bool:
    """Held by ``agent`` *at* ``here``: the same name at another instance (a
    crashed machine, an old clone) is another holder. SQL says it as
    ``owner = agent AND instance = here`` in every write function of
    sql/postgres/0005_team.sql and in sql/sqlite/queries.sql."""
    return owner == agent and instance == here


def edit_refusal(
    task: Task, *, agent: str, instance: str, where: Callable[[str | None], str]
) -> Refused | None:
    """Why ``task`` may not be edited by ``agent`` at ``instance`` (None: it
    may): open, or claimed by us here. The ``edit_task`` query states the
    same in SQL (and is the one that decides, under the write)."""
    if task.state == TaskState.CLAIMED and task.owner != agent:
        return NotOwner(
            agent=agent,
            task=task.id,
            holder=task.owner,
            advice="only its owner edits a claimed task",
        )
    if task.state == TaskState.CLAIMED and task.instance != instance:
        return AlreadyClaimed(
            task=task.id,
            holder=task.owner,
            where=where(task.instance),
            advice="only where it is claimed is it edited",
        )
    if task.state not in (TaskState.OPEN, TaskState.CLAIMED):
        return NotOpen(task=task.id, state=task.state, advice="reopen it to edit it")
    return None


# --- lock conflicts -----------------------------------------------------------


def modes_conflict(wanted: str, held: str) -> bool:
    """Readers coexist; a writer on either side conflicts."""
    return LockMode.WRITE in (wanted, held)


def conflict(wanted: str, wanted_mode: str, held: str, held_mode: str, ignorecase: bool) -> bool:
    """Do two locks of different holders conflict: at least one a write, and
    their patterns overlap (:func:`git_lacunari.paths.overlap`). The holder
    test (:func:`is_ours`) is the caller's. Twin: PostgreSQL
    ``lac_require_free_all`` (sql/postgres/functions/team.sql), team mode's
    check; the overlap half is pinned by tests/test_overlap_sql.py, which also
    pins the head index both sides use to find candidates
    (:class:`~git_lacunari.paths.PrefixIndex`, ``lac_locks_head``)."""
    return modes_conflict(wanted_mode, held_mode) and paths.overlap(held, wanted, ignorecase)


# --- claim --next's steering -----------------------------------------
#
# One rule, used by the board's claim --next (board/claims.py) and by
# bench/landing.py, which drives this very code: no copy to tune.


@dataclass(frozen=True)
class LandingLine:
    """A landing claim (done, its work not yet in the destination) a claim
    may start from: its task, holder, branch, tip, and the paths it changed
    (declared write paths, and the files its commits not in the destination
    change). The claimer's own, and (stacking) another agent's
    whose tip the claimer's clone has: a write lock of a landing claim does
    not refuse a claim built on its tip (:meth:`Grants._conflicts`)."""

    task: int
    branch: str | None
    tip: str | None
    paths: tuple[str, ...]
    holder: str | None = None  # None: the claimer's own

    @property
    def whose(self) -> str:
        return "your landing" if self.holder is None else f"{self.holder}'s landing"


def built_on_detail(lines: Sequence[LandingLine]) -> dict[str, Any]:
    """What a ``locked`` event says of the landing lines its locks were
    granted beside: their tasks, and each line's tip then (``built_on_tips``,
    ``[task, tip]``). The guards read the tips back: the commits under one
    are the finished work the holder's lock was granted beside, which
    anyone may push past it (stacking)."""
    if not lines:
        return {}
    return {
        "built_on": [line.task for line in lines],
        "built_on_tips": [[line.task, line.tip] for line in lines if line.tip],
    }


@dataclass(frozen=True)
class Meeting:
    """A task whose declared paths meet busy ones: ``meets``, every busy path
    met (sorted); ``others``, whether another agent's claim in work changes
    one of them; ``lines``, the landing lines that change one (its claim
    starts from them)."""

    task: int
    meets: list[str]
    others: bool
    lines: list[LandingLine]

    @property
    def mine(self) -> list[int]:
        """The landing lines met, by task (the JSON's ``landing``)."""
        return [line.task for line in self.lines]


def meeting(
    task: int,
    patterns: Sequence[str],
    busy: Sequence[str],
    own: Sequence[LandingLine],
    ignorecase: bool = False,
) -> Meeting | None:
    """How ``task``'s declared ``patterns`` meet the paths live work changes:
    ``busy`` (other agents' claims in work, declared or observed, and their
    landing lines this clone cannot build on) and ``own`` (the landing lines
    the claimer can start from). None: it meets nothing."""

    def met(changed: Iterable[str]) -> set[str]:
        return {b for b in changed for p in patterns if paths.overlap(p, b, ignorecase)}

    theirs = met(busy)
    lines = [line for line in own if met(line.paths)]
    mine = set().union(*(met(line.paths) for line in lines)) if lines else set()
    if not theirs and not mine:
        return None
    return Meeting(task, sorted(theirs | mine), bool(theirs), lines)


def steer(
    candidates: Iterable[tuple[int, Sequence[str]]],
    busy: Sequence[str],
    own: Sequence[LandingLine],
    passed: list[Meeting],
    *,
    strict: bool = False,
    ignorecase: bool = False,
    avoid_own: bool = False,
) -> Iterator[tuple[int, Meeting | None]]:
    """The order claim --next tries tasks in, lazily: ``candidates`` (task,
    declared patterns) in the board's order (priority, age), each claimable
    as far as the caller knows.

    1. In the board's order, every task that meets no busy path, and every
       task that meets only landing lines it can build on (``own``: the
       claimer's own, and others' whose tips its clone has): its claim
       names those lines to start from, and from there their work is in its
       base, nothing to conflict with. (A landing claim's locks refuse
       everyone not built on it: passing such a task over leaves it to
       wait, locked, until the line lands; bench/landing.py measures that,
       ``avoid_own``, at fewer conflicts avoided and less throughput.)
    2. Then, unless ``strict``, the tasks passed over (each appended to
       ``passed`` as it is met): those that meet another agent's live work,
       in the board's order.

    Each is yielded with its :class:`Meeting` (None: it meets nothing); the
    caller claims the first it can. ``avoid_own`` (a what-if, no setting):
    own-only tasks are passed over too, and tried before the others'."""
    for task, patterns in candidates:
        met = meeting(task, patterns, busy, own, ignorecase) if busy or own else None
        if met is None or not (met.others or avoid_own):
            yield task, met
        else:
            passed.append(met)
    for met in [m for m in passed if not m.others]:
        yield met.task, met
    if not strict:
        for met in [m for m in passed if m.others]:
            yield met.task, met
