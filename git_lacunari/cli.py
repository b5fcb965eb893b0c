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
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from . import __version__, edge
from .board import Claim
from .durations import format_duration, parse_duration
from .edge import Result
from .errors import BadUsage, InvalidInput, PathLocked, Refused
from .guard import run_guard
from .model import STATES, Event, Lock, LockMode, Task, TaskState
from .session import Session

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

# Shown escaped in human output, so text from the board cannot drive the
# terminal (OSC, CSI) or reorder what people read (bidi controls).
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def shown(text: str, *, keep: str = "") -> str:
    """``text`` with control, bidi and separator characters escaped (``\\x1b``),
    except those in ``keep`` (a body keeps its newlines and tabs)."""
    import unicodedata

    out: list[str] = []
    for char in text:
        cat = unicodedata.category(char)
        if char not in keep and (cat in ("Cc", "Cs", "Zl", "Zp") or char in BIDI_CONTROLS):
            out.append(char.encode("unicode_escape", "backslashreplace").decode("ascii"))
        else:
            out.append(char)
    return "".join(out)


def task_line(task: Task, now: float) -> str:
    owner = task.owner or "-"
    beat = f"  heartbeat {ago(task.heartbeat_at, now)}" if task.state == TaskState.CLAIMED else ""
    if task.stale:
        beat += "  STALE"
    return (
        f"#{task.id:<5} {task.state:<9} p{task.priority:<3} {task.lane:<10} "
        f"{owner:<16} {shown(task.title)}{beat}"
    )


def lock_line(lock: Lock, now: float) -> str:
    since = ago(lock.acquired_at, now)
    return f"{lock.mode:<5}  {lock.pattern:<30} {lock.agent:<16} {lock.where}  since {since}"


def show_text(task: Task, now: float) -> str:
    lines = [
        f"task #{task.id}: {shown(task.title)}",
        f"  state     {task.state}" + (f" by {task.owner}" if task.owner else ""),
        f"  lane      {task.lane}   priority {task.priority}   attempts {task.attempts}",
        f"  created   {ago(task.created_at, now)} by {task.created_by}",
    ]
    if task.state == TaskState.CLAIMED:
        stale = "  STALE: the keeper will give it back" if task.stale else ""
        claimed, beat = ago(task.claimed_at, now), ago(task.heartbeat_at, now)
        lines.append(f"  claimed   {claimed}, heartbeat {beat}{stale}")
    if task.needs:
        lines.append(f"  needs     {', '.join(task.needs)}")
    for dep in task.depends_on:
        lines.append(f"  after     #{dep['id']} ({dep['state']}) {shown(dep['title'])}")
    for spec in task.paths:
        lines.append(f"  {'writes' if spec.mode == LockMode.WRITE else 'reads':<9} {spec.pattern}")
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
        f"{k}={json.dumps(v)}" for k, v in sorted(event.detail.items()) if v not in (None, [], "")
    )
    return f"{when}  {task:<6} {event.kind:<15} {event.agent:<16} {detail}".rstrip()


def claim_text(claim: Claim) -> str:
    verb = "already yours" if claim.again else "claimed"
    text = f"{verb}: task #{claim.task.id} {shown(claim.task.title)}"
    for lock in claim.locks:
        text += f"\n  {lock.mode} lock {lock.pattern}"
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
@common
def init(session: Session, as_json: bool, url: str | None, stale_after: str | None) -> Result:
    """Create or migrate the board; with --url, record it as lac.url.

    Idempotent: running it again on a current board changes nothing.
    """
    from .store import is_postgres_url

    if url is not None and not (is_postgres_url(url) or url.startswith("sqlite:")):
        raise InvalidInput(f"unknown board URL {url[:200]!r}: use postgresql://HOST/DB")
    if url is not None:
        check_url(url)
    stale = parse_stale(stale_after)
    board = session.board(create=True, url=url, touch=False)
    if stale is not None:
        board.set_default_stale_after(stale)
    version = board.store.schema_version()
    if url is not None:
        session.repo.set_config("lac.url", url)
    return Result(
        {
            "url": board.store.url,
            "dialect": board.store.dialect,
            "schema_version": version,
            "stale_after": board.default_stale_after(),
        },
        f"board ready: {board.store.url} (schema version {version}, claims stale after "
        f"{format_duration(board.default_stale_after())})",
    )


@cli.command(context_settings=CONTEXT)
@common
def whoami(session: Session, as_json: bool) -> Result:
    """Print the agent name this worktree acts as, and where it came from."""
    ident = session.identity
    caps = ", ".join(ident.capabilities) or "none"
    return Result(
        {
            "agent": ident.name,
            "source": ident.source,
            "capabilities": list(ident.capabilities),
            "capabilities_source": ident.capabilities_source,
        },
        f"{ident.name}\n  from {ident.source}\n"
        f"  capabilities: {caps} ({ident.capabilities_source})",
    )


@cli.group(context_settings=CONTEXT)
def task() -> None:
    """Add tasks to the board and wire their dependencies."""


@task.command("add", context_settings=CONTEXT)
@click.argument("title")
@click.option("--body", default="", help="Longer description.")
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
        body=body,
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


@cli.command(context_settings=CONTEXT)
@click.option("--state", help=f"Only tasks in this state ({', '.join(STATES)}).")
@click.option("--lane", help="Only tasks of this lane.")
@click.option("--mine", is_flag=True, help="Only tasks I have claimed.")
@common
def tasks(
    session: Session, as_json: bool, state: str | None, lane: str | None, mine: bool
) -> Result:
    """List tasks, with owner and heartbeat age of each claim."""
    board = session.board()
    now = board.now()
    found = board.tasks(state=state, lane=lane, mine=mine, now=now)
    return Result(
        {"tasks": [t.to_json() for t in found], "now": now},
        "\n".join(task_line(t, now) for t in found) or "no tasks",
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
@common
def log(session: Session, as_json: bool, task_id: str | None) -> Result:
    """Print the event history, of one task or of the whole board."""
    events = session.board().log(_id(task_id) if task_id is not None else None)
    return Result(
        {"events": [e.to_json() for e in events]},
        "\n".join(event_line(e) for e in events) or "no events",
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
    wait_s = parse_duration(wait) if wait is not None else None
    board = session.board()
    if next_:
        got = board.claim_next(lane, writes=writes, reads=reads, stale_after=stale, wait=wait_s)
    else:
        got = board.claim(_id(task_id or ""), writes=writes, reads=reads, stale_after=stale)
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
@common
def unlock(
    session: Session, as_json: bool, patterns: tuple[str, ...], task_id: str | None
) -> Result:
    """Release your locks on PATTERN..., or every lock of --task ID."""
    if bool(patterns) == (task_id is not None):
        raise click.UsageError("give PATTERN... or --task ID")
    board = session.board()
    freed = board.unlock_task(_id(task_id)) if task_id else board.unlock(patterns)
    return Result(
        {"unlocked": [lk.to_json() for lk in freed]},
        "\n".join(f"unlocked: {lk.pattern}" for lk in freed) or "no locks to release",
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
    return run_guard(session, "pre-commit")


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
    return run_guard(session, "pre-push", remote=remote)


@cli.group(context_settings=CONTEXT)
def hooks() -> None:
    """Install or remove the native pre-commit and pre-push guard hooks."""


@hooks.command("install", context_settings=CONTEXT)
@click.option(
    "--force",
    is_flag=True,
    help="When a foreign hook and an old NAME.legacy both exist, replace the .legacy.",
)
@common
def hooks_install(session: Session, as_json: bool, force: bool) -> Result:
    """Write the guard hooks into the repository's hooks directory.

    The common hooks directory covers every linked worktree; core.hooksPath is
    honoured. A hook already there is kept as NAME.legacy and still runs first.
    Installing twice changes nothing.
    """
    from .hooks import install

    changes = install(session.repo, force=force)
    return Result(
        {"hooks": [vars(c) for c in changes]},
        "\n".join(f"{c.hook}: {c.action} ({c.path})" for c in changes),
    )


@hooks.command("uninstall", context_settings=CONTEXT)
@common
def hooks_uninstall(session: Session, as_json: bool) -> Result:
    """Remove the guard hooks, putting back any hook they had kept."""
    from .hooks import uninstall

    changes = uninstall(session.repo)
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
    holder and how long it had been silent. One keeper works a board at a time:
    a second one waits (or, with --once, says who holds it and exits 1).
    """
    from .liveness import run_keeper

    every = parse_duration(interval)
    stale = parse_stale(stale_after)
    expired = run_keeper(
        session.board(),
        once=once,
        interval=every,
        stale_after=stale,
        echo=lambda line: click.echo(line, err=as_json),
    )
    return Result({"expired": expired}, "" if expired else "keeper: nothing stale")


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
    from .reconcile import command

    return command(
        session, ref, base_rev=base_rev, dry_run=dry_run, abort=abort, continue_=continue_
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
        done = cli.main(args=list(argv), prog_name="git lac", standalone_mode=False)
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
