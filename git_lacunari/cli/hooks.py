"""`git lac hooks install | uninstall`."""

from __future__ import annotations

import click

from ..commands import hooks as verbs
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common


@click.group("hooks", context_settings=CONTEXT)
def hooks() -> None:
    """Install or remove the native guard hooks (pre-commit, pre-push, pre-merge-commit,
    and post-commit and commit-msg, which never refuse; pre-receive and post-receive on a
    server)."""


@hooks.command("install", context_settings=CONTEXT)
@click.option(
    "--force",
    is_flag=True,
    help="When a foreign hook and an old NAME.legacy both exist, replace the .legacy.",
)
@click.option(
    "--server", is_flag=True, help="In a bare repository: the pre-receive and post-receive hooks."
)
@click.option(
    "--global-hooks-path",
    "global_ok",
    is_flag=True,
    help="Install into a core.hooksPath from the global or system config (every repository).",
)
@click.option(
    "--deny-non-fast-forwards",
    "deny_rewinds",
    is_flag=True,
    help="With --server: also set receive.denyNonFastForwards (git refuses every rewind).",
)
@common
def hooks_install(
    session: Session,
    as_json: bool,
    force: bool,
    server: bool,
    global_ok: bool,
    deny_rewinds: bool,
) -> Result:
    """Write the guard hooks into the repository's hooks directory.

    The common hooks directory covers every linked worktree; core.hooksPath is
    honoured. A hook already there is kept as NAME.legacy and still runs first.
    Installing twice changes nothing. With --server: pre-receive, and
    receive.advertisePushOptions for `git push -o lac.agent=NAME`; on a
    PostgreSQL board it records the board that judges pushes as lac.board.
    """
    return verbs.install(session, force, server, global_ok, deny_rewinds)


@hooks.command("uninstall", context_settings=CONTEXT)
@click.option(
    "--server", is_flag=True, help="In a bare repository: the pre-receive and post-receive hooks."
)
@common
def hooks_uninstall(session: Session, as_json: bool, server: bool) -> Result:
    """Remove the guard hooks, putting back any hook they had kept."""
    return verbs.uninstall(session, server)


# Edit time: `--agent NAME`, the edit hook in a harness's settings.
from .agents import with_agent_options  # noqa: E402

with_agent_options(hooks_install, removing=False)
with_agent_options(hooks_uninstall, removing=True)
