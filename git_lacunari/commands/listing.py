"""`git lac tasks`, `show` and `log`: reading the board."""

from __future__ import annotations

from ..edge import Result
from ..errors import InvalidInput
from ..model import STATES
from ..session import Session
from ..views.tasks import event_line, more_line, paged, show_text, task_line
from .task import task_id


def tasks(
    session: Session,
    *,
    states: tuple[str, ...],
    every: bool,
    lane: str | None,
    mine: bool,
    limit: int,
    as_json: bool,
) -> Result:
    from ..board import validate_lane, validate_limit, validate_state

    wanted = [s.strip() for given in states for s in given.split(",") if s.strip()]
    if states and not wanted:
        raise InvalidInput("--state needs a state: " + ", ".join(STATES))
    for state in wanted:
        validate_state(state)
    if lane is not None:
        validate_lane(lane)
    validate_limit(limit)
    board = session.board()
    now = board.now()
    page = board.task_page(
        states=wanted, every=every, lane=lane, mine=mine, limit=limit, now=now, details=as_json
    )
    return Result(
        {"tasks": [t.to_json() for t in page.items], "now": now, **paged(page, limit)},
        # Not built for --json: a --limit 0 listing is long.
        "" if as_json else "\n".join(task_line(t, now) for t in page.items) or "no tasks",
        warnings=more_line(page, "more task"),
    )


def show(session: Session, task: str) -> Result:
    board = session.board()
    now = board.now()
    found = board.show(task_id(task), now=now)
    needs = board.resource_needs(found.id)
    held = board.claim_resources(found.id) if found.state == "claimed" else []
    return Result(
        {
            "task": found.to_json(),
            "now": now,
            "resources": [v.to_json() for v in held],
            "resource_needs": [{"name": n, "count": c} for n, c in needs],
        },
        show_text(found, now, needs=needs, resources=held),
    )


def log(session: Session, task: str | None, limit: int, *, as_json: bool) -> Result:
    from ..board import validate_limit

    which = task_id(task) if task is not None else None
    validate_limit(limit)
    page = session.board().log_page(which, limit=limit)
    return Result(
        {"events": [e.to_json() for e in page.items], **paged(page, limit)},
        "" if as_json else "\n".join(event_line(e) for e in page.items) or "no events",
        warnings=more_line(page, "earlier event"),
    )
