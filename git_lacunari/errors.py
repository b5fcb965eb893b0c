"""Error types, and the one vocabulary of refusals.

Nothing here prints or picks an exit code: :mod:`git_lacunari.edge` does both,
once, from the type (a :class:`Refused` is exit 1, an :class:`InvalidInput`
exit 2, any other :class:`LacError` exit 3). The docstring of a class is its
user-facing message; a refusal's first docstring line is a template filled
from its facts, and the facts are exactly what ``--json`` prints under
``refused`` (README, "JSON output").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .model import Conflict

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_CANNOT_WORK = 3

RefusalReason = Literal[
    "already_claimed",
    "unmet_dependency",
    "missing_capability",
    "path_locked",
    "not_open",
    "not_found",
    "not_owner",
    "hook_conflict",
    "already_open",
    "not_permitted",
    "conflict_markers",
    "not_queued",
    "resource_unavailable",
    "resource_held",
]


class LacError(Exception):
    """Base of every error git-lacunari reports to its user."""

    kind = "error"

    def __init__(self, message: str | None = None, *, hint: str | None = None) -> None:
        # The docstring of a subclass is its default user-facing message.
        super().__init__(message or (type(self).__doc__ or "").strip())
        self.hint = hint  # a second line for people (never in --json)

    @property
    def message(self) -> str:
        return str(self.args[0])

    @property
    def extra(self) -> dict[str, Any]:
        """Facts beside ``kind`` and ``message`` in the ``--json`` error object."""
        return {}


class InvalidInput(LacError):
    """Invalid input."""

    kind = "invalid_input"


class BadUsage(InvalidInput):
    """Bad usage."""

    kind = "usage"


class BadPath(InvalidInput):
    """Invalid path pattern."""

    kind = "bad_path"


class BadDuration(InvalidInput):
    """Invalid duration."""

    kind = "bad_duration"


class CannotWorkHere(LacError):
    """Cannot work here."""

    kind = "cannot_work"


class NotARepository(CannotWorkHere):
    """Not a git repository (or any of the parent directories)."""

    kind = "not_a_repository"


class BoardUnreachable(CannotWorkHere):
    """The board cannot be reached."""

    kind = "board_unreachable"


class BoardUnknown(CannotWorkHere):
    """Which board this repository uses is not known here.

    A PostgreSQL URL (``lac.url``) holds many boards; the one a repository uses
    is ``lac.board``, else the ``lac.board`` its committed ``.lacconfig`` names,
    else one named after its root commit. None of them could be read: a
    shallow clone (whose boundary is not the root), a repository with no
    commit yet. Nothing is guessed, so no empty board ever answers instead.
    """

    kind = "board_unknown"


class BoardTooNew(CannotWorkHere):
    """The board's schema is newer than this git-lacunari; upgrade git-lacunari."""

    kind = "board_too_new"


# --- refusals: the board (or a guard) said no -----------------------------------


class Refused(LacError):
    """The board refused.

    Raise one of the typed reasons below; each takes its facts as keywords and
    makes its own message. ``advice`` is appended to the message (what the
    caller was doing, what to do now); ``details`` are extra lines for people
    (a guard's table), printed under the message and never in ``--json``.
    The positional ``(reason, message, **facts)`` constructor is for those
    typed reasons only: nothing raises a bare ``Refused``.
    """

    kind = "refused"
    reason: str = "refused"

    def __init__(self, reason: str, message: str, /, **facts: Any) -> None:
        super().__init__(message)
        self.reason = reason
        self.facts: dict[str, Any] = facts
        self.details: tuple[str, ...] = ()
        # Take-over notices (event ids) this refusal says in its advice: the
        # command records them as told, so they are not said again.
        self.told: tuple[int, ...] = ()
        # Notices the command told beside the refusal (Session.tell_refused):
        # under "notices" in its JSON.
        self.notices: list[dict[str, Any]] = []

    @classmethod
    def _says(cls, advice: str = "", **values: Any) -> str:
        template = (cls.__doc__ or "").strip().splitlines()[0]
        said = template.format(**values)
        return f"{said}; {advice}" if advice else said

    def to_json(self) -> dict[str, Any]:
        """The ``refused`` object: the reason and its facts."""
        return {"reason": self.reason, **self.facts}


class AlreadyClaimed(Refused):
    """{what} is already {taken} by {holder}

    Facts: ``task`` (null when what is taken is not a task: a board's keeper,
    a lane's drainer), ``holder``, and ``where`` (the holder's instance as
    host:path, when the same agent name holds it from another working tree;
    else null).
    """

    reason = "already_claimed"

    def __init__(
        self,
        *,
        task: int | None,
        holder: str | None,
        what: str = "",
        where: str | None = None,
        advice: str = "",
    ) -> None:
        taken = "claimed" if task is not None else "worked"
        shown = f"{holder} at {where}" if where else holder
        said = self._says(advice, what=what or f"task #{task}", taken=taken, holder=shown)
        super().__init__(self.reason, said, task=task, holder=holder, where=where)


class UnmetDependency(Refused):
    """task #{task} waits on task #{dependency} ({dependency_state})

    Facts: ``task``, ``dependency`` (the first one not done) and its state.
    """

    reason = "unmet_dependency"

    def __init__(self, *, task: int, dependency: int, dependency_state: str) -> None:
        facts: dict[str, Any] = {
            "task": task,
            "dependency": dependency,
            "dependency_state": dependency_state,
        }
        super().__init__(self.reason, self._says(**facts), **facts)


class MissingCapability(Refused):
    """task #{task} needs capability {capability!r}, which {agent} lacks

    Facts: ``task``, ``capability`` (the first one missing).
    """

    reason = "missing_capability"

    def __init__(self, *, task: int, capability: str, agent: str) -> None:
        said = self._says(task=task, capability=capability, agent=agent)
        super().__init__(self.reason, said, task=task, capability=capability)


class NotOpen(Refused):
    """task #{task} is {state}

    Facts: ``task``, ``state`` (its state now).
    """

    reason = "not_open"

    def __init__(self, *, task: int, state: str, advice: str = "") -> None:
        said = self._says(advice, task=task, state=state)
        super().__init__(self.reason, said, task=task, state=state)


class BuiltOn(Refused):
    """task #{task} is landing and {stacked} {is_are} built on it

    Facts: ``task`` (the landing claim), ``built_on_by`` (the live claims
    whose locks were granted beside it, stacked on its line, oldest id
    first), ``holder`` (the first of them's holder).
    """

    reason = "built_on"

    def __init__(
        self, *, task: int, built_on_by: Sequence[tuple[int, str]], advice: str = ""
    ) -> None:
        stacked = ", ".join(f"task #{t} ({who})" for t, who in built_on_by)
        said = self._says(
            advice, task=task, stacked=stacked, is_are="are" if len(built_on_by) > 1 else "is"
        )
        super().__init__(
            self.reason,
            said,
            task=task,
            built_on_by=[t for t, _ in built_on_by],
            holder=built_on_by[0][1] if built_on_by else None,
        )


class NotQueued(Refused):
    """the server refused task #{task}'s landing line: {said}

    Facts: ``task``, ``said`` (the server's refusal, its first line). `land`
    pushed the line to the server's queue and its pre-receive refused it
    (a path another agent holds, say): the claim is its holder's again, in
    work, its locks kept.
    """

    reason = "not_queued"

    def __init__(self, *, task: int, said: str, advice: str = "") -> None:
        super().__init__(
            self.reason, self._says(advice, task=task, said=said), task=task, said=said
        )


class NotFound(Refused):
    """{what}

    Facts: ``task`` (the id asked for, or null), ``lane`` (for a claim of the
    next task, else null), ``blocked_by_paths`` (claimable tasks of the lane
    passed over because their paths are held), ``blocked_by_resources``
    (those passed over because a resource pool they need has too few free
    values).
    """

    reason = "not_found"

    def __init__(
        self,
        *,
        task: int | None = None,
        lane: str | None = None,
        blocked: Sequence[int] = (),
        short: Sequence[int] = (),
    ) -> None:
        if task is not None:
            what = f"no task #{task} on this board"
        else:
            what = f"no claimable task in lane {lane!r}"
            if blocked:
                what += f"; {len(blocked)} claimable task(s) wait on held paths"
            if short:
                what += f"; {len(short)} claimable task(s) wait on resources"
        super().__init__(
            self.reason,
            self._says(what=what),
            task=task,
            lane=lane,
            blocked_by_paths=list(blocked),
            blocked_by_resources=list(short),
        )


class ResourceUnavailable(Refused):
    """task #{task} needs {wanted} {resource}; pool {resource!r} has {free} free of {total}

    Facts: ``task``, ``resource`` (the first pool, by name, with too few free
    values), ``wanted`` (how many of its values the task needs), ``held``
    (how many of them its claim holds already: a claim asking for more),
    ``free`` (free now), ``total`` (the pool's size). The claim is refused
    whole: nothing is granted, nothing claimed.
    """

    reason = "resource_unavailable"

    def __init__(
        self, *, task: int, resource: str, wanted: int, free: int, total: int, held: int = 0
    ) -> None:
        facts: dict[str, Any] = {
            "task": task,
            "resource": resource,
            "wanted": wanted,
            "held": held,
            "free": free,
            "total": total,
        }
        said = self._says(**facts)
        if held:  # "needs 4 port" alone reads as if the 3 it holds were not counted
            said = said.replace(f" {resource};", f" {resource} and holds {held};", 1)
        super().__init__(self.reason, said, **facts)


class ResourceHeld(Refused):
    """{resource} {value} is held by task #{task} ({holder}); it is freed when that claim ends

    Facts: ``resource``, ``value`` (the first held value asked to be
    removed), ``task`` and ``holder`` (the claim holding it). ``resource
    remove`` is refused whole: nothing is removed.
    """

    reason = "resource_held"

    def __init__(self, *, resource: str, value: str, task: int, holder: str | None) -> None:
        facts: dict[str, Any] = {"resource": resource, "value": value, "task": task}
        facts["holder"] = holder
        super().__init__(self.reason, self._says(**facts), **facts)


class NotOwner(Refused):
    """{what} is not {agent}'s

    Facts: ``task`` (null for a lock without one), ``holder`` (who has it, if
    anyone), ``path`` (the lock pattern asked for, else null).
    """

    reason = "not_owner"

    def __init__(
        self,
        *,
        agent: str,
        task: int | None = None,
        holder: str | None = None,
        path: str | None = None,
        advice: str = "",
    ) -> None:
        if task is not None:
            what = f"task #{task}" + (f" (claimed by {holder})" if holder else "")
        else:
            what = f"a lock on {path}"
        said = self._says(advice, what=what, agent=agent)
        super().__init__(self.reason, said, task=task, holder=holder, path=path)


NAMED_CONFLICTS = 3  # holdings a path_locked message names before "and N more"


class PathLocked(Refused):
    """{holders}

    Facts: those of the first conflict, and ``conflicts``, every one of them:
    ``path`` (asked for or changed), ``wanted`` (read or write), ``holder``,
    ``task`` (the holder's, or null), ``pattern`` and ``mode`` (the holder's
    lock), ``heartbeat_at`` (of the holder's claim, where known), ``ref`` and
    ``commit`` (a push: what changes the path), ``landing_tip`` (when the
    holder's claim is landing: the tip a change must be built on; else null).
    """

    reason = "path_locked"

    def __init__(
        self, conflicts: Sequence[Conflict], *, advice: str = "", details: Sequence[str] = ()
    ) -> None:
        if not conflicts:
            raise ValueError("a path_locked refusal needs at least one conflict")
        named = list(dict.fromkeys(c.message for c in conflicts))
        holders = "; ".join(named[:NAMED_CONFLICTS])
        if len(named) > NAMED_CONFLICTS:  # one line, not one holding a line (--json has all)
            holders += f"; and {len(named) - NAMED_CONFLICTS:,} more"
        every = [c.to_json() for c in conflicts]
        first = {k: every[0][k] for k in ("path", "wanted", "holder", "task", "pattern", "mode")}
        super().__init__(self.reason, self._says(advice, holders=holders), **first, conflicts=every)
        self.conflicts = list(conflicts)
        self.details = tuple(details)


class HookConflict(Refused):
    """{path} is not ours and {legacy} already exists; keeping both is not possible

    Facts: ``path`` (the foreign hook).
    """

    reason = "hook_conflict"

    def __init__(self, *, path: str, legacy: str, advice: str = "") -> None:
        super().__init__(self.reason, self._says(advice, path=path, legacy=legacy), path=path)


class AlreadyOpen(Refused):
    """task #{task} is already open

    Facts: ``task``. Only a done, cancelled or parked task is reopened.
    """

    reason = "already_open"

    def __init__(self, *, task: int, advice: str = "") -> None:
        super().__init__(self.reason, self._says(advice, task=task), task=task)


class NotPermitted(Refused):
    """{what}

    Facts: ``role`` (the database role that asked). Team mode: the database
    itself refused, because the session's role may not do this (act as
    another agent, force-release without being an admin, expire a live claim
    or another's without being a keeper, write a table directly).
    """

    reason = "not_permitted"

    def __init__(self, *, what: str, role: str | None = None) -> None:
        super().__init__(self.reason, self._says(what=what), role=role)


NAMED_MARKED = 5  # paths a conflict_markers message names before "and N more"


class ConflictMarkers(Refused):
    """conflict markers left in {named}

    Facts: ``paths``, every path a reconcile in progress left conflicted whose
    staged content still holds conflict markers (more ``<<<<<<<``/``>>>>>>>``
    lines than either side had). Refused by the pre-commit hook and by
    ``reconcile --continue``; ``LAC_ALLOW_MARKERS=1`` (or ``--continue
    --allow-markers``) commits them on purpose.
    """

    reason = "conflict_markers"

    def __init__(self, *, paths: Sequence[str], advice: str = "") -> None:
        named = ", ".join(paths[:NAMED_MARKED])
        if len(paths) > NAMED_MARKED:
            named += f" and {len(paths) - NAMED_MARKED:,} more"
        super().__init__(self.reason, self._says(advice, named=named), paths=list(paths))


class HeldOnBoard(Refused):
    """{holder} holds {pattern}, which overlaps {path}

    Facts: those of :class:`PathLocked` for its one conflict
    (``heartbeat_at`` unknown: null). Team mode: the lock-grant function found
    the conflict itself, where the caller's own check had not (an index key
    forged by another agent's direct call).
    """

    reason = "path_locked"

    def __init__(
        self, *, path: str, wanted: str, holder: str, task: int | None, pattern: str, mode: str
    ) -> None:
        said = self._says(path=path, holder=holder, pattern=pattern)
        one = {"path": path, "wanted": wanted, "holder": holder, "task": task}
        one.update(pattern=pattern, mode=mode)
        super().__init__(self.reason, said, **one, conflicts=[{**one, "heartbeat_at": None}])


class LineHeld(Refused):
    """{branch} carries task #{task}'s unlanded work, claimed by {holder}

    Facts: ``branch`` (the branch a push deletes), ``task`` and ``holder``
    (the live claim whose last known commit that branch alone of the
    destination and it carries). The server guard: a deletion is judged by
    the claims' lines, not as a rewind of paths.
    """

    reason = "line_held"

    def __init__(self, *, branch: str, task: int, holder: str) -> None:
        advice = f"only {holder} may delete it"
        said = self._says(advice, branch=branch, task=task, holder=holder)
        super().__init__(self.reason, said, branch=branch, task=task, holder=holder)


# --- a board that was reached but did not answer (never "unreachable") ---------------


class BoardBusy(CannotWorkHere):
    """The board is busy; retry in a moment.

    A wait on the board ran out (``lac.timeout``): its SQLite file held by
    another writer, a PostgreSQL lock or statement timeout, a deadlock or a
    serialization failure. The board was reached and nothing was written: it
    is never "unreachable", and the guards' offline policy takes it by
    ``lac.guard.unanswered`` (default refuse), not ``lac.guard.offline``.
    ``cause`` names which wait it was (``locked``, ``lock_timeout``,
    ``statement_timeout``, ``cancelled``, ``deadlock``,
    ``serialization_failure``) and is printed in ``--json``.
    """

    kind = "board_busy"

    def __init__(self, message: str, *, cause: str, transient: bool = False) -> None:
        super().__init__(message)
        self.cause = cause
        # Rolled back by the server for a reason that a second try may not
        # meet (deadlock, serialization): safe to retry a one-statement
        # transaction. A timeout already waited its bound.
        self.transient = transient

    @property
    def extra(self) -> dict[str, Any]:
        return {"cause": self.cause}


class BoardCorrupt(CannotWorkHere):
    """The board's database file is damaged."""

    kind = "board_corrupt"


class BoardFailed(CannotWorkHere):
    """The board reported an error it could not work past."""

    kind = "board_failed"
