"""`git lac ready` and `git lac status` for people."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..durations import format_duration
from ..errors import Refused
from ..identity import Identity
from ..model import Lock, ResourceValue, Task
from .tasks import resources_said
from .terminal import paint, shown, table, when

if TYPE_CHECKING:
    from ..board.notices import Notice


def ready_cells(task: Task, refused: Refused | None) -> list[str]:
    if refused is None:
        return [f"#{task.id}", f"p{task.priority}", "ready", shown(task.title)]
    return [
        f"#{task.id}",
        f"p{task.priority}",
        "blocked",
        shown(f"{task.title}: {refused.message}"),
    ]


def ready_text(lane: str, can: Sequence[Task], cannot: Sequence[tuple[Task, Refused]]) -> str:
    """The ready tasks first, then the blocked ones, as one table."""
    rows = [ready_cells(t, None) for t in can] + [ready_cells(t, r) for t, r in cannot]
    return table(rows) if rows else f"no open task in lane {shown(lane)!r}"


def ready_line(task: Task, refused: Refused | None) -> str:
    """One row of `ready --all`, written as it is read: fixed columns, since
    a stream cannot pad to the widest cell it has not seen yet."""
    num, prio, state, title = ready_cells(task, refused)
    return f"{num:<7} {prio:<4} {state:<8} {title}"


def ready_json(task: Task, refused: Refused | None) -> dict[str, Any]:
    """One task of `ready --json`'s stream (``--all``): ready, or why not."""
    body: dict[str, Any] = {"task": task.to_json(), "ready": refused is None}
    if refused is not None:
        body["refused"] = refused.to_json()
    return body


def status_text(
    ident: Identity,
    instance: str,
    info: Mapping[str, Any],
    installed: Mapping[str, bool],
    claims: Sequence[tuple[Task, float, float]],
    held: Sequence[Lock],
    now: float,
    notices: Sequence[Notice] = (),
    elsewhere: Mapping[int, str] | None = None,
    resources: Mapping[int, Sequence[ResourceValue]] | None = None,
) -> str:
    """``claims``: (task, heartbeat age, seconds until stale) for each of mine;
    ``notices``: what was taken from me by force, told here once;
    ``elsewhere``: task id -> host:path, for my claims held in another working
    tree (moved there by --take-over, or claimed there under my name);
    ``resources``: task id -> the resource values that claim holds."""
    default = info["stale_after"]
    lines = [
        f"agent     {ident.name} ({ident.source}), instance {instance}",
        f"board     {info['url']} (claims stale after {format_duration(default)})",
        "hooks     "
        + ", ".join(f"{n} {'installed' if ok else 'missing'}" for n, ok in installed.items()),
    ]
    for notice in notices:
        lines.append(f"{paint('TAKEN', 'red')}     {notice.said()}")
    if claims:
        lines += ["", "claims"]
        rows = []
        for t, _age, left in claims:
            stale = paint("STALE", "red") if left < 0 else f"stale in {format_duration(int(left))}"
            title = shown(t.title)
            if elsewhere and t.id in elsewhere:
                title += f" (held at {shown(elsewhere[t.id])}, not here)"
            if resources and resources.get(t.id):
                title += f" [{resources_said(resources[t.id])}]"
            rows.append([f"#{t.id}", title, f"heartbeat {when(t.heartbeat_at, now)}", stale])
        lines.append(table(rows))
    else:
        lines.append("claims    none")
    if held:
        lines += ["", "locks"]
        lines.append(
            table(
                [
                    [lk.mode, shown(lk.pattern), lk.where, f"since {when(lk.acquired_at, now)}"]
                    for lk in held
                ]
            )
        )
    else:
        lines.append("locks     none")
    return "\n".join(lines)
