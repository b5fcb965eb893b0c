"""`git lac whoami`: the agent this worktree acts as, and where that came from."""

from __future__ import annotations

from ..edge import Result
from ..session import Session


def run(session: Session) -> Result:
    from ..store import is_postgres_url

    url = session.repo.get("lac.url")
    if url and is_postgres_url(url):
        ident = session.board(touch=False).identity
    else:
        ident = session.identity
    caps = ", ".join(ident.capabilities) or "none"
    return Result(
        {
            "agent": ident.name,
            "source": ident.source,
            "capabilities": list(ident.capabilities),
            "capabilities_source": ident.capabilities_source,
            "instance": ident.instance,
            "where": ident.instance_where,
            "instance_source": ident.instance_source,
        },
        f"{ident.name}\n  from {ident.source}\n"
        f"  capabilities: {caps} ({ident.capabilities_source})\n"
        f"  instance: {ident.instance} at {ident.instance_where} ({ident.instance_source})",
    )
