"""`git lac serve`."""

from __future__ import annotations

import click

from ..commands import serve as verb
from ..edge import Result
from ..session import Session
from .options import CONTEXT, INT, AsciiIntRange, common, echo_to


@click.command("serve", context_settings=CONTEXT)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=INT,
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
    help="Require TOKEN on every request (--allow-actions or a non-loopback --host "
    "makes one if not given).",
)
@click.option(
    "--max-clients",
    default=100,
    show_default=True,
    type=AsciiIntRange(min=1),
    help="Most pages streaming at once; more are told to retry.",
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
    max_clients: int,
) -> Result:
    """Serve the live board page until Ctrl-C.

    One page shows the lanes, each claim with its holder, instance, heartbeat
    and a stale warning, why open tasks are blocked, the path locks as a tree,
    a task's timeline, filters, and counts. Changes appear within a second,
    pushed from one watcher per server (LISTEN/NOTIFY on PostgreSQL, PRAGMA
    data_version on SQLite); pages never poll the board. Read-only unless
    --allow-actions: then each action is done as this agent and recorded with
    the name the person types on the page. Loopback by default; actions, or
    any other --host, need a token (--token, or one made and printed once).
    Read-only pages cannot write; in team mode they read as the board's reader
    role where the login may, else as the agent itself. With --json, one
    object is printed as soon as the server listens (its url); the stop is
    told by the exit code. Needs the web extra: pip install
    'git-lacunari[web]' (exit 3 without it).
    """
    return verb.serve(
        session,
        host=host,
        port=port,
        open_browser=open_browser,
        allow_actions=allow_actions,
        token=token,
        echo=echo_to(err=True),
        as_json=as_json,
        max_clients=max_clients,
    )
