"""`git lac sweep` (landing claims whose work has landed) and `git lac forecast`."""

from __future__ import annotations

from ..edge import Result
from ..errors import InvalidInput
from ..session import Session
from ..views import shown


def sweep(session: Session, *, fetch: bool) -> Result:
    """Settle every landing claim whose work is in the destination here."""
    from ..landing import destination, fetch_destination, settle

    repo = session.repo
    dest = destination(repo)
    if dest is None:
        raise InvalidInput(
            "no destination to land in: set lac.target (e.g. `git config lac.target origin/main`)"
        )
    if fetch:
        fetch_destination(repo, dest)
    board = session.board()
    settled = settle(board, repo.toplevel, dest)
    waiting = board.landing_claims()
    lines = [
        f"landed: task #{s.task.id} {shown(s.task.title)} ({s.how} into {shown(dest)}); "
        "its locks are released"
        for s in settled
    ]
    lines += [
        f"landing: task #{t.id} {shown(t.title)} by {shown(t.owner or '')}: "
        f"{(t.tip or '')[:12]} is not in {shown(dest)} yet"
        for t in waiting
    ]
    return Result(
        {
            "destination": dest,
            "landed": [{"task": s.task.id, "how": s.how, "tip": s.task.tip} for s in settled],
            "landing": [{"task": t.id, "owner": t.owner, "tip": t.tip} for t in waiting],
        },
        "\n".join(lines) or "sweep: no landing claims",
    )


def forecast(session: Session) -> Result:
    """The live claims' tips against each other and the destination."""
    from ..forecast import DESTINATION, Line
    from ..forecast import forecast as compute
    from ..landing import commit_id, destination

    repo = session.repo
    dest = destination(repo)
    if dest is None:
        raise InvalidInput(
            "no destination to compare with: set lac.target (e.g. "
            "`git config lac.target origin/main`)"
        )
    claims = session.board().live_claims()
    here = [t for t in claims if t.tip and commit_id(repo.toplevel, t.tip) is not None]
    missing = [t for t in claims if t not in here]
    label = {t.id: f"#{t.id}" for t in here}
    lines = [Line(label[t.id], t.tip or "", frozenset(p.pattern for p in t.paths)) for t in here]
    result = compute(repo.toplevel, dest, lines, ignorecase=repo.ignorecase)
    by_label = {f"#{t.id}": t for t in here}

    def task_of(name: str) -> int | None:
        return None if name == DESTINATION else by_label[name].id

    def who(name: str) -> str:
        if name == DESTINATION:
            return shown(dest or "")
        task = by_label[name]
        return f"#{task.id} {shown(task.owner or '')}"

    meetings = sorted(result.meetings, key=lambda m: (not m.conflicting, m.first, m.second))
    text = [
        f"forecast: {len(here)} live line(s) against {shown(dest)} "
        f"({result.destination[:12]}): {len(meetings)} meeting(s), "
        f"{sum(m.conflicting for m in meetings)} would conflict"
    ]
    for m in meetings:
        text.append(f"{who(m.first)} and {who(m.second)}")
        if m.both:
            text.append(f"  both change  {', '.join(shown(p) for p in m.both)}")
        if m.undeclared:
            text.append(f"  undeclared   {', '.join(shown(p) for p in m.undeclared)}")
        verdict = (
            "would conflict: " + ", ".join(shown(p) for p in m.conflicts)
            if m.conflicting
            else "merges cleanly"
        )
        text.append(f"  {verdict}")
    for t in missing:
        text.append(f"#{t.id} {shown(t.owner or '')}: tip {(t.tip or '')[:12]} is not here (fetch)")
    return Result(
        {
            "destination": dest,
            "commit": result.destination,
            "lines": [
                {
                    "task": t.id,
                    "owner": t.owner,
                    "branch": t.branch,
                    "tip": t.tip,
                    "landing": t.landing,
                    "declared": sorted(p.pattern for p in t.paths),
                    "changed": list(result.changed[label[t.id]]),
                }
                for t in here
            ],
            "meetings": [
                {
                    "first": task_of(m.first),
                    "second": task_of(m.second),
                    "both": list(m.both),
                    "undeclared": list(m.undeclared),
                    "conflicts": list(m.conflicts),
                    "conflicting": m.conflicting,
                }
                for m in meetings
            ],
            "missing": [{"task": t.id, "owner": t.owner, "tip": t.tip} for t in missing],
        },
        "\n".join(text),
    )
