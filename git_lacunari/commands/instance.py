"""`git lac instance list | adopt ID`: the working trees an agent acts from.

A claim is held by an agent *at an instance* (one working tree of one
clone). `git worktree move` keeps a tree's instance; a copied clone, a
re-cloned one or another machine is a new one, and what the old one held
stays there until it is adopted here or expires."""

from __future__ import annotations

from ..edge import Result
from ..session import Session
from ..views.tasks import claim_text
from ..views.terminal import shown, table, when


def list_instances(session: Session) -> Result:
    board = session.board()
    found = board.instances()
    now = board.now()
    rows = [
        [
            "*" if i.here else " ",
            i.id,
            shown(i.where),
            f"seen {when(i.last_seen, now)}",
            f"{i.claims} claim(s), {i.locks} lock(s)",
        ]
        for i in found
    ]
    human = table(rows) if rows else f"no instance of {board.agent} on this board yet"
    return Result(
        {
            "agent": board.agent,
            "instances": [
                {
                    "id": i.id,
                    "where": i.where,
                    "last_seen": i.last_seen,
                    "claims": i.claims,
                    "locks": i.locks,
                    "here": i.here,
                }
                for i in found
            ],
        },
        human,
    )


def adopt(session: Session, instance: str) -> Result:
    board = session.board()
    moved = board.adopt(instance.strip())
    human = "\n".join(claim_text(c) for c in moved) or (
        f"nothing to adopt: {board.agent} holds no claim at instance {shown(instance)}"
    )
    return Result(
        {
            "adopted": [c.task.id for c in moved],
            "tasks": [c.task.to_json() for c in moved],
            "from": instance.strip(),
            "instance": board.instance,
        },
        human,
    )
