"""`git lac ready` and `git lac status`: what I could claim, and what I hold."""

from __future__ import annotations

from ..edge import Result
from ..model import TaskState
from ..session import Session
from ..views.status import ready_text, status_text


def ready(session: Session, lane: str) -> Result:
    board = session.board()
    now = board.now()
    can, cannot = board.ready(lane)
    return Result(
        {
            "lane": lane,
            "ready": [t.to_json() for t in can],
            "blocked": [{"task": t.to_json(), "refused": r.to_json()} for t, r in cannot],
            "now": now,
        },
        ready_text(lane, can, cannot),
    )


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
    text = status_text(ident, board.instance, info, installed, claims, held, now, told)
    return Result(
        {
            "agent": ident.name,
            "instance": board.instance,
            "source": ident.source,
            "capabilities": list(ident.capabilities),
            "board": info,
            "claims": [
                {"task": t.to_json(), "heartbeat_age": age, "stale_in": left}
                for t, age, left in claims
            ],
            "locks": [lk.to_json() for lk in held],
            "hooks": installed,
            "notices": [n.to_json() for n in told],
            "now": now,
        },
        text,
    )
