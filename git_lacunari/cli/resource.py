"""`git lac resource add | remove | list`: the board's named resource pools."""

from __future__ import annotations

import click

from ..commands import resource as verbs
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.group("resource", context_settings=CONTEXT)
def resource() -> None:
    """Named resource pools (ports, databases) whose values claims are granted."""


@resource.command("add", context_settings=CONTEXT)
@click.argument("name")
@click.argument("values", nargs=-1, required=True, metavar="VALUE...")
@common
def resource_add(session: Session, as_json: bool, name: str, values: tuple[str, ...]) -> Result:
    """Add VALUE... to pool NAME (made by its first value).

    A-B is an integer range (port 8100-8104); any other VALUE is a string
    (db app_1 app_2). NAME is the variable LAC_<NAME> a claim's values are
    given as: a-z 0-9 _, a letter first. A value already in the pool stays
    as it is (held or free): adding again is harmless. At most 10,000
    values a pool. Team mode: an admin's.
    """
    return verbs.add(session, name, values)


@resource.command("remove", context_settings=CONTEXT)
@click.argument("name")
@click.argument("values", nargs=-1, metavar="[VALUE...]")
@common
def resource_remove(session: Session, as_json: bool, name: str, values: tuple[str, ...]) -> Result:
    """Remove VALUE... (A-B ranges too) from pool NAME; no VALUE: the whole pool.

    A value a claim holds is never removed: the whole call is refused
    (exit 1, resource_held) until that claim ends. Team mode: an admin's.
    """
    return verbs.remove(session, name, values)


@resource.command("list", context_settings=CONTEXT)
@click.argument("name", required=False)
@common
def resource_list(session: Session, as_json: bool, name: str | None) -> Result:
    """Every pool (or pool NAME): its values, and the claim holding each."""
    return verbs.listing(session, name)
