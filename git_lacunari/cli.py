"""The `git lac` command line: parse, call one board verb, return its Result.

Commands hold no SQL and no git plumbing, print nothing of their own and pick
no exit code: each returns an :class:`~git_lacunari.edge.Result` (or raises a
LacError), and :func:`run` hands it to the one edge, which renders it (human
text, or with ``--json`` one JSON object) and chooses the exit code. Every
command takes ``--json`` and ``--as NAME``. The hooks' hot path skips this
module (see entry.py) but ends at the same edge.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from . import __version__, edge, render
from .board import Claim, Page, validate_lane, validate_limit, validate_state
from .durations import format_duration, parse_duration
from .edge import Result
from .errors import BadUsage, InvalidInput, PathLocked, Refused
from .guard.judge import judge_hook
from .model import STATES, Event, Lock, LockMode, Task, TaskState
from .render import shown
from .session import Session
from .views.guard import guard_result

F = TypeVar("F", bound=Callable[..., Any])
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


# --- options every command shares ---------------------------------------------


def common(func: F) -> F:
    """``--json`` and ``--as`` on every command."""

    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
    @click.option("--as", "as_name", metavar="NAME", help="Act as this agent (beats LAC_AGENT).")
    @functools.wraps(func)
    def wrapper(*args: Any, as_json: bool, as_name: str | None, **kwargs: Any) -> Any:
        # The same two options are accepted before the verb: `git lac --as bob claim 1`.
        group = click.get_current_context().find_root().meta
        # `--as ''` is a name, refused as one: never silently the default.
        session = Session(as_name if as_name is not None else group.get("lac.as"), defer_touch=True)
        try:
            result = func(session, as_json or group.get("lac.json", False), *args, **kwargs)
        except InvalidInput:
            raise  # exit 2 writes nothing
        except Refused:
            session.touch_deferred()
            raise
        session.touch_deferred()
        return result

    return wrapper  # type: ignore[return-value]


def ago(then: float | None, now: float) -> str:
    """How long ago ``then`` was, both on the board's clock (Board.now)."""
    if then is None:
        return "-"
    return format_duration(now - then) + " ago"


def check_url(url: str) -> None:
    """A board URL that parses, or InvalidInput naming what is wrong with it."""
    from urllib.parse import urlsplit

    from .paths import describe_char, unsafe_char

    bad = unsafe_char(url)
    if bad is not None:
        raise InvalidInput(f"invalid board URL: it contains {describe_char(bad)}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        raise InvalidInput(f"invalid board URL: {exc}") from None


def parse_stale(text: str | None) -> float | None:
    return parse_duration(text) if text is not None else None


# --- rendering ---------------------------------------------------------------


def task_line(task: Task, now: float) -> str:
    owner = shown(task.owner or "-")
    beat = f"  heartbeat {ago(task.heartbeat_at, now)}" if task.state == TaskState.CLAIMED else ""
    if task.stale:
        beat += "  STALE"
    return (
        f"#{task.id:<5} {task.state:<9} p{task.priority:<3} {shown(task.lane):<10} "
        f"{owner:<16} {shown(task.title)}{beat}"
    )


def lock_line(lock: Lock, now: float) -> str:
    since = ago(lock.acquired_at, now)
    pattern, agent = shown(lock.pattern), shown(lock.agent)
    return f"{lock.mode:<5}  {pattern:<30} {agent:<16} {lock.where}  since {since}"


def show_text(task: Task, now: float) -> str:
    lines = [
        f"task #{task.id}: {shown(task.title)}",
        f"  state     {task.state}" + (f" by {shown(task.owner)}" if task.owner else ""),
        f"  lane      {shown(task.lane)}   priority {task.priority}   attempts {task.attempts}",
        f"  created   {ago(task.created_at, now)} by {shown(task.created_by)}",
    ]
    if task.state == TaskState.CLAIMED:
        stale = "  STALE: the keeper will give it back" if task.stale else ""
        claimed, beat = ago(task.claimed_at, now), ago(task.heartbeat_at, now)
        lines.append(f"  claimed   {claimed}, heartbeat {beat}{stale}")
    if task.needs:
        lines.append(f"  needs     {shown(', '.join(task.needs))}")
    for dep in task.depends_on:
        lines.append(f"  after     #{dep['id']} ({dep['state']}) {shown(dep['title'])}")
        if dep["state"] == TaskState.CANCELLED:  # cancelled is not done: say what unblocks it
            lines.append(
                f"            blocks this task: `task edit {task.id} --not-after {dep['id']}` "
                f"or `task reopen {dep['id']}`"
            )
    for spec in task.paths:
        mode = "writes" if spec.mode == LockMode.WRITE else "reads"
        lines.append(f"  {mode:<9} {shown(spec.pattern)}")
    for lock in task.locks:
        lines.append(f"  locked    {lock_line(lock, now)}")
    if task.body:
        body = shown(task.body, keep="\n\t")
        lines += ["", *("  " + line for line in body.split("\n"))]
    return "\n".join(lines)


def event_line(event: Event) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(event.at))
    task = f"#{event.task_id}" if event.task_id is not None else "-"
    detail = " ".join(
        f"{shown(k)}={json.dumps(v)}"
        for k, v in sorted(event.detail.items())
        if v not in (None, [], "")
    )
    kind, agent = shown(event.kind), shown(event.agent)
    return f"{when}  {task:<6} {kind:<15} {agent:<16} {detail}".rstrip()


def claim_text(claim: Claim) -> str:
    verb = "already yours" if claim.again else "claimed"
    text = f"{verb}: task #{claim.task.id} {shown(claim.task.title)}"
    for lock in claim.locks:
        text += f"\n  {lock.mode} lock {shown(lock.pattern)}"
    return text


# --- commands ---------------------------------------------------------------


class VersionAsked(Exception):
    """`--version` was given: answered at the edge, so `--json` applies to it."""


def _version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        raise VersionAsked


@click.group(context_settings=CONTEXT)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_version,
    help="Show the version and exit.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--as", "as_name", metavar="NAME", help="Act as this agent (beats LAC_AGENT).")
@click.pass_context
def cli(ctx: click.Context, as_json: bool, as_name: str | None) -> None:
    """git lac: claim tasks and lock paths on a shared board, so that a fleet
    of workers never does the same work twice.

    The board is an SQLite file in the repository's git common dir (shared by
    every linked worktree) unless `git lac init --url postgresql://…` points
    the repository at a team board.

    Exit codes: 0 done or allowed, 1 refused by the board, 2 bad usage or
    invalid input (nothing written), 3 cannot work here (no repository,
    board unreachable or too new).
    """
    ctx.meta["lac.as"] = as_name
    ctx.meta["lac.json"] = as_json


@cli.command(context_settings=CONTEXT)
@click.option(
    "--url", metavar="URL", help="postgresql://host/db for a team board (else the embedded SQLite)."
)
@click.option(
    "--stale-after", metavar="D", help="Claims are stale after D without heartbeat (30m)."
)
@click.option(
    "--board",
    "board_name",
    metavar="NAME",
    help="With --url: this project's board in the database (default: from the root commit).",
)
@common
def init(
    session: Session,
    as_json: bool,
    url: str | None,
    stale_after: str | None,
    board_name: str | None,
) -> Result:
    """Create or migrate the board; with --url, record it as lac.url (and the
    board as lac.board).

    A PostgreSQL database holds one board per project: clones that name the
    same board share it; unrelated repositories never do. Without --board the
    name comes from the repository's root commit, which every clone shares.
    A URL carrying a password is refused: use PGPASSWORD, ~/.pgpass or a
    service file. Idempotent: running it again on a current board changes nothing.
    """
    from .store import is_postgres_url, redact, refuse_password

    if url is not None and not (is_postgres_url(url) or url.startswith("sqlite:")):
        raise InvalidInput(f"unknown board URL {redact(url)!r}: use postgresql://HOST/DB")
    if url is not None:
        check_url(url)
        refuse_password(url)
    chosen = session.choose_board(url, board_name)
    stale = parse_stale(stale_after)
    board = session.board(create=True, url=url, touch=False, name=chosen, act=False)
    from .team import refresh

    refresh(board.store)  # a team board: what a migration added gets the team's rules
    if stale is not None:
        board.set_default_stale_after(stale)
    version = board.store.schema_version()
    if url is not None:
        session.repo.set_config("lac.url", url)
    if chosen is not None:
        session.repo.set_config("lac.board", chosen)
    return Result(
        {
            "url": redact(board.store.url),
            "board": chosen or session.repo.get("lac.board"),
            "dialect": board.store.dialect,
            "schema_version": version,
            "stale_after": board.default_stale_after(),
        },
        f"board ready: {redact(board.store.url)} (schema version {version}, claims stale after "
        f"{format_duration(board.default_stale_after())})",
    )


@cli.command(context_settings=CONTEXT)
@common
def boards(session: Session, as_json: bool) -> Result:
    """List the boards of this repository's database (one per project).

    The current one (lac.board) is marked with *.
    """
    board = session.board(touch=False, act=False)
    current = board.store.one("current_board")
    here = str(current["board"]) if current else None
    names = [str(r["board"]) for r in board.store.all("list_boards")]
    return Result(
        {"boards": names, "current": here},
        "\n".join(f"{'*' if n == here else ' '} {n}" for n in names) or "no boards",
    )


@cli.group(context_settings=CONTEXT)
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
    from .team import enable

    done = enable(session.board(touch=False, act=False).store)
    roles = done["roles"]
    return Result(
        done,
        f"team mode on for board {done['board']}\n"
        + "\n".join(f"  {kind:<7} {roles[kind]}" for kind in ("agent", "keeper", "admin", "reader"))
        + "\nadd agents with `git lac team add NAME`",
    )


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
    from .identity import parse_capabilities
    from .team import add

    added = add(
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


@team.command("remove", context_settings=CONTEXT)
@click.argument("name")
@click.option("--keep-role", is_flag=True, help="Revoke the board's groups but keep the role.")
@common
def team_remove(session: Session, as_json: bool, name: str, keep_role: bool) -> Result:
    """Take agent NAME off the team: its claims go back to the board and its
    locks are freed (recorded as team_removed), the board's groups are
    revoked, and the role is dropped unless it belongs to anything else."""
    from .team import remove

    gone = remove(session.board(touch=False, act=False).store, name, keep_role=keep_role)
    tasks = ", ".join(f"#{t}" for t in gone["released"]) or "none"
    return Result(
        gone,
        f"removed {gone['role']} (claims released: {tasks}; locks freed: {len(gone['locks'])};"
        f" role {'dropped' if gone['dropped'] else 'kept'})",
    )


@team.command("list", context_settings=CONTEXT)
@common
def team_list(session: Session, as_json: bool) -> Result:
    """The board's team: each role, what it is (agent, keeper, admin,
    reader), its capabilities."""
    from .team import members

    found = members(session.board(touch=False, act=False).store)
    lines = [
        f"{m['role']:<20} {','.join(m['kinds']):<20} {', '.join(m['capabilities']) or '-'}"
        for m in found
    ]
    return Result({"members": found}, "\n".join(lines) or "no agents yet")


@cli.command(context_settings=CONTEXT)
@common
def whoami(session: Session, as_json: bool) -> Result:
    """Print the agent name this worktree acts as, where it came from, and
    this working tree's instance (claims are held by an agent at an instance).
    On a team board: the database role (and the board's record of its
    capabilities)."""
    from .store import is_postgres_url

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


@cli.group(context_settings=CONTEXT)
def task() -> None:
    """Add tasks to the board and wire their dependencies."""


@task.command("add", context_settings=CONTEXT)
@click.argument("title")
@click.option("--body", default="", help="Longer description.")
@click.option("--body-file", metavar="FILE", help="Read the body from FILE (- for stdin).")
@click.option("--lane", default="default", show_default=True, help="Lane (queue) of the task.")
@click.option("--priority", type=int, default=0, show_default=True, help="Higher is claimed first.")
@click.option(
    "--after", "after", multiple=True, metavar="ID", help="Claimable only once task ID is done."
)
@click.option("--needs", multiple=True, metavar="CAP", help="Capability a claimer must have.")
@click.option(
    "--write",
    "writes",
    multiple=True,
    metavar="PATTERN",
    help="Path it will write (locked at claim).",
)
@click.option(
    "--read", "reads", multiple=True, metavar="PATTERN", help="Path it will read (shared lock)."
)
@common
def task_add(
    session: Session,
    as_json: bool,
    title: str,
    body: str,
    body_file: str | None,
    lane: str,
    priority: int,
    after: tuple[str, ...],
    needs: tuple[str, ...],
    writes: tuple[str, ...],
    reads: tuple[str, ...],
) -> Result:
    """Add a task; prints the new id."""
    new = session.board().add_task(
        title,
        body=_body(body or None, body_file) or "",
        lane=lane,
        priority=priority,
        after=[_id(a) for a in after],
        needs=needs,
        writes=writes,
        reads=reads,
    )
    return Result({"id": new.id, "task": new.to_json()}, str(new.id))


@task.command("after", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@click.argument("deps", nargs=-1, required=True, metavar="DEP...")
@common
def task_after(session: Session, as_json: bool, task_id: str, deps: tuple[str, ...]) -> Result:
    """Make task ID wait until every DEP is done (cycles are refused)."""
    board = session.board()
    updated = board.add_dependencies(_id(task_id), [_id(d) for d in deps])
    return Result({"task": updated.to_json()}, show_text(updated, board.now()))


def _id(value: str) -> int:
    from .board import validate_task_id

    return validate_task_id(value)


DEFAULT_LIMIT = 50  # rows a listing shows unless --limit says otherwise (0: all)
LIMIT_HELP = f"Show at most N (default {DEFAULT_LIMIT}; 0 shows all)."


def more_line(page: Page[Any], what: str) -> list[str]:
    """The last line of a cut listing: how many more, and how to see them
    (``what`` is singular: "more task")."""
    if not page.more:
        return []
    count = f"{page.more:,}" if page.more_exact else f"more than {page.more:,}"
    plural = "" if page.more == 1 and page.more_exact else "s"
    return [f"… {count} {what}{plural}; --limit 0 shows all"]


def paged(page: Page[Any], limit: int) -> dict[str, Any]:
    """What a listing's --json says of its paging."""
    return {"limit": limit or None, "more": page.more, "more_exact": page.more_exact}


@cli.command(context_settings=CONTEXT)
@click.option(
    "--state",
    "states",
    multiple=True,
    metavar="S",
    help=f"Only tasks in state S ({', '.join(STATES)}); repeat or comma-separate for several.",
)
@click.option("--all", "every", is_flag=True, help="Also done and cancelled tasks.")
@click.option("--lane", help="Only tasks of this lane.")
@click.option("--mine", is_flag=True, help="Only tasks I have claimed.")
@click.option("--limit", type=int, default=DEFAULT_LIMIT, metavar="N", help=LIMIT_HELP)
@common
def tasks(
    session: Session,
    as_json: bool,
    states: tuple[str, ...],
    every: bool,
    lane: str | None,
    mine: bool,
    limit: int,
) -> Result:
    """List tasks in id order, with owner and heartbeat age of each claim.

    Done and cancelled tasks are hidden unless --all or --state asks for them.
    At most --limit tasks are shown; a last line (on stderr) says how many
    more there are. With --json, "more" counts them (up to 10,000:
    "more_exact" is false beyond) and --limit 0 prints every task.
    """
    wanted = [s.strip() for given in states for s in given.split(",") if s.strip()]
    if states and not wanted:
        raise InvalidInput("--state needs a state: " + ", ".join(STATES))
    for state in wanted:
        validate_state(state)
    if lane is not None:
        validate_lane(lane)
    validate_limit(limit)
    board = session.board()
    now = board.now()
    page = board.task_page(states=wanted, every=every, lane=lane, mine=mine, limit=limit, now=now)
    return Result(
        {"tasks": [t.to_json() for t in page.items], "now": now, **paged(page, limit)},
        # Not built for --json: a --limit 0 listing is long.
        "" if as_json else "\n".join(task_line(t, now) for t in page.items) or "no tasks",
        warnings=more_line(page, "more task"),
    )


@cli.command(context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@common
def show(session: Session, as_json: bool, task_id: str) -> Result:
    """Show one task: state, owner, dependencies, declared paths, locks."""
    board = session.board()
    now = board.now()
    found = board.show(_id(task_id), now=now)
    return Result({"task": found.to_json(), "now": now}, show_text(found, now))


@cli.command(context_settings=CONTEXT)
@click.argument("task_id", metavar="[ID]", required=False)
@click.option("--limit", type=int, default=DEFAULT_LIMIT, metavar="N", help=LIMIT_HELP)
@common
def log(session: Session, as_json: bool, task_id: str | None, limit: int) -> Result:
    """Print the event history, of one task or of the whole board.

    The newest --limit events, oldest first; a last line (on stderr) says how
    many earlier ones there are. --limit 0 prints the whole history.
    """
    task = _id(task_id) if task_id is not None else None
    validate_limit(limit)
    page = session.board().log_page(task, limit=limit)
    return Result(
        {"events": [e.to_json() for e in page.items], **paged(page, limit)},
        "" if as_json else "\n".join(event_line(e) for e in page.items) or "no events",
        warnings=more_line(page, "earlier event"),
    )


@cli.command(context_settings=CONTEXT)
@click.argument("task_id", metavar="ID", required=False)
@click.option("--next", "next_", is_flag=True, help="Claim the best claimable task of the lane.")
@click.option("--lane", default="default", show_default=True, help="Lane for --next.")
@click.option("--write", "writes", multiple=True, metavar="P", help="Also lock P for writing.")
@click.option("--read", "reads", multiple=True, metavar="P", help="Also lock P for reading.")
@click.option("--wait", metavar="SECONDS", help="With --next: block up to SECONDS for a task.")
@click.option(
    "--stale-after", metavar="D", help="This claim is stale after D without heartbeat (e.g. 2h)."
)
@click.option(
    "--take-over",
    is_flag=True,
    help="My agent name holds it from another working tree: move it here (recorded).",
)
@common
def claim(
    session: Session,
    as_json: bool,
    task_id: str | None,
    next_: bool,
    lane: str,
    writes: tuple[str, ...],
    reads: tuple[str, ...],
    wait: str | None,
    stale_after: str | None,
    take_over: bool,
) -> Result:
    """Claim task ID (or --next in a lane) with its path locks, atomically.

    Of two workers racing for one task exactly one wins; the loser is told why
    (already claimed by whom, unmet dependency, missing capability, path held)
    and nothing is written for it. Claiming your own claim again succeeds.
    """
    if next_ == (task_id is not None):
        raise click.UsageError("give a task ID or --next, not both")
    stale = parse_stale(stale_after)
    if wait is not None and not next_:
        raise click.UsageError("--wait goes with --next")
    if take_over and next_:
        raise click.UsageError("--take-over goes with a task ID")
    wait_s = parse_duration(wait) if wait is not None else None
    board = session.board()
    if next_:
        got = board.claim_next(lane, writes=writes, reads=reads, stale_after=stale, wait=wait_s)
    else:
        got = board.claim(
            _id(task_id or ""),
            writes=writes,
            reads=reads,
            stale_after=stale,
            take_over=take_over,
        )
    return Result(
        {
            "task": got.task.to_json(),
            "again": got.again,
            "locks": [lk.to_json() for lk in got.locks],
        },
        claim_text(got),
    )


@cli.command(context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@click.option("--force", is_flag=True, help="Release another agent's claim.")
@click.option("--reason", metavar="TEXT", help="Why (required with --force).")
@common
def release(
    session: Session, as_json: bool, task_id: str, force: bool, reason: str | None
) -> Result:
    """Give a claim back to the board, with its path locks."""
    released = session.board().release(_id(task_id), force=force, reason=reason)
    return Result({"task": released.to_json()}, f"released: task #{released.id} is open again")


@cli.command(context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@common
def done(session: Session, as_json: bool, task_id: str) -> Result:
    """Mark your claimed task done; its path locks are released."""
    finished = session.board().done(_id(task_id))
    return Result(
        {"task": finished.to_json()}, f"done: task #{finished.id} {shown(finished.title)}"
    )


@cli.command(context_settings=CONTEXT)
@click.argument("patterns", nargs=-1, required=True, metavar="PATTERN...")
@click.option(
    "--read", "read_mode", is_flag=True, help="Shared read lock (default: exclusive write)."
)
@click.option("--task", "task_id", metavar="ID", help="Attach the locks to your claimed task ID.")
@common
def lock(
    session: Session, as_json: bool, patterns: tuple[str, ...], read_mode: bool, task_id: str | None
) -> Result:
    """Lock paths: files, dir/ subtrees or globs. All or nothing."""
    board = session.board()
    mode = LockMode.READ if read_mode else LockMode.WRITE
    got = board.lock(patterns, mode=mode, task_id=_id(task_id) if task_id else None)
    now = board.now()
    return Result(
        {"locks": [lk.to_json() for lk in got], "now": now},
        "\n".join(f"locked: {lock_line(lk, now)}" for lk in got),
    )


@cli.command(context_settings=CONTEXT)
@click.argument("patterns", nargs=-1, metavar="PATTERN...")
@click.option("--task", "task_id", metavar="ID", help="Release every lock of your task ID.")
@click.option("--force", is_flag=True, help="Remove anyone's locks on exactly PATTERN...")
@click.option("--reason", metavar="TEXT", help="Why (required with --force).")
@common
def unlock(
    session: Session,
    as_json: bool,
    patterns: tuple[str, ...],
    task_id: str | None,
    force: bool,
    reason: str | None,
) -> Result:
    """Release your locks on PATTERN..., or every lock of --task ID.

    With --force --reason TEXT, remove every agent's lock on exactly
    PATTERN..., recorded as `force_unlocked` with each previous holder.
    """
    if bool(patterns) == (task_id is not None):
        raise click.UsageError("give PATTERN... or --task ID")
    if force and task_id is not None:
        raise click.UsageError("--force takes PATTERN...; release --force frees a task's locks")
    if reason is not None and not force:
        raise click.UsageError("--reason goes with --force")
    board = session.board()
    if force:
        freed = board.force_unlock(patterns, reason=reason)
    else:
        freed = board.unlock_task(_id(task_id)) if task_id else board.unlock(patterns)
    return Result(
        {"unlocked": [lk.to_json() for lk in freed]},
        "\n".join(f"unlocked: {shown(lk.pattern)}" for lk in freed) or "no locks to release",
    )


@cli.command(context_settings=CONTEXT)
@click.option("--mine", is_flag=True, help="Only my locks.")
@click.option("--path", metavar="P", help="Only locks overlapping P.")
@common
def locks(session: Session, as_json: bool, mine: bool, path: str | None) -> Result:
    """List active path locks."""
    board = session.board()
    found = board.locks(mine=mine, path=path)
    now = board.now()
    return Result(
        {"locks": [lk.to_json() for lk in found], "now": now},
        "\n".join(lock_line(lk, now) for lk in found) or "no locks",
    )


@cli.command(context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@common
def check(session: Session, as_json: bool, paths: tuple[str, ...]) -> Result:
    """May I write these paths? Exit 1 naming each holder if not."""
    conflicts = session.board().check(paths)
    if conflicts:
        raise PathLocked(conflicts)
    return Result({"paths": list(paths)}, "free: " + " ".join(paths))


@cli.command(context_settings=CONTEXT)
@click.argument("task_ids", nargs=-1, metavar="[ID...]")
@common
def heartbeat(session: Session, as_json: bool, task_ids: tuple[str, ...]) -> Result:
    """Refresh the heartbeat of your claims (all of them, or ID...)."""
    refreshed = session.board().heartbeat([_id(t) for t in task_ids])
    return Result(
        {"refreshed": refreshed},
        "heartbeat: " + (" ".join(f"#{t}" for t in refreshed) or "no claims"),
    )


@cli.group(context_settings=CONTEXT)
def guard() -> None:
    """What the hooks run: refuse changes to paths another agent holds.

    A board that cannot be reached lets a commit through with a warning and
    refuses a push; `git config lac.guard.offline warn|refuse` changes both.
    LAC_GUARD=off skips the guard (and says so).
    """


@guard.command("pre-commit", context_settings=CONTEXT)
@common
def guard_pre_commit_cmd(session: Session, as_json: bool) -> Result:
    """Refuse staged changes to paths held by another agent (the pre-commit hook)."""
    return guard_result(judge_hook(session, "pre-commit"))


@guard.command("pre-push", context_settings=CONTEXT)
@click.argument("remote", required=False)
@click.argument("url", required=False)
@common
def guard_pre_push_cmd(
    session: Session, as_json: bool, remote: str | None, url: str | None
) -> Result:
    """Refuse pushed commits that change paths held by another agent.

    Git runs it with REMOTE URL and the refs on standard input. Without them
    it takes the range the pre-commit framework sets (PRE_COMMIT_FROM_REF,
    PRE_COMMIT_TO_REF, PRE_COMMIT_REMOTE_NAME, PRE_COMMIT_LOCAL_BRANCH).
    """

    if (remote is None) != (url is None):
        raise click.UsageError("give both REMOTE and URL (as git does), or neither")
    return guard_result(judge_hook(session, "pre-push", remote=remote, url=url))


@guard.command("pre-merge-commit", context_settings=CONTEXT)
@common
def guard_pre_merge_commit_cmd(session: Session, as_json: bool) -> Result:
    """Refuse a merge commit that changes a path held by another agent.

    Its own changes (where the result differs from every parent) and the
    changes of the commits it brings in that no remote has yet.
    """
    return guard_result(judge_hook(session, "pre-merge-commit"))


@guard.command("pre-receive", context_settings=CONTEXT)
@common
def guard_pre_receive_cmd(session: Session, as_json: bool) -> Result:
    """On a server: judge a whole push (git's `<old> <new> <ref>` lines on stdin).

    Only commits the server does not have yet; the pusher from `git push -o
    lac.agent=NAME`, or from the variable `lac.guard.server.pusher-env` names.
    A board that cannot answer refuses the push (`lac.guard.server.offline`).
    """
    return guard_result(judge_hook(session, "pre-receive"))


@cli.group(context_settings=CONTEXT)
def hooks() -> None:
    """Install or remove the native guard hooks (pre-commit, pre-push, pre-merge-commit;
    pre-receive on a server)."""


@hooks.command("install", context_settings=CONTEXT)
@click.option(
    "--force",
    is_flag=True,
    help="When a foreign hook and an old NAME.legacy both exist, replace the .legacy.",
)
@click.option("--server", is_flag=True, help="In a bare repository: the pre-receive guard.")
@click.option(
    "--global-hooks-path",
    "global_ok",
    is_flag=True,
    help="Install into a core.hooksPath from the global or system config (every repository).",
)
@common
def hooks_install(
    session: Session, as_json: bool, force: bool, server: bool, global_ok: bool
) -> Result:
    """Write the guard hooks into the repository's hooks directory.

    The common hooks directory covers every linked worktree; core.hooksPath is
    honoured. A hook already there is kept as NAME.legacy and still runs first.
    Installing twice changes nothing. With --server: pre-receive, and
    receive.advertisePushOptions for `git push -o lac.agent=NAME`.
    """
    from .hooks import install, install_server, shared_hooks_path
    from .repo import discover_git_dir

    if server:
        changes = install_server(discover_git_dir(), force=force)
        return Result(
            {"hooks": [vars(c) for c in changes]},
            "\n".join(f"{c.hook}: {c.action} ({c.path})" for c in changes),
        )
    shared = shared_hooks_path(session.repo)
    if shared is not None and not global_ok:
        raise InvalidInput(
            f"core.hooksPath comes from the {shared.scope} git config ({shared.path}): "
            "installing there guards every repository on this machine that has no "
            "core.hooksPath of its own (they stay silent where there is no board); "
            "give --global-hooks-path to do that"
        )
    changes = install(session.repo, force=force)
    return Result(
        {"hooks": [vars(c) for c in changes]},
        "\n".join(f"{c.hook}: {c.action} ({c.path})" for c in changes),
    )


@hooks.command("uninstall", context_settings=CONTEXT)
@click.option("--server", is_flag=True, help="In a bare repository: the pre-receive guard.")
@common
def hooks_uninstall(session: Session, as_json: bool, server: bool) -> Result:
    """Remove the guard hooks, putting back any hook they had kept."""
    from .hooks import uninstall, uninstall_server
    from .repo import discover_git_dir

    changes = uninstall_server(discover_git_dir()) if server else uninstall(session.repo)
    return Result(
        {"hooks": [vars(c) for c in changes]},
        "\n".join(f"{c.hook}: {c.action} ({c.path})" for c in changes),
    )


@cli.command(context_settings=CONTEXT)
@click.option("--once", is_flag=True, help="Sweep once and exit (exit 1 if another keeper runs).")
@click.option(
    "--interval", default="30s", show_default=True, metavar="D", help="Time between sweeps."
)
@click.option(
    "--stale-after", metavar="D", help="Override the board's stale-after for this keeper."
)
@common
def keeper(
    session: Session, as_json: bool, once: bool, interval: str, stale_after: str | None
) -> Result:
    """Give stale claims and their path locks back to the board.

    A claim is stale when its heartbeat is older than its stale-after (set per
    claim, else per board: `git lac init --stale-after D`). Its task goes back
    to open with its attempt count, and `expired` is recorded with the previous
    holder and how long it had been silent. A lock taken without a task goes
    back (`locks_expired`) once its agent has run no command for the stale
    period. One keeper works a board at a time:
    a second one waits (or, with --once, says who holds it and exits 1).
    """
    from .liveness import run_keeper

    every = parse_duration(interval)
    stale = parse_stale(stale_after)
    expired_locks: list[dict[str, object]] = []
    expired = run_keeper(
        session.board(),
        once=once,
        interval=every,
        stale_after=stale,
        echo=lambda line: click.echo(line, err=as_json),
        expired_locks=expired_locks,
    )
    quiet = not expired and not expired_locks
    return Result(
        {"expired": expired, "expired_locks": expired_locks},
        "keeper: nothing stale" if quiet else "",
    )


@cli.command(context_settings={**CONTEXT, "ignore_unknown_options": False})
@click.option("--lane", required=True, help="The lane to work.")
@click.option("--once", is_flag=True, help="Work one task, then exit (exit 1 if the lane is busy).")
@click.option("--max", "max_tasks", type=click.IntRange(min=1), help="Work at most N tasks.")
@click.option("--worktree", is_flag=True, help="Run each task in a fresh worktree on lac/task-ID.")
@click.argument("command", nargs=-1, required=True, metavar="-- COMMAND...")
@common
def drain(
    session: Session,
    as_json: bool,
    lane: str,
    once: bool,
    max_tasks: int | None,
    worktree: bool,
    command: tuple[str, ...],
) -> Result:
    """Work a lane unattended: claim the next task, run COMMAND, repeat.

    COMMAND gets LAC_TASK_ID, LAC_TASK_TITLE, LAC_LANE, LAC_AGENT and
    LAC_TASK_PATHS (JSON [[pattern, mode], ...]) in its environment. Exit 0
    marks the task done; anything else releases it with a `failed` event, and a
    task that failed lac.maxAttempts times (3) is parked. The claim heartbeats
    while COMMAND runs; SIGINT/SIGTERM release it at once. One drainer works a
    lane at a time, across machines; a second waits (--once: exits 1). It stops
    when the lane has no claimable task left. With --once it exits with the
    task's outcome (1 when it failed); with --json COMMAND's output goes to
    stderr. COMMAND runs in its own process group and, on Linux, is killed if
    the drainer dies. --worktree continues lac/task-ID on a retry (never
    reset: every attempt's commits stay on it).
    """
    from .board import validate_lane
    from .liveness import drain as drain_lane
    from .liveness import max_attempts_of

    validate_lane(lane)
    repo = session.repo
    attempts = max_attempts_of(repo)
    report = drain_lane(
        session.board,
        repo,
        lane=lane,
        command=command,
        once=once,
        max_tasks=max_tasks,
        worktree=worktree,
        max_attempts=attempts,
        echo=lambda line: click.echo(line, err=True),
        # With --json, stdout is the one JSON object: the command's output goes to stderr.
        command_stdout=2 if as_json else None,
    )
    # --once exits with the task's outcome: 0 done, 1 failed (its status in the JSON).
    failed_once = once and report.failed and report.stopped_by is None
    return Result(
        {
            "done": report.done,
            "failed": report.failed,
            "parked": report.parked,
            "exit_codes": {str(k): v for k, v in report.exit_codes.items()},
        },
        f"drained lane {lane!r}: {len(report.done)} done, {len(report.failed)} failed"
        + (f", {len(report.parked)} parked" if report.parked else ""),
        unfinished=(
            f"task #{report.failed[0]} failed (exit {report.exit_codes.get(report.failed[0])})"
            if failed_once
            else None
        ),
        stopped_by=report.stopped_by,
    )


@cli.command(context_settings=CONTEXT)
@click.argument("ref", metavar="REF", required=False)
@click.option("--base", "base_rev", metavar="REV", help="Merge every file from this base commit.")
@click.option("--dry-run", is_flag=True, help="Print what would happen per file; write nothing.")
@click.option("--abort", is_flag=True, help="Undo a reconcile with conflicts, exactly.")
@click.option(
    "--continue", "continue_", is_flag=True, help="Commit a resolved reconcile and record it."
)
@common
def reconcile(
    session: Session,
    as_json: bool,
    ref: str | None,
    base_rev: str | None,
    dry_run: bool,
    abort: bool,
    continue_: bool,
) -> Result:
    """Merge REF (an offline branch, a peer's fetched branch) into this worktree.

    The merge is git's own (`git merge-tree`: renames, modes, several merge
    bases), on the base each side started from: --base, else the blob
    recorded when a path was locked, else the merge base, else (unrelated
    histories) the newest version of each file both histories contain.
    The result is left as `git merge --no-commit` leaves it: staged, with
    MERGE_HEAD, so `git commit` records a merge. Conflicts are a real merge
    state (unmerged index entries and markers) and make it exit 1: resolve,
    `git add`, then `--continue`; `--abort` restores the state before.
    A path from REF that git would refuse to check out (`.git` in any
    spelling, `..`) is refused with exit 2; nothing is written over a path
    another agent holds, nor over uncommitted changes.
    """
    from .reconcile.command import command
    from .views.reconcile import reconcile_result

    return reconcile_result(
        command(session, ref, base_rev=base_rev, dry_run=dry_run, abort=abort, continue_=continue_)
    )


# --- the whole life of a task, lock administration, agents in a loop (issue 14) ------


def _body(body: str | None, body_file: str | None) -> str | None:
    """--body TEXT or --body-file FILE (``-``: standard input), not both."""
    if body is not None and body_file is not None:
        raise click.UsageError("give --body or --body-file, not both")
    if body_file is None:
        return body
    try:
        if body_file == "-":
            return sys.stdin.read()
        return Path(body_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read --body-file {body_file}: {exc}") from None


@task.command("edit", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@click.option("--title", help="New title.")
@click.option("--body", help="New body.")
@click.option("--body-file", metavar="FILE", help="Read the new body from FILE (- for stdin).")
@click.option("--lane", help="Move it to this lane.")
@click.option("--priority", type=int, help="New priority (higher is claimed first).")
@click.option("--needs", multiple=True, metavar="CAP", help="Replace the capabilities it needs.")
@click.option("--no-needs", is_flag=True, help="It needs no capability any more.")
@click.option("--write", "writes", multiple=True, metavar="PATTERN", help="Declare a write path.")
@click.option("--read", "reads", multiple=True, metavar="PATTERN", help="Declare a read path.")
@click.option("--drop-path", multiple=True, metavar="PATTERN", help="Drop a declared path.")
@click.option("--after", multiple=True, metavar="DEP", help="Also wait on task DEP.")
@click.option("--not-after", multiple=True, metavar="DEP", help="Stop waiting on task DEP.")
@click.option("--reason", metavar="TEXT", help="Why, for the history.")
@common
def task_edit(
    session: Session,
    as_json: bool,
    task_id: str,
    title: str | None,
    body: str | None,
    body_file: str | None,
    lane: str | None,
    priority: int | None,
    needs: tuple[str, ...],
    no_needs: bool,
    writes: tuple[str, ...],
    reads: tuple[str, ...],
    drop_path: tuple[str, ...],
    after: tuple[str, ...],
    not_after: tuple[str, ...],
    reason: str | None,
) -> Result:
    """Change an open task, or your own claim: one `edited` event.

    A path declared on a claim is locked at once (or the edit is refused
    whole); a dropped one is unlocked. Another agent's claim is not yours to
    edit; a done, cancelled or parked task is reopened first.
    """
    if needs and no_needs:
        raise click.UsageError("give --needs or --no-needs, not both")
    board = session.board()
    edited = board.edit_task(
        _id(task_id),
        title=title,
        body=_body(body, body_file),
        lane=lane,
        priority=priority,
        needs=() if no_needs else (needs or None),
        writes=writes,
        reads=reads,
        drop_paths=drop_path,
        add_after=[_id(d) for d in after],
        drop_after=[_id(d) for d in not_after],
        reason=reason,
    )
    return Result({"task": edited.to_json()}, show_text(edited, board.now()))


@task.command("cancel", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@click.option("--reason", metavar="TEXT", help="Why, for the history.")
@common
def task_cancel(session: Session, as_json: bool, task_id: str, reason: str | None) -> Result:
    """Cancel an open or parked task, or your own claim (its locks are freed).

    Tasks that wait on a cancelled task stay blocked (cancelled is not done):
    `task edit ID --not-after DEP` frees them, `task reopen DEP` revives it.
    """
    cancelled = session.board().cancel_task(_id(task_id), reason=reason)
    return Result(
        {"task": cancelled.to_json()}, f"cancelled: task #{cancelled.id} {cancelled.title}"
    )


@task.command("reopen", context_settings=CONTEXT)
@click.argument("task_id", metavar="ID")
@click.option("--reason", metavar="TEXT", help="Why, for the history.")
@common
def task_reopen(session: Session, as_json: bool, task_id: str, reason: str | None) -> Result:
    """Put a done, cancelled or parked task back on the board, attempts reset to 0."""
    reopened = session.board().reopen_task(_id(task_id), reason=reason)
    return Result(
        {"task": reopened.to_json()}, f"reopened: task #{reopened.id} {reopened.title} is open"
    )


def _why(refused: Refused) -> str:
    return refused.message


@cli.command(context_settings=CONTEXT)
@click.option("--lane", default="default", show_default=True, help="The lane to look at.")
@common
def ready(session: Session, as_json: bool, lane: str) -> Result:
    """The tasks you could claim now, in the order `claim --next` takes them;
    for every other open task of the lane, why not."""
    board = session.board()
    now = board.now()
    can, cannot = board.ready(lane)
    rows = [[f"#{t.id}", f"p{t.priority}", "ready", t.title] for t in can]
    rows += [[f"#{t.id}", f"p{t.priority}", "blocked", f"{t.title}: {_why(r)}"] for t, r in cannot]
    return Result(
        {
            "lane": lane,
            "ready": [t.to_json() for t in can],
            "blocked": [{"task": t.to_json(), "refused": r.to_json()} for t, r in cannot],
            "now": now,
        },
        render.table(rows) if rows else f"no open task in lane {lane!r}",
    )


@cli.command(context_settings=CONTEXT)
@common
def status(session: Session, as_json: bool) -> Result:
    """What you hold: claims with heartbeat age and time until stale, your
    locks, whether this clone's guard hooks are installed, and the board."""
    from .hooks import HOOK_NAMES, hooks_dir, is_ours

    board = session.board()
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
    lines = [
        f"agent     {ident.name} ({ident.source}), instance {board.instance}",
        f"board     {info['url']} (claims stale after {format_duration(default)})",
        "hooks     "
        + ", ".join(f"{n} {'installed' if ok else 'missing'}" for n, ok in installed.items()),
    ]
    if claims:
        lines += ["", "claims"]
        rows = []
        for t, _age, left in claims:
            stale = (
                render.paint("STALE", "red")
                if left < 0
                else f"stale in {format_duration(int(left))}"
            )
            rows.append(
                [f"#{t.id}", shown(t.title), f"heartbeat {render.when(t.heartbeat_at, now)}", stale]
            )
        lines.append(render.table(rows))
    else:
        lines.append("claims    none")
    if held:
        lines += ["", "locks"]
        lines.append(
            render.table(
                [
                    [
                        lk.mode,
                        shown(lk.pattern),
                        lk.where,
                        f"since {render.when(lk.acquired_at, now)}",
                    ]
                    for lk in held
                ]
            )
        )
    else:
        lines.append("locks     none")
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
            "now": now,
        },
        "\n".join(lines),
    )


@cli.command(context_settings=CONTEXT)
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@common
def completion(session: Session, as_json: bool, shell: str) -> Result:
    """Print the shell completion script for SHELL (bash, zsh or fish).

    bash: `eval "$(git lac completion bash)"` in ~/.bashrc (after git's own
    completion, so `git lac <TAB>` completes too); zsh: the same in ~/.zshrc;
    fish: `git lac completion fish > ~/.config/fish/completions/git-lac.fish`.
    """
    from .completion import script

    text = script(shell)
    return Result({"shell": shell, "script": text}, text.rstrip("\n"))


@cli.command(context_settings=CONTEXT)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=int,
    help="Port to listen on (0: any free port; the URL printed names it).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a browser.")
@click.option(
    "--allow-actions",
    is_flag=True,
    help="Offer release, force-release, reopen and cancel on the page (audited).",
)
@click.option(
    "--token",
    metavar="TOKEN",
    help="Require TOKEN on every request (a non-loopback --host makes one if not given).",
)
@common
def serve(
    session: Session,
    as_json: bool,
    host: str,
    port: int,
    open_browser: bool,
    allow_actions: bool,
    token: str | None,
) -> Result:
    """Serve the live board page until Ctrl-C.

    One page shows the lanes, each claim with its holder, instance, heartbeat
    and a stale warning, why open tasks are blocked, the path locks as a tree,
    a task's timeline, filters, and counts. Changes appear within a second,
    pushed from one watcher per server (LISTEN/NOTIFY on PostgreSQL, PRAGMA
    data_version on SQLite); pages never poll the board. Read-only unless
    --allow-actions: then each action is done as this agent and recorded with
    the name the person types on the page. Loopback by default; any other
    --host needs a token (--token, or one made and printed once). In team
    mode, with actions off, the page reads as the board's reader role. Needs
    the web extra: pip install 'git-lacunari[web]' (exit 3 without it).
    """
    try:
        from .web.server import serve as run_server
    except ImportError as exc:
        from .errors import CannotWorkHere
        from .web import EXTRA_HINT

        missing = (exc.name or "starlette").split(".")[0]
        raise CannotWorkHere(
            f"git lac serve needs the web extra ({missing} is missing): {EXTRA_HINT}"
        ) from None

    served = run_server(
        session,
        host=host,
        port=port,
        token=token,
        allow_actions=allow_actions,
        open_browser=open_browser,
        echo=lambda line: click.echo(line, err=True),
    )
    return Result(
        {"url": served.url, "actions": served.actions, "role": served.role},
        "",
        stopped_by=served.stopped_by,
    )


# --- to the edge ---------------------------------------------------------------

NEGATIVE_NUMBER = re.compile(r"^-\d+$")


def _wants_json(argv: Sequence[str]) -> bool:
    args = list(argv)
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def _usage(exc: click.ClickException) -> BadUsage:
    message = exc.format_message()
    if isinstance(exc, click.exceptions.NoSuchOption) and NEGATIVE_NUMBER.match(exc.option_name):
        message = f"task id {exc.option_name!r} is not a positive whole number"
    ctx = getattr(exc, "ctx", None)
    hint = f"Try '{ctx.command_path} -h' for help." if ctx is not None else None
    return BadUsage(message, hint=hint)


def _invoke(argv: Sequence[str]) -> Result:
    """Parse and run one command; click's own failures become BadUsage."""
    try:
        # Without standalone mode click returns the command's value, or the
        # code of an Exit (0 after --help or --version, which click printed).
        done = cli.main(
            args=list(argv),
            prog_name="git lac",
            standalone_mode=False,
            complete_var="_GIT_LAC_COMPLETE",  # completion.COMPLETE_VAR
        )
    except click.ClickException as exc:
        raise _usage(exc) from None
    except click.Abort:  # click's spelling of Ctrl-C
        raise KeyboardInterrupt from None
    except VersionAsked:
        return Result({"version": __version__}, f"git-lac, version {__version__}")
    if isinstance(done, Result):
        return done
    # Only the reconcile command's body still prints for itself and has click
    # end with code 1 while conflicts are left; it is to return a Result instead.
    return Result(shown=True, unfinished="conflicts left" if done else None)


def run(argv: Sequence[str]) -> int:
    """`git lac ARGV`: the exit code (entry.main exits with it)."""
    return edge.run(lambda: _invoke(argv), as_json=_wants_json(argv))
