"""Edit time: `guard edit`, `hooks install --agent`, `mcp`, `wait`.
Declarations only; the bodies are in :mod:`git_lacunari.commands.agents`."""

from __future__ import annotations

from typing import Any

import click

from ..commands import agents as verbs
from ..edge import Result
from ..session import Session
from .options import CONTEXT, common, echo_to


@click.command("edit", context_settings=CONTEXT)
@click.option(
    "--harness",
    metavar="NAME",
    help="claude-code, gemini, codex, qwen, copilot (or vscode), cursor, windsurf, kiro, "
    "goose, cline, opencode, or generic (default: told by the payload itself).",
)
@common
def guard_edit_cmd(session: Session, as_json: bool, harness: str | None) -> Result:
    """What an agent harness runs before each tool call (the payload on stdin).

    Answers in the harness's own protocol (Claude Code's PreToolUse, Gemini
    CLI's BeforeTool, Codex's, Copilot's, ...: README, "Agents"), or the
    generic {"paths": [...], "cwd": DIR} (--json: the generic answer whatever
    the harness). Refuses a path another agent
    holds, naming holder and task and how to wait; what an undeclared path
    gets is lac.edit.undeclared (allow | lock | deny), what an agent with no
    claim gets lac.edit.unclaimed (allow | deny). Set up with `git lac hooks
    install --agent NAME`.
    """
    return verbs.guard_edit(session, as_json, harness)


@click.command("probe", context_settings=CONTEXT)
@click.option("--harness", metavar="NAME", required=True, help="claude-code or gemini.")
@common
def guard_probe_cmd(session: Session, as_json: bool, harness: str) -> Result:
    """What an agent harness runs at SessionStart: is the edit guard on?

    Runs each edit hook of git-lacunari in the harness's settings as the
    harness would, on a canary (LAC_PROBE_HELD: a path held by "lac-probe",
    nothing written to the board), and tells the agent, in the harness's
    form, "git-lacunari edit guard: on" or what is wrong. Always exit 0.
    Installed by `git lac hooks install --agent NAME`.
    """
    return verbs.guard_probe(session, harness)


@click.command("edit-helper", context_settings=CONTEXT, hidden=True)
@common
def guard_edit_helper_cmd(session: Session, as_json: bool) -> Result:
    """The edit hook's resident helper for this work tree (the hook starts it;
    it leaves by itself). Prints nothing; exit 0 when it is not needed."""
    return verbs.edit_helper(session)


def _agent_hooks(
    session: Session,
    as_json: bool,
    agents: tuple[str, ...],
    remove: bool,
    scope: str | None,
    mcp: bool,
) -> Result:
    return verbs.agent_hooks(session, agents, remove, scope, mcp)


def with_agent_options(command: click.Command, *, removing: bool) -> None:
    """`hooks install|uninstall --agent NAME`: the same verbs, for agent harnesses."""
    command.params += [
        click.Option(
            ["--agent", "agents"],
            multiple=True,
            metavar="NAME",
            help="The edit hook in an agent harness's settings: claude-code, gemini, codex, "
            "qwen, copilot (or vscode), cursor, windsurf, kiro, goose, cline, opencode.",
        ),
        click.Option(
            ["--scope"],
            type=click.Choice(["project", "local", "user"]),
            help="With --agent: which settings file (default: project; local is "
            "Claude Code's .claude/settings.local.json; user the home directory's).",
        ),
    ]
    if not removing:
        command.params.append(
            click.Option(["--uninstall"], is_flag=True, help="With --agent: take it out again.")
        )
        command.params.append(
            click.Option(
                ["--mcp"],
                is_flag=True,
                help="With --agent: also register `git lac mcp` in the harness's MCP file.",
            )
        )
    plain = command.callback
    assert plain is not None

    def callback(
        *,
        agents: tuple[str, ...],
        scope: str | None,
        uninstall: bool = False,
        mcp: bool = False,
        **kwargs: Any,
    ) -> Any:
        if not agents:
            if uninstall or scope or mcp:
                flag = "uninstall" if uninstall else "scope" if scope else "mcp"
                raise click.UsageError(f"--{flag} goes with --agent NAME")
            return plain(**kwargs)
        if any(kwargs.get(k) for k in ("force", "server", "global_ok")):
            raise click.UsageError("--agent takes no --force, --server or --global-hooks-path")
        run: Any = common(_agent_hooks)  # common() adds --json and --as
        return run(
            as_json=kwargs["as_json"],
            as_name=kwargs["as_name"],
            agents=agents,
            remove=removing or uninstall,
            scope=scope,
            mcp=mcp and not (removing or uninstall),
        )

    command.callback = callback


@click.command("mcp", context_settings=CONTEXT)
@common
def mcp_cmd(session: Session, as_json: bool) -> Result:
    """Serve the board as MCP tools over stdio (the official MCP SDK).

    The agent is this work tree's instance, as for `git lac` run here. Tools:
    claim, claim_next, lock, check, release, done, heartbeat, status, tasks,
    ready, show, wait. Needs the mcp extra: pip install 'git-lacunari[mcp]'.
    """
    return verbs.mcp(session)


@click.command("prime", context_settings=CONTEXT)
@common
def prime_cmd(session: Session, as_json: bool) -> Result:
    """How to work here, for an agent starting: claim, what a refusal means,
    wait, done, land, and the version `git lac --version` prints.

    What Claude Code's SessionStart hook runs (`git lac hooks install --agent
    claude-code` puts it there): its stdout becomes the agent's context. It
    ignores stdin and needs no board. --json: one object, the same words.
    """
    return verbs.prime(session)


@click.command("wait", context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--timeout", metavar="D", help="Give up after D (5, 30s, 2m): exit 1.")
@click.option(
    "--lock",
    "take",
    is_flag=True,
    help="Take write locks on them as they free (at most 256 paths).",
)
@click.option("--task", "task_id", metavar="ID", help="With --lock: under this claim of mine.")
@common
def wait_cmd(
    session: Session,
    as_json: bool,
    paths: tuple[str, ...],
    timeout: str | None,
    take: bool,
    task_id: str | None,
) -> Result:
    """Block until no other agent holds PATH...: exit 0 when free, 1 on timeout.

    LISTEN/NOTIFY on PostgreSQL, a bounded poll on SQLite. With --lock the
    locks are taken the moment the paths free, in one grant, oldest waiter first.
    """
    return verbs.wait(session, paths, timeout, take, task_id, echo_to(err=True))
