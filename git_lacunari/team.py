"""Team mode (PostgreSQL): each agent a login role, the agent *is* the session's role.

``git lac team enable`` (run by a role that may create roles) makes a board a
team board: the group roles of :func:`role_names` (NOLOGIN), row-level
security enabled and forced on every table of the board, every direct
privilege of the agents revoked but SELECT, and the write functions of
migration 0005 made SECURITY DEFINER, owned by the board's NOLOGIN owner role
(not a superuser: a superuser would bypass row-level security) with their
search_path pinned to the board, then ``pg_temp``. From then on the database
takes identity from the session (``lac_actor``) and checks the keeper's and
the admin's rights itself; this module only administers roles and turns the
mode on. The statements are in ``sql/postgres/queries/team.sql``.

Decisions (README, "Team mode"):

- capabilities are the board's record, set with ``team add NAME --caps``
  (or again to change them); ``LAC_CAPS`` and ``lac.capabilities`` are
  ignored on a team board;
- ``team remove NAME`` gives the agent's claims back to the board and frees
  its locks (recorded as ``team_removed``), revokes the board's groups, and
  drops the role unless it belongs to something else (another board's team)
  or ``--keep-role`` is given;
- a keeper may expire anyone's stale claim; an admin (also a keeper) may
  force-release and force-unlock; both are ordinary agents otherwise;
- a reader may only read (the live board page).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import secrets
from typing import TYPE_CHECKING, Any

from .errors import CannotWorkHere, InvalidInput
from .identity import Identity
from .store import Row, Store
from .store.query_names import QueryName

if TYPE_CHECKING:
    from .store.postgres import PostgresStore

KINDS = ("owner", "agent", "keeper", "admin", "reader")
MAX_ROLE_BYTES = 63
ROLE_OK = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,62}$")
# Where a name given by the user (not a default) came from: in team mode it
# must be the session's role, or the command is refused.
EXPLICIT_SOURCES = ("--as", "environment LAC_AGENT", "git config lac.agent")


def role_names(board: str) -> dict[str, str]:
    """The board's group roles: ``lac_<board>_<kind>`` for agent, keeper,
    admin, reader (and owner, which owns the write functions); when that
    exceeds PostgreSQL's 63 bytes, ``lac_<12 hex of sha256(board)>_<kind>``."""
    names = {kind: f"lac_{board}_{kind}" for kind in KINDS}
    if max(len(n.encode()) for n in names.values()) > MAX_ROLE_BYTES:
        short = hashlib.sha256(board.encode()).hexdigest()[:12]
        names = {kind: f"lac_{short}_{kind}" for kind in KINDS}
    return names


def _pg(store: Store) -> PostgresStore:
    if store.dialect != "postgres":
        raise InvalidInput(
            "team mode needs a PostgreSQL board: git lac init --url postgresql://HOST/DB"
        )
    from .store.postgres import PostgresStore  # loaded already: the store is one

    assert isinstance(store, PostgresStore)
    return store


def _all(store: Store, query: QueryName, /, **params: Any) -> list[Row]:
    return _pg(store).team_all(query, **params)


def _one(store: Store, query: QueryName, /, **params: Any) -> Row | None:
    return _pg(store).team_one(query, **params)


def _ddl(store: Store, query: QueryName, /, **params: Any) -> None:
    _pg(store).team_ddl(query, **params)


# --- who acts ------------------------------------------------------------------


def acting(store: Store, identity: Identity) -> Identity:
    """The identity a command acts as on this board. Plain boards: as
    configured. Team boards: the session's role, with the capabilities the
    board records; a name given explicitly (``--as``, ``LAC_AGENT``,
    ``lac.agent``) that is not that role is refused before anything is written."""
    if store.dialect != "postgres":
        return identity
    row = _one(store, "team_self")
    if row is None or not row["team"]:
        return identity
    role = str(row["role"])
    if identity.name != role and identity.source in EXPLICIT_SOURCES:
        raise InvalidInput(
            f"team mode: this board knows you as the database role {role!r}; "
            f"{identity.source} names {identity.name!r} (connect as that role instead)"
        )
    caps = tuple(sorted(row["caps"] or ()))
    return dataclasses.replace(
        identity,
        name=role,
        source="the database role (team mode)",
        capabilities=caps,
        capabilities_source="the board's record (team mode: git lac team add --caps)",
    )


def is_team(store: Store) -> bool:
    row = _one(store, "team_self") if store.dialect == "postgres" else None
    return bool(row and row["team"])


# --- administration --------------------------------------------------------------


def _rights(store: Store) -> Row:
    row = _one(store, "team_admin_rights")
    assert row is not None
    if not row["createrole"]:
        raise CannotWorkHere(
            f"team mode is administered by a role that may create roles; {row['who']} "
            "may not (connect as the database administrator)"
        )
    if row["board"] == "public":
        raise InvalidInput(
            "team mode needs a board of its own, not the public schema: "
            "git lac init --url URL --board NAME"
        )
    return row


def _names(store: Store) -> dict[str, str]:
    row = _one(store, "team_admin_rights")
    assert row is not None
    return role_names(str(row["board"]))


def enable(store: Store) -> dict[str, Any]:
    """Make this board a team board (idempotent: run again after a migration,
    as ``git lac init`` does, it covers what the migration added)."""
    rights = _rights(store)
    names = role_names(str(rights["board"]))
    made = []
    with store.write():
        for kind in KINDS:
            if _one(store, "team_role", role=names[kind], owner=None) is None:
                _ddl(store, "team_create_group_ddl", role=names[kind])
                made.append(names[kind])
        _ddl(store, "team_grant_ddl", group=names["keeper"], role=names["admin"])
        if not rights["superuser"]:
            # Its own objects are FORCEd under row-level security too: the
            # administrator writes (migrations) through the owner's policy.
            _ddl(store, "team_grant_ddl", group=names["owner"], role=str(rights["who"]))
        _ddl(store, "team_enable_ddl", **names)
        for kind in KINDS:
            _one(store, "team_set", name=f"team_role:{kind}", value=names[kind])
        _one(store, "team_set", name="team_mode", value="on")
    return {"board": rights["board"], "roles": names, "created": made}


def refresh(store: Store) -> bool:
    """After a migration (``git lac init``): a team board's new tables and
    functions get team mode's rules, when the role migrating may grant them.
    True if it ran."""
    if not is_team(store):
        return False
    row = _one(store, "team_admin_rights")
    if row is None or not row["createrole"]:
        return False
    enable(store)
    return True


def _require_team(store: Store) -> dict[str, str]:
    _rights(store)
    if not is_team(store):
        raise CannotWorkHere("this board is not in team mode: run `git lac team enable` first")
    return _names(store)


def validate_role(name: str, names: dict[str, str]) -> str:
    if not ROLE_OK.match(name) or len(name.encode()) > MAX_ROLE_BYTES:
        raise InvalidInput(
            f"agent role {name[:80]!r}: 1-63 of A-Z a-z 0-9 _ . @ -, not starting with . @ -"
        )
    if name.lower().startswith("pg_") or name in names.values() or name == "public":
        raise InvalidInput(f"agent role {name!r} is reserved")
    return name


def add(
    store: Store,
    name: str,
    *,
    caps: tuple[str, ...] = (),
    password: bool = True,
    kind: str = "agent",
) -> dict[str, Any]:
    """A login role for an agent in the board's groups (``kind``: agent,
    keeper, admin or reader), its capabilities recorded on the board. A
    generated password is returned once (never stored); ``password=False``
    for peer or certificate authentication. An existing role (another
    board's agent, a peer-auth login) is added as it is: no new password."""
    names = _require_team(store)
    validate_role(name, names)
    existing = _one(store, "team_role", role=name, owner=names["owner"])
    if existing is not None and (existing["superuser"] or existing["bypassrls"]):
        raise InvalidInput(
            f"role {name!r} is a superuser or bypasses row-level security: "
            "it cannot be held to team mode's rules"
        )
    if existing is not None and (existing["createrole"] or existing["owner"]):
        raise InvalidInput(
            f"role {name!r} may create roles or is in the board's owner role, so it could "
            "grant itself any right: it cannot be held to team mode's rules"
        )
    climb = _one(store, "team_role_climb", role=name, owner=names["owner"])
    if existing is not None and climb is not None:
        raise InvalidInput(
            f"role {name!r} can become a role that {climb['what']} through its memberships "
            f"({climb['chain']}): it cannot be held to team mode's rules"
        )
    board_groups = json.dumps(sorted(set(names.values())))
    cycle = _one(store, "team_membership_cycle", role=name, groups=board_groups)
    if cycle is not None:
        raise InvalidInput(
            f"{cycle['group']} is a member of {name}{_through(cycle['via'])}: adding {name} "
            "would make a membership cycle"
        )
    through = _one(store, "team_membership_through", role=name, groups=board_groups)
    if through is not None:
        raise InvalidInput(
            f"{name} is already a member of {through['group']}{_through(through['via'])}: "
            f"`team add` would grant what it has, and `team remove` could not take it away "
            f"(revoke {through['via'][0]} from {name} first)"
        )
    secret: str | None = None
    groups = ["reader"] if kind == "reader" else ["agent", *(k for k in (kind,) if k != "agent")]
    with store.write():
        if existing is None:
            verifier = None
            if password:
                secret = secrets.token_urlsafe(18)
                verifier = _pg(store).password_verifier(secret, name)
            _ddl(store, "team_create_login_ddl", role=name, verifier=verifier)
        for group in groups:
            _ddl(store, "team_grant_ddl", group=names[group], role=name)
        if kind != "reader":
            _one(store, "team_record_agent", role=name, caps=json.dumps(sorted(caps)))
        _one(
            store,
            "team_event",
            kind="team_added",
            detail=json.dumps({"role": name, "groups": groups, "capabilities": sorted(caps)}),
        )
    return {
        "role": name,
        "groups": [names[g] for g in groups],
        "capabilities": sorted(caps),
        "created": existing is None,
        "password": secret,
    }


def _through(via: list[str] | None) -> str:
    """`` through lac_devs`` (or `` through a, then b``): the roles between."""
    return f" through {', then '.join(via)}" if via else ""


def remove(store: Store, name: str, *, keep_role: bool = False) -> dict[str, Any]:
    """Take an agent off the team: its claims back to the board, its locks
    freed (recorded), the board's groups revoked, the role dropped unless it
    belongs to anything else or ``keep_role``."""
    names = _require_team(store)
    validate_role(name, names)
    if _one(store, "team_role", role=name, owner=None) is None:
        raise InvalidInput(f"no role {name!r} in this database")
    groups = json.dumps(list(names.values()))
    with store.write():
        freed = _one(store, "team_release_all", role=name)
        assert freed is not None
        for kind in ("agent", "keeper", "admin", "reader"):
            _ddl(store, "team_revoke_ddl", group=names[kind], role=name)
        others = _one(store, "team_other_memberships", role=name, groups=groups)
        dropped = not keep_role and others is not None and int(others["n"]) == 0
        if dropped:
            _ddl(store, "team_drop_role_ddl", role=name)
        _one(
            store,
            "team_event",
            kind="team_removed",
            detail=json.dumps(
                {
                    "role": name,
                    "released": freed["tasks"],
                    "locks": freed["locks"],
                    "dropped": dropped,
                }
            ),
        )
    return {"role": name, "released": freed["tasks"], "locks": freed["locks"], "dropped": dropped}


def members(store: Store) -> list[dict[str, Any]]:
    """Every role of the board's team: its kinds, capabilities, last seen."""
    names = _require_team(store)
    by_group = {v: k for k, v in names.items()}
    found = []
    for row in _all(store, "team_members", groups=json.dumps(list(names.values()))):
        kinds = sorted(by_group[g] for g in row["groups"] if g in by_group)
        found.append(
            {
                "role": row["name"],
                "login": bool(row["login"]),
                "kinds": kinds,
                "capabilities": list(row["caps"] or []),
                "last_seen": row["last_seen"],
            }
        )
    return found
