"""A guard's verdict, said: the hook's one-line warnings, its JSON body, and
its refusal (a :class:`PathLocked` with a table for people under it).
Click-free: entry.py's hook fast path renders with it."""

from __future__ import annotations

from typing import NoReturn

from ..durations import format_duration
from ..edge import Result
from ..errors import PathLocked
from ..guard.verdict import Decision, Verdict
from ..model import Conflict
from .terminal import shown

ADVICE = (  # printed under a guard's refusal, for people
    "What now: wait for the holder to finish, ask them to release it, see who holds what "
    "with `git lac check PATH`, or skip the guard with --no-verify (the board then cannot "
    "warn anyone, and the collision surfaces later, for `git lac reconcile`)."
)


def advice(paths: list[str]) -> str:
    """:data:`ADVICE`; when a path is shown escaped (a control, zero-width or
    bidi character in its name), `git lac check` cannot be given it (no
    pattern may hold such a character), so the advice names `git lac locks`,
    which lists every lock and its holder, instead."""
    if all(shown(p) == p for p in paths):
        return ADVICE
    return ADVICE.replace(
        "with `git lac check PATH`",
        "with `git lac locks` (a name shown escaped cannot be given to `git lac check`)",
    )


RELEASE_ADVICE = (
    "To get a release: ask the holder to finish (`git lac done ID`) or release it "
    "(`git lac release ID`, `git lac unlock PATTERN`), or wait until a stale claim "
    "expires (`git lac keeper`); then push again. The holder may push its own paths."
)


def describe(holding: Conflict, now: float) -> str:
    """Who holds it and how alive their claim is, aged on the board's clock."""
    lock = holding.lock
    if lock.task_id is not None:
        beat = format_duration(now - holding.heartbeat_at) if holding.heartbeat_at else "none"
        where = f"task #{lock.task_id}, heartbeat {beat} ago"
    else:
        where = f"no task, locked {format_duration(now - lock.acquired_at)} ago"
    return f"held by {shown(lock.agent)} ({lock.mode} lock {shown(lock.pattern)}, {where})"


def build_on(refused: list[Conflict]) -> list[str]:
    """A line for the refusals by landing claims (stacking): a
    change built on their tips, its paths locked beside them, passes their
    locks (a fetch first, where the tip is not in this clone)."""
    landing = {c.lock.task_id: c.landing_tip for c in refused if c.landing_tip}
    if not landing:
        return []
    tasks = ", ".join(f"#{task}" for task in sorted(t for t in landing if t is not None))
    tips = " ".join(dict.fromkeys(tip for tip in landing.values() if tip))
    said = f"Task {tasks} is" if len(landing) == 1 else f"Tasks {tasks} are"
    return [
        f"{said} landing (done, not in the destination yet): a change built on "
        f"its tip, its paths locked beside it under a claim, passes its locks: "
        f"git merge --no-edit {tips}, then git lac lock --task ID PATH"
    ]


def checked(
    hook: str, paths: int, *, skipped: bool = False, offline: bool = False
) -> dict[str, object]:
    """The JSON body of a guard that did not refuse."""
    return {"hook": hook, "checked": paths, "skipped": skipped, "offline": offline}


def guard_result(verdict: Verdict) -> Result:
    """The edge's Result for a verdict that lets the change through (or says
    why it was stopped unchecked); raises :class:`PathLocked` for a refusal,
    and the board's own error when the policy stops a change on it."""
    hook, decision = verdict.hook, verdict.decision
    if decision is Decision.SWITCHED_OFF:
        return Result(
            checked(hook, 0, skipped=True),
            warnings=[f"git lac: {hook} guard skipped (LAC_GUARD=off)"],
        )
    if decision is Decision.NO_BOARD:
        return Result(checked(hook, 0, skipped=True))
    if decision is Decision.ALLOWED:
        body = checked(hook, verdict.checked)
        if verdict.pusher is not None:
            body["pusher"] = verdict.pusher.name
        return Result(body, warnings=list(verdict.warnings))
    if decision is Decision.REFUSED:
        _refuse(verdict)
    return _unanswered(verdict)


def _unanswered(verdict: Verdict) -> Result:
    """The board gave no answer: the offline policy, said."""
    exc, key, what = verdict.trouble, verdict.policy_key, verdict.what
    assert exc is not None and key is not None
    body = checked(verdict.hook, 0, offline=True)
    if verdict.hook == "pre-receive":
        if verdict.decision is Decision.UNCHECKED:
            return Result(
                body, warnings=[f"git lac: {exc.message}; push allowed unchecked ({key} = allow)"]
            )
        return Result(body, unfinished=f"push refused: {exc.message} ({key} = refuse)")
    if verdict.decision is Decision.UNCHECKED:
        return Result(
            body, warnings=[f"git lac: {exc.message}; {what} allowed unchecked ({key} = warn)"]
        )
    if verdict.decision is Decision.FAILED:
        # The board's own error, so --json keeps its kind and cause; only its
        # words say what the guard made of it.
        exc.args = (
            f"{exc.message}; {what} refused, nothing was checked "
            f"({key} = refuse; LAC_GUARD=off skips the guard)",
        )
        exc.hint = None
        raise exc
    return Result(
        body,
        unfinished=f"{exc.message}; {what} refused ({key} = refuse; LAC_GUARD=off skips the guard)",
    )


def _refuse(verdict: Verdict) -> NoReturn:
    refused, now = list(verdict.refused), verdict.now
    if verdict.hook == "pre-commit":
        paths = sorted({h.path for h in refused})
        width = max(len(shown(p)) for p in paths)
        raise PathLocked(
            refused,
            details=[
                f"git lac: commit refused: {len(paths)} staged path(s) held by another agent",
                *(f"  {shown(h.path):<{width}}  {describe(h, now)}" for h in refused),
                *build_on(refused),
                advice(paths),
                *verdict.warnings,  # take-over notices, told here too
            ],
        )
    # One line per (ref, commit, path, holder).
    lines = [
        f"  {shown(c.ref or '')} {(c.commit or '')[:12]} {shown(c.path)}  {describe(c, now)}"
        for c in refused
    ]
    header = (
        f"git lac: {verdict.what} refused: {len(refused)} change(s) to paths held by another agent"
    )
    if verdict.pusher is None:
        raise PathLocked(
            refused, details=[header, *lines, *build_on(refused), advice([c.path for c in refused])]
        )
    who = shown(verdict.pusher.name or "unknown")
    raise PathLocked(
        refused,
        details=[
            f"{header} (pusher: {who}, {verdict.pusher.source})",
            *lines,
            *build_on(refused),
            *verdict.elsewhere,
            RELEASE_ADVICE,
            *(
                ["If you hold them, say who you are: git push -o lac.agent=NAME"]
                if verdict.ask_pusher_name
                else []
            ),
        ],
    )
