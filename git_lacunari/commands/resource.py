"""`git lac resource add | remove | list`: the board's named resource pools
(board/resources.py)."""

from __future__ import annotations

from ..edge import Result
from ..session import Session
from ..views import shown
from ..views.tasks import pools_text


def add(session: Session, name: str, values: tuple[str, ...]) -> Result:
    change = session.board().resource_add(name, values)
    text = f"pool {change.name}: {len(change.changed)} added"
    if change.unchanged:
        text += f", {len(change.unchanged)} already there"
    return Result({"name": change.name, "added": change.changed, "already": change.unchanged}, text)


def remove(session: Session, name: str, values: tuple[str, ...]) -> Result:
    change = session.board().resource_remove(name, values)
    what = "removed" if values else "removed with the pool"
    return Result(
        {"name": change.name, "removed": change.changed, "pool_removed": not values},
        f"pool {shown(change.name)}: {len(change.changed)} {what}",
    )


def listing(session: Session, name: str | None) -> Result:
    from ..errors import InvalidInput

    pools = session.board().resource_pools(name)
    if name is not None and not pools:
        raise InvalidInput(f"no resource pool {name!r} on this board")
    return Result({"pools": [p.to_json() for p in pools]}, pools_text(pools))
