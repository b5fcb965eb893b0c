"""`git lac claim`, `release`, `done` and `heartbeat`: a claim's life."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..edge import Result
from ..errors import Refused
from ..session import Session
from ..views import shown
from ..views.tasks import claim_text
from .task import task_id

if TYPE_CHECKING:
    from ..board import Board
    from ..board.claims import Claim
    from ..board.notices import Notice
    from ..repo import Repo
    from ..rules import LandingLine, Meeting


@contextlib.contextmanager
def told_in_refusals(board: Board, session: Session) -> Iterator[None]:
    """A refusal that says a take-over notice records it as told."""
    from ..liveness import told_in_refusal

    try:
        yield
    except Refused as exc:
        told_in_refusal(board, session.repo, exc)
        raise


def claim(
    session: Session,
    task: str | None,
    *,
    next_: bool,
    lane: str,
    writes: tuple[str, ...],
    reads: tuple[str, ...],
    stale: float | None,
    wait: float | None,
    take_over: bool,
    board: Board | None = None,
    resources: tuple[str, ...] = (),
    max_age: float | None = None,
) -> Claim:
    """``stale``, ``wait`` and ``max_age``: durations already parsed
    (seconds, or None). ``board``: the board to claim on (a desk's, at the
    desk's instance); default the session's. ``resources``: ``NAME[:N]``
    more the task needs (a claim by id)."""
    board = board or session.board()
    if next_:
        avoid = _avoid_policy(session)
        busy: list[str] = []
        own: list[LandingLine] = []
        if avoid != "off":
            from ..landing import steering_facts

            busy, own = steering_facts(board, session.repo)
        got = board.claim_next(
            lane,
            writes=writes,
            reads=reads,
            stale_after=stale,
            wait=wait,
            busy=busy,
            own=own,
            strict=avoid == "strict",
            max_age=max_age,
        )
    else:
        got = board.claim(
            task_id(task or ""),
            writes=writes,
            reads=reads,
            stale_after=stale,
            take_over=take_over,
            resources=resources,
            max_age=max_age,
        )
    return got


def claimed(
    session: Session, got: Claim, *, board: Board | None = None, repo: Repo | None = None
) -> Result:
    """What a claim says: the task, its locks, what it passed over and the
    landing lines to start from. ``board`` and ``repo``: where the claim is
    held, when not the session's (a desk)."""
    for tid, branch, tip in _track_moves(session, board, repo):
        if tid == got.task.id:  # a None branch keeps the one recorded
            got.task.branch, got.task.tip = branch or got.task.branch, tip
    return Result(
        {
            "task": got.task.to_json(),
            "again": got.again,
            "locks": [lk.to_json() for lk in got.locks],
            "passed_over": [
                {"task": m.task, "meets": m.meets, "landing": m.mine} for m in got.passed_over
            ],
            # this claim's own values: never another's, nor the pool's
            "resources": [v.to_json() for v in got.resources],
            "start_from": [
                {"task": line.task, "branch": line.branch, "tip": line.tip, "holder": line.holder}
                for line in got.start_from
            ],
        },
        claim_text(got)
        + "".join(
            f"\n  passed over #{m.task}: its paths meet {', '.join(shown(p) for p in m.meets)}, "
            f"which {_whose(m)}"
            for m in got.passed_over
        )
        + "".join(
            f"\n  start from {line.whose} #{line.task}"
            + (f", branch {shown(line.branch)}" if line.branch else "")
            + f" at {(line.tip or '?')[:12]}: its work is not in the destination yet"
            for line in got.start_from
        ),
    )


def _whose(met: Meeting) -> str:
    """Whose live work changes the paths a task passed over meets."""
    mine = ", ".join(f"#{t}" for t in met.mine)
    if met.others and mine:
        return f"other live claims and landing {mine} change"
    return f"landing {mine} changed (not landed yet)" if mine else "other live claims change"


def _avoid_policy(session: Session) -> str:
    """``lac.next.avoid``: prefer (the default) tasks whose declared paths meet
    no path other live claims change; strict: never take one that does; off."""
    from ..errors import InvalidInput

    value = (session.repo.get("lac.next.avoid") or "prefer").strip().lower()
    if value not in ("prefer", "strict", "off"):
        raise InvalidInput(f"lac.next.avoid {value[:40]!r}: prefer, strict or off")
    return value


def release(session: Session, task: str, force: bool, reason: str | None) -> Result:
    released = session.board().release(task_id(task), force=force, reason=reason)
    return Result({"task": released.to_json()}, f"released: task #{released.id} is open again")


def done(session: Session, task: str, now: bool = False) -> Result:
    """``now``: done at once, as before landing. Else done when the claim's
    work is in the destination already, or landing until it is."""
    from ..landing import finish
    from ..liveness import tell

    tid = task_id(task)
    board = session.board()
    with told_in_refusals(board, session):
        if now:
            finished = board.done(tid)
        else:
            result = finish(board, session.repo, tid)
    if now:
        told = tell(board, session.repo)
        return Result(
            {
                "task": finished.to_json(),
                "notices": [n.to_json() for n in told],
                "landing": False,
                "destination": None,
                "how": None,
            },
            f"done: task #{finished.id} {shown(finished.title)}",
            warnings=[f"git lac: {n.said()}" for n in told],
        )
    told = tell(board, session.repo)
    body = {
        "task": result.task.to_json(),
        "notices": [n.to_json() for n in told],
        "landing": result.landing,
        "destination": result.destination,
        "how": result.how,
    }
    title = shown(result.task.title)
    warnings = [f"git lac: {n.said()}" for n in told]
    if result.landing:
        kept = ", ".join(shown(lk.pattern) for lk in result.task.locks) or "no locks"
        tip = (result.task.tip or "")[:12]
        return Result(
            body,
            f"landing: task #{tid} {title}\n"
            f"  keeps {kept} until {tip} is in {shown(result.destination or '')}\n"
            "  (push it; `git lac sweep` checks, `git lac release` gives it up, "
            "`done --now` ends it)",
            warnings=warnings,
        )
    # Already in the destination (or none to wait for): done, said as always;
    # --json says how it landed.
    return Result(body, f"done: task #{tid} {title}", warnings=warnings)


def heartbeat(session: Session, tasks: tuple[str, ...]) -> Result:
    """Exit 1 (``unfinished``) when it tells a take-over notice: a claim or
    lock of ours was removed by force since we last looked (README, "Taken
    by force")."""
    from ..liveness import tell

    board = session.board()
    with told_in_refusals(board, session):
        refreshed = board.heartbeat([task_id(t) for t in tasks])
    _track(session)
    told = tell(board, session.repo)
    return Result(
        {"refreshed": refreshed, "notices": [n.to_json() for n in told]},
        "heartbeat: " + (" ".join(f"#{t}" for t in refreshed) or "no claims"),
        warnings=[f"git lac: {n.said()}" for n in told] + _returned(board, refreshed),
        unfinished=_taken(told),
    )


def _taken(told: list[Notice]) -> str | None:
    """Why ``heartbeat`` exits 1: claims or locks of ours taken by force, or
    claims the keeper expired, since we last looked."""
    if not told:
        return None
    forced = all(n.kind != "expired" for n in told)
    if forced:
        if len(told) > 1:
            return f"{len(told)} of your claims or locks taken by force (above)"
        return "a claim or lock of yours was taken by force (above)"
    if len(told) > 1:
        return f"{len(told)} of your claims or locks taken or expired (above)"
    return "a claim of yours expired (above)"


def _returned(board: Board, refreshed: list[int]) -> list[str]:
    """Our refreshed claims whose landing line the lander gave back: said on
    every heartbeat until the holder lands it again (the landing queue)."""
    if not refreshed:
        return []
    from ..errors import LacError
    from ..land_queue import told

    try:
        back = board.returned_claims(mine=True)
    except LacError:
        return []
    return [f"git lac: {shown(told(t))}" for t in back if t.id in refreshed]


def _track_moves(
    session: Session, board: Board | None = None, repo: Repo | None = None
) -> list[tuple[int, str | None, str]]:
    """:func:`_track`, answering with the claims that moved (landing.track_moves)."""
    from ..errors import LacError
    from ..landing import track_moves

    with contextlib.suppress(LacError):
        return track_moves(board or session.board(), repo or session.repo)
    return []


def _track(session: Session) -> bool:
    """Record where our claims here stand (their branches' tips): best effort,
    a repository with no commit yet or a busy board just misses one. Whether
    any claim moved."""
    from ..errors import LacError
    from ..landing import track

    with contextlib.suppress(LacError):
        return bool(track(session.board(), session.repo))
    return False
