"""`git lac team enable | add | remove | list`."""

from __future__ import annotations

import click

from ..commands import team as verbs
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.group("team", context_settings=CONTEXT)
def team() -> None:
    """Team mode on a PostgreSQL board: each agent a login role.

    Run by a database role that may create roles (the administrator). In
    team mode the agent is the session's database role (`--as`, LAC_AGENT
    and lac.agent may only repeat it), row-level security is on for every
    board table, agents write only through the board's functions, a keeper
    may expire anyone's stale claim and an admin may force-release.
    """


@team.command("enable", context_settings=CONTEXT)
@common
def team_enable(session: Session, as_json: bool) -> Result:
    """Make this board a team board (idempotent): group roles, row-level
    security, privileges, the write functions as the board's owner role."""
    return verbs.enable(session)


@team.command("add", context_settings=CONTEXT)
@click.argument("name")
@click.option("--caps", "caps", metavar="CAP[,CAP…]", default="", help="Its capabilities.")
@click.option("--keeper", "kind", flag_value="keeper", help="May expire anyone's stale claim.")
@click.option("--admin", "kind", flag_value="admin", help="A keeper that may also force-release.")
@click.option("--reader", "kind", flag_value="reader", help="May only read the board.")
@click.option(
    "--no-password", is_flag=True, help="Make no password (peer or certificate authentication)."
)
@common
def team_add(
    session: Session,
    as_json: bool,
    name: str,
    caps: str,
    kind: str | None,
    no_password: bool,
) -> Result:
    """Add agent NAME: a login role in the board's groups, its capabilities
    recorded on the board (again on an existing agent: its record and groups
    are updated). A generated password is printed once and stored nowhere;
    the agent gives it to libpq (PGPASSWORD, ~/.pgpass, a service file)."""
    return verbs.add(session, name, caps, kind, no_password)


@team.command("remove", context_settings=CONTEXT)
@click.argument("name")
@click.option("--keep-role", is_flag=True, help="Revoke the board's groups but keep the role.")
@common
def team_remove(session: Session, as_json: bool, name: str, keep_role: bool) -> Result:
    """Take agent NAME off the team: its claims go back to the board and its
    locks are freed (recorded as team_removed), the board's groups are
    revoked, and the role is dropped unless it belongs to anything else."""
    return verbs.remove(session, name, keep_role)


@team.command("list", context_settings=CONTEXT)
@common
def team_list(session: Session, as_json: bool) -> Result:
    """The board's team: each role, what it is (agent, keeper, admin,
    reader), its capabilities."""
    return verbs.members(session)
