"""`git lac team enable | add | remove | list`: team mode on a PostgreSQL board."""

from __future__ import annotations

from ..edge import Result
from ..session import Session


def enable(session: Session) -> Result:
    from ..team import enable as enable_team

    done = enable_team(session.board(touch=False, act=False).store)
    roles = done["roles"]
    return Result(
        done,
        f"team mode on for board {done['board']}\n"
        + "\n".join(f"  {kind:<7} {roles[kind]}" for kind in ("agent", "keeper", "admin", "reader"))
        + "\nadd agents with `git lac team add NAME`",
    )


def add(session: Session, name: str, caps: str, kind: str | None, no_password: bool) -> Result:
    from ..identity import parse_capabilities
    from ..team import add as add_member

    added = add_member(
        session.board(touch=False, act=False).store,
        name,
        caps=parse_capabilities(caps),
        password=not no_password,
        kind=kind or "agent",
    )
    lines = [
        f"{'added' if added['created'] else 'updated'} {added['role']}: "
        + ", ".join(added["groups"])
        + (f"; capabilities {', '.join(added['capabilities'])}" if added["capabilities"] else "")
    ]
    if added["password"]:
        lines.append(f"password (shown once, stored nowhere): {added['password']}")
    return Result(added, "\n".join(lines))


def remove(session: Session, name: str, keep_role: bool) -> Result:
    from ..team import remove as remove_member

    gone = remove_member(session.board(touch=False, act=False).store, name, keep_role=keep_role)
    tasks = ", ".join(f"#{t}" for t in gone["released"]) or "none"
    return Result(
        gone,
        f"removed {gone['role']} (claims released: {tasks}; locks freed: {len(gone['locks'])};"
        f" role {'dropped' if gone['dropped'] else 'kept'})",
    )


def members(session: Session) -> Result:
    from ..team import members as team_members

    found = team_members(session.board(touch=False, act=False).store)
    lines = [
        f"{m['role']:<20} {','.join(m['kinds']):<20} {', '.join(m['capabilities']) or '-'}"
        for m in found
    ]
    return Result({"members": found}, "\n".join(lines) or "no agents yet")
