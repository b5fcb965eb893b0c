"""Edit time, click-free: the edit hook, harness settings, MCP, wait."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..edge import Result
from ..errors import InvalidInput
from ..session import Session
from ..text import shown


def guard_edit(session: Session, as_json: bool, harness: str | None) -> Result:
    """The hook through the full command line (entry.py answers the plain
    forms itself): its stdout printed here, its notes and refusal as the edge's."""
    from ..edit_guard import guard_edit as answer
    from ..edit_guard import read_payload

    if session.as_name is not None:  # as LAC_AGENT: the helper's key and the identity
        os.environ["LAC_AGENT"] = session.as_name
    said = answer(harness, read_payload(), os.getcwd(), as_json=as_json)
    if said.code == 2:  # a harness's block form (Claude Code): exit 2, the line its reason
        raise InvalidInput(said.stderr[0].removeprefix("git lac: "))
    if said.stdout:
        print(said.stdout, flush=True)
    refused = [line for line in said.stderr if line.startswith("refused: ")]
    notes = [line for line in said.stderr if not line.startswith("refused: ")]
    return Result(shown=True, warnings=notes, unfinished=refused[0] if said.code else None)


def guard_probe(session: Session, harness_name: str) -> Result:
    """The SessionStart hook: whether the edit guard is on, in the harness's
    form for the agent (and, when it is not, a line for the user). Exit 0."""
    import json

    from ..agent_probe import guard_state
    from ..agents.registry import HARNESS_NAMES
    from ..agents.session_probe import PROBES, probe_said

    harness = HARNESS_NAMES.get(harness_name.lower())
    if harness is None or harness.value not in PROBES:
        raise InvalidInput(f"unknown harness {harness_name!r}; use one of {', '.join(PROBES)}")
    text = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    try:
        given = json.loads(text) if text.strip() else {}
    except ValueError:
        given = {}
    cwd = given.get("cwd") if isinstance(given, dict) else None
    if not isinstance(cwd, str) or not os.path.isdir(cwd):
        cwd = os.getcwd()
    on, said = guard_state(harness, cwd)
    print(probe_said(said, tell_user=not on), flush=True)
    return Result(shown=True)


def edit_helper(session: Session) -> Result:
    from ..edit_server import serve
    from ..errors import CannotWorkHere

    if serve(os.getcwd()):
        raise CannotWorkHere("no work tree here, or the helper is off (LAC_EDIT_HELPER)")
    return Result({"served": True}, "")


def agent_hooks(
    session: Session,
    agents: tuple[str, ...],
    remove: bool,
    scope: str | None = None,
    mcp: bool = False,
) -> Result:
    """Install or remove the edit hook (and what tells the agent how to work:
    the SessionStart hooks, the AGENTS.md section) in each agent harness's
    settings of one scope (default: the project's); with ``mcp``, `git lac
    mcp` in its MCP file too. Uninstall takes out all of it."""
    from ..agents.mcp_files import FILES
    from ..agents.prime import READ_AGENTS_MD
    from ..agents.registry import (
        HARNESS_NAMES,
        INSTALLABLE,
        SCOPE_NAMES,
        UNGUARDED,
        UNGUARDED_WHY,
        adapter,
    )

    scope = scope or "project"
    if scope not in SCOPE_NAMES:
        raise InvalidInput(f"unknown scope {scope!r}; use one of {', '.join(SCOPE_NAMES)}")
    chosen = []
    for name in agents:
        if name.lower() in UNGUARDED:
            raise InvalidInput(
                f"{UNGUARDED[name.lower()]} has no hook git-lacunari can install: {UNGUARDED_WHY} "
                "(git lac hooks install; git lac mcp); nothing was changed"
            )
        harness = HARNESS_NAMES.get(name.lower())
        if harness is None or harness.value not in INSTALLABLE:
            raise InvalidInput(f"unknown agent {name!r}; supported: {', '.join(INSTALLABLE)}")
        scopes = adapter(harness).SCOPES
        if scope not in scopes:
            has = " and ".join(scopes)
            raise InvalidInput(
                f"{harness.value} has no {scope} scope (it reads {has} settings): "
                f"use --scope {' or --scope '.join(scopes)}; nothing was changed"
            )
        if mcp and harness.value not in FILES:
            raise InvalidInput(
                f"--mcp: no MCP file is known for {harness.value} (known: {', '.join(FILES)}); "
                "nothing was changed"
            )
        chosen.append(harness)
    if mcp and scope != "project":
        raise InvalidInput("--mcp registers the server in the project's files: drop --scope")
    top = None if scope == "user" else session.repo.toplevel
    backups = _backups(session, scope)
    unique = list(dict.fromkeys(chosen))
    for harness in unique:  # every file readable before any is written
        adapter(harness).check(scope, top)
        if mcp and top is not None:
            from ..agents.mcp_files import check

            check(harness.value, top)
    changes, servers, context = [], [], []
    for h in unique:
        if remove:
            servers += _mcp_out(h.value, top, backups)
            changes.append(adapter(h).uninstall(scope, top, backups))
        else:
            changes.append(adapter(h).install(scope, top, backups))
            if mcp and top is not None:
                from ..agents.mcp_files import install as register

                servers.append(register(h.value, top, backups))
    reads_agents_md = any(h.value in READ_AGENTS_MD for h in unique)
    if scope == "project" and top is not None and reads_agents_md:
        context.append(_agents_md(top, backups, remove, unique))
    body: dict[str, Any] = {"agents": [c._asdict() for c in changes]}
    if servers or mcp:
        body["mcp"] = [c._asdict() for c in servers]
    if context:
        body["agents_md"] = context[0]._asdict()
    return Result(
        body, "\n".join(f"{c.harness}: {c.action} ({c.path})" for c in changes + servers + context)
    )


def _mcp_out(agent: str, top: Path | None, backups: Path) -> list[Any]:
    """Uninstall takes our MCP server out too, if it is there (said only then)."""
    from ..agents.mcp_files import FILES, uninstall

    if top is None or agent not in FILES:
        return []
    change = uninstall(agent, top, backups)
    return [change] if change.action != "absent" else []


def _agents_md(top: Path, backups: Path, remove: bool, touched: list[Any]) -> Any:
    """The AGENTS.md section: in when one harness that reads it is set up;
    out when the last of them goes."""
    from ..agents.prime import READ_AGENTS_MD, install_agents_md, uninstall_agents_md
    from ..agents.registry import HARNESS_NAMES, INSTALLABLE, adapter

    if not remove:
        return install_agents_md(top, backups)
    for name in READ_AGENTS_MD:
        harness = HARNESS_NAMES.get(name)
        if harness is None or name not in INSTALLABLE:
            continue
        still, _troubles = adapter(harness).entries(top)
        if any(e.scope == "project" for e in still):
            from ..agents.protocol import SettingsChange

            return SettingsChange("agents-md", str(top / "AGENTS.md"), "kept", "project")
    return uninstall_agents_md(top, backups)


def _backups(session: Session, scope: str) -> Path:
    """Where the settings file as install found it is kept: this repository's
    git dir for its own scopes, the user's state directory for ~/."""
    if scope != "user":
        return session.repo.git_dir / "lacunari" / "agent-settings"
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(state) / "git-lacunari" / "agent-settings"


def prime(session: Session) -> Result:
    """`git lac prime`: the words, as text and as one JSON object."""
    from ..agents.prime import words

    said = words()
    return Result(said, said["text"])


def mcp(session: Session) -> Result:
    from ..errors import CannotWorkHere

    session.repo  # noqa: B018 - not a repository: exit 3 before the server starts
    try:
        from ..mcp_server import serve
    except ImportError as exc:
        missing = (exc.name or "mcp").split(".")[0]
        raise CannotWorkHere(
            f"git lac mcp needs the mcp extra ({missing} is missing): "
            "pip install 'git-lacunari[mcp]'"
        ) from None
    serve()
    return Result(shown=True)


def wait(
    session: Session,
    paths: tuple[str, ...],
    timeout: str | None,
    take: bool,
    task_id: str | None,
    echo: Callable[[str], Any],
) -> Result:
    from ..durations import format_duration, parse_duration
    from ..wait import wait_for_paths
    from .task import task_id as parse_task_id

    seconds = parse_duration(timeout) if timeout is not None else None
    if task_id is not None and not take:
        raise InvalidInput("--task goes with --lock")
    task = parse_task_id(task_id) if task_id is not None else None
    board = session.board()

    def told(conflicts: list[Any]) -> None:
        echo("waiting: " + "; ".join(dict.fromkeys(c.message for c in conflicts[:3])))

    waited = wait_for_paths(board, paths, timeout=seconds, lock=take, task_id=task, on_wait=told)
    if waited.in_line:
        return Result(
            waited.to_json(), unfinished="the wait ran out in line behind an older waiter"
        )
    verb = "locked" if take else "free"
    said = f"{verb}: {shown(' '.join(waited.paths))} (waited {format_duration(waited.waited)})"
    if waited.finished:  # their work is what the paths were held for: bring it in first
        one = len(waited.finished) == 1
        tasks = ", ".join(f"#{t}" for t in waited.finished)
        said += (
            f"\n{'task' if one else 'tasks'} {tasks} finished meanwhile: bring "
            f"{'its' if one else 'their'} work into your branch before you change these paths "
            "(e.g. git pull --rebase, once it has landed)"
        )
    return Result(waited.to_json(), said)
