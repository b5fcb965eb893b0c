"""Tasks, locks, events and claims as people read them, and a listing's paging."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Protocol

from ..durations import format_duration
from ..model import Event, Lock, LockMode, ResourceValue, Task, TaskState
from .terminal import shown

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..board import Claim
    from ..board.resources import Pool


def ago(then: float | None, now: float) -> str:
    """How long ago ``then`` was, both on the board's clock (Board.now)."""
    if then is None:
        return "-"
    return format_duration(now - then) + " ago"


def task_line(task: Task, now: float) -> str:
    owner = shown(task.owner or "-")
    beat = f"  heartbeat {ago(task.heartbeat_at, now)}" if task.state == TaskState.CLAIMED else ""
    if task.stale:
        beat += "  STALE"
    return (
        f"#{task.id:<5} {task.shown_state:<9} p{task.priority:<3} {shown(task.lane):<10} "
        f"{owner:<16} {shown(task.title)}{beat}"
    )


def lock_line(lock: Lock, now: float) -> str:
    since = ago(lock.acquired_at, now)
    pattern, agent = shown(lock.pattern), shown(lock.agent)
    return f"{lock.mode:<5}  {pattern:<30} {agent:<16} {lock.where}  since {since}"


# A claim may hold thousands of values; a line of ``status`` names this many
# and counts the rest (``show`` and ``--json`` list them all).
RESOURCES_IN_A_LINE = 4


def resources_said(values: Sequence[ResourceValue]) -> str:
    """A claim's values, as one line's worth: ``port 8101, db app_1``
    (past :data:`RESOURCES_IN_A_LINE`, ``… 9,996 more``)."""
    said = ", ".join(f"{shown(v.name)} {shown(v.value)}" for v in values[:RESOURCES_IN_A_LINE])
    rest = len(values) - RESOURCES_IN_A_LINE
    return f"{said}, … {rest:,} more" if rest > 0 else said


def show_text(
    task: Task,
    now: float,
    *,
    needs: Sequence[tuple[str, int]] = (),
    resources: Sequence[ResourceValue] = (),
) -> str:
    lines = [
        f"task #{task.id}: {shown(task.title)}",
        f"  state     {task.shown_state}" + (f" by {shown(task.owner)}" if task.owner else ""),
        f"  lane      {shown(task.lane)}   priority {task.priority}   attempts {task.attempts}",
        f"  created   {ago(task.created_at, now)} by {shown(task.created_by)}",
    ]
    if task.state == TaskState.CLAIMED:
        stale = "  STALE: the keeper will give it back" if task.stale else ""
        claimed, beat = ago(task.claimed_at, now), ago(task.heartbeat_at, now)
        lines.append(f"  claimed   {claimed}, heartbeat {beat}{stale}")
        if task.max_age is not None and task.expires_at is not None:
            left = task.expires_at - now
            when = f"in {format_duration(left)}" if left > 0 else "now: the keeper gives it back"
            lines.append(f"  max age   {format_duration(task.max_age)}: expires {when}")
    if task.branch or task.tip:
        lines.append(f"  branch    {shown(task.branch or '-')} at {(task.tip or '-')[:12]}")
    if task.landing:
        lines.append(
            f"  landing   since {ago(task.landing_since, now)}: its write locks stay until its "
            "work is in the destination (`git lac sweep`)"
        )
    if task.is_returned:
        why = task.returned or {}
        lines.append(f"  returned  {ago(task.returned_at, now)}: the lander could not land it")
        if why.get("reason") == "check":
            lines.append(f"            {shown(str(why.get('check')))} exited {why.get('exit')}")
            lines += [f"            | {shown(str(line))}" for line in why.get("output") or []]
        else:
            conflicts = ", ".join(str(p) for p in why.get("conflicts") or [])
            dest = shown(str(why.get("destination")))
            lines.append(f"            conflicts with {dest} in {shown(conflicts)}")
        lines.append(f"            fix the line, then `git lac land {task.id}` again")
    if task.needs:
        lines.append(f"  needs     {shown(', '.join(task.needs))}")
    if needs:
        wanted = ", ".join(f"{shown(name)}:{count}" for name, count in needs)
        lines.append(f"  resource  needs {wanted}")
    for value in resources:
        lines.append(f"  resource  {shown(value.name)} {shown(value.value)}")
    for dep in task.depends_on:
        lines.append(f"  after     #{dep['id']} ({dep['state']}) {shown(dep['title'])}")
        if dep["state"] == TaskState.CANCELLED:  # cancelled is not done: say what unblocks it
            lines.append(
                f"            blocks this task: `task edit {task.id} --not-after {dep['id']}` "
                f"or `task reopen {dep['id']}`"
            )
    for spec in task.paths:
        mode = "writes" if spec.mode == LockMode.WRITE else "reads"
        lines.append(f"  {mode:<9} {shown(spec.pattern)}")
    for lock in task.locks:
        lines.append(f"  locked    {lock_line(lock, now)}")
    if task.body:
        body = shown(task.body, keep="\n\t")
        lines += ["", *("  " + line for line in body.split("\n"))]
    return "\n".join(lines)


def event_line(event: Event) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(event.at))
    task = f"#{event.task_id}" if event.task_id is not None else "-"
    detail = " ".join(
        f"{shown(k)}={json.dumps(v)}"
        for k, v in sorted(event.detail.items())
        if v not in (None, [], "")
    )
    kind, agent = shown(event.kind), shown(event.agent)
    return f"{when}  {task:<6} {kind:<15} {agent:<16} {detail}".rstrip()


def claim_text(claim: Claim) -> str:
    verb = "already yours" if claim.again else "claimed"
    if claim.taken_from is not None:
        verb = f"taken over here from {shown(claim.taken_from)}"
    text = f"{verb}: task #{claim.task.id} {shown(claim.task.title)}"
    if claim.task.max_age is not None:
        cap = format_duration(claim.task.max_age)
        text += f"\n  max age {cap}: the keeper expires it then, heartbeats or not"
    for lock in claim.locks:
        text += f"\n  {lock.mode} lock {shown(lock.pattern)}"
    for value in claim.resources:
        text += f"\n  resource {shown(value.name)} {shown(value.value)}"
    return text


def pools_text(pools: Sequence[Pool]) -> str:
    """`git lac resource list`: each pool, then each value and its holder."""
    if not pools:
        return "no resource pools (`git lac resource add NAME VALUE...` makes one)"
    lines: list[str] = []
    for pool in pools:
        lines.append(f"{shown(pool.name)}: {len(pool.values)} values, {pool.free} free")
        for v in pool.values:
            holder = "free" if v.task is None else f"#{v.task} {shown(v.holder or '-')}"
            lines.append(f"  {shown(v.value):<20} {holder}")
    return "\n".join(lines)


class Paged(Protocol):
    more: int
    more_exact: bool


def more_line(page: Paged, what: str, every: str = "--limit 0") -> list[str]:
    """The last line of a cut listing: how many more, and how to see them
    (``what`` is singular: "more task"; ``every``: the option that shows all)."""
    if not page.more:
        return []
    count = f"{page.more:,}" if page.more_exact else f"more than {page.more:,}"
    plural = "" if page.more == 1 and page.more_exact else "s"
    return [f"… {count} {what}{plural}; {every} shows all"]


def paged(page: Paged, limit: int) -> dict[str, Any]:
    """What a listing's --json says of its paging."""
    return {"limit": limit or None, "more": page.more, "more_exact": page.more_exact}
