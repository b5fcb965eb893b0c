"""`git lac ready` and `git lac status` for people."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..durations import format_duration
from ..errors import Refused
from ..identity import Identity
from ..model import Lock, Task
from .terminal import paint, shown, table, when

if TYPE_CHECKING:
    from ..board.notices import Notice


def ready_text(lane: str, can: Sequence[Task], cannot: Sequence[tuple[Task, Refused]]) -> str:
    rows = [[f"#{t.id}", f"p{t.priority}", "ready", shown(t.title)] for t in can]
    rows += [
        [f"#{t.id}", f"p{t.priority}", "blocked", shown(f"{t.title}: {r.message}")]
        for t, r in cannot
    ]
    return table(rows) if rows else f"no open task in lane {shown(lane)!r}"


def status_text(
    ident: Identity,
    instance: str,
    info: Mapping[str, Any],
    installed: Mapping[str, bool],
    claims: Sequence[tuple[Task, float, float]],
    held: Sequence[Lock],
    now: float,
    notices: Sequence[Notice] = (),
) -> str:
    """``claims``: (task, heartbeat age, seconds until stale) for each of mine;
    ``notices``: what was taken from me by force, told here once."""
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
            rows.append(
                [f"#{t.id}", shown(t.title), f"heartbeat {when(t.heartbeat_at, now)}", stale]
            )
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
