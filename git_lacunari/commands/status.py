"""`git lac ready` and `git lac status`: what I could claim, and what I hold."""

from __future__ import annotations

from ..edge import Result, say
from ..model import Task, TaskState
from ..session import Session
from ..views import shown
from ..views.status import ready_json, ready_line, ready_text, status_text
from ..views.tasks import more_line, paged


def ready(session: Session, lane: str, *, limit: int, every: bool, as_json: bool) -> Result:
    from ..board import validate_lane, validate_limit

    validate_lane(lane)
    validate_limit(limit)
    if every:
        return _ready_stream(session, lane, as_json=as_json)
    board = session.board()
    now = board.now()
    page = board.ready_page(lane, limit=limit or None)
    can = [t for t, r in page.rows if r is None]
    cannot = [(t, r) for t, r in page.rows if r is not None]
    return Result(
        {
            "lane": lane,
            "ready": [t.to_json() for t in can],
            "blocked": [{"task": t.to_json(), "refused": r.to_json()} for t, r in cannot],
            "now": now,
            **paged(page, limit),
        },
        "" if as_json else ready_text(lane, can, cannot),
        warnings=more_line(page, "more open task", every="--all"),
    )


def _ready_stream(session: Session, lane: str, *, as_json: bool) -> Result:
    """`ready --all`: every open task of the lane, each written the moment
    its page is read (JSON: one object a line), never collected."""
    import json

    board = session.board()
    shown_any = False
    for task, refused in board.ready_stream(lane):
        if as_json:
            say(json.dumps(ready_json(task, refused), sort_keys=True, allow_nan=False), raw=True)
        else:
            say(ready_line(task, refused), err=False)
        shown_any = True
    if not shown_any and not as_json:
        say(f"no open task in lane {lane!r}", err=False)
    return Result(shown=True)


def returned_lines(claims: list[Task]) -> str:
    """The landing lines given back to us (the landing queue): what to fix."""
    from ..land_queue import told

    said = [f"\n{shown(told(t))}" for t in claims if t.is_returned]
    return ("\n" if said else "") + "".join(said)


def status(session: Session) -> Result:
    from ..hooks import HOOK_NAMES, hooks_dir, is_ours
    from ..liveness import tell

    board = session.board()
    told = tell(board, session.repo)
    now = board.now()
    default = board.default_stale_after()
    claims = []
    for t in board.tasks(state=TaskState.CLAIMED, mine=True, now=now):
        limit = t.stale_after or default
        beat = t.heartbeat_at if t.heartbeat_at is not None else now
        claims.append((t, now - beat, beat + limit - now))
    held = board.locks(mine=True)
    where = hooks_dir(session.repo)
    installed = {name: is_ours(where / name) for name in HOOK_NAMES}
    ident = board.identity
    info = {
        "url": str(getattr(board.store, "where", board.store.url)),  # no password
        "dialect": board.store.dialect,
        "schema_version": board.store.schema_version(),
        "stale_after": default,
    }
    elsewhere = {
        t.id: board.where_of(t.instance) for t, _, _ in claims if t.instance != board.instance
    }
    values = board.claims_resources([t.id for t, _, _ in claims]) if claims else {}
    text = status_text(
        ident, board.instance, info, installed, claims, held, now, told, elsewhere, values
    )
    text += returned_lines([t for t, _, _ in claims])
    return Result(
        {
            "agent": ident.name,
            "instance": board.instance,
            "source": ident.source,
            "capabilities": list(ident.capabilities),
            "board": info,
            "claims": [
                {
                    "task": t.to_json(),
                    "heartbeat_age": age,
                    "stale_in": left,
                    "resources": [v.to_json() for v in values.get(t.id, [])],
                }
                for t, age, left in claims
            ],
            "locks": [lk.to_json() for lk in held],
            "hooks": installed,
            "notices": [n.to_json() for n in told],
            "now": now,
        },
        text,
    )
