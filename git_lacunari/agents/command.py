"""The command every adapter installs: ``git-lac guard edit --harness NAME``
from PATH (never a path of the installing machine), wrapped so that a
git-lac that is missing or fails still refuses, in the harness's own block
form, with how to get out. LAC_GUARD=off lets the call through even then."""

from __future__ import annotations

import shlex


def uninstall_hint(agent: str, scope: str) -> str:
    return f"git lac hooks uninstall --agent {agent}" + (
        f" --scope {scope}" if scope != "project" else ""
    )


def fallback_line(agent: str, scope: str) -> str:
    """What the edit hook says when git-lac is not there or fails (``$s``: its exit)."""
    return (
        "git-lacunari: git-lac is not on PATH or could not run (exit $s): tool call refused. "
        "Install git-lacunari (pip install git-lacunari) so that git-lac is on PATH, "
        "set LAC_GUARD=off to skip the guard, or take the hook out: " + uninstall_hint(agent, scope)
    )


# The harness's block form for the fallback, MESSAGE in "$m": a line on
# stderr and exit 2 (Claude Code, Codex, Windsurf, Kiro, Qwen Code, Goose), or
# a JSON answer on stdout, exit 0 (the message holds no quote nor backslash).
EXIT_2 = 'echo "$m" >&2; exit 2'


def json_refusal(template: str) -> str:
    """A fallback that prints ``template`` (JSON with a ``%s`` for the message
    wherever it goes) on stdout, the message on stderr too, and exits 0."""
    args = ' "$m"' * template.count("%s")
    return f'printf {shlex.quote(template + chr(10))}{args}; echo "$m" >&2; exit 0'


def hook_command(
    agent: str, scope: str = "project", *, passes: str = "0|2", refuse: str = EXIT_2
) -> str:
    """The edit guard's command for the harness ``agent``: git-lac's own answer
    when it exits with one of ``passes`` (its answers in that harness's
    protocol), else ``refuse`` with the fallback line (1, a crash, 127 from a
    missing git-lac or interpreter)."""
    return (
        "s=127; command -v git-lac >/dev/null 2>&1 && "
        f"{{ git-lac guard edit --harness {agent}; s=$?; }}; "
        f"case $s in {passes}) exit $s;; esac; "
        "case ${LAC_GUARD-} in [Oo][Ff][Ff]|0|[Ff][Aa][Ll][Ss][Ee]|[Nn][Oo]) "
        'echo "git-lacunari: edit guard skipped (LAC_GUARD=off)" >&2; exit 0;; esac; '
        f'm="{fallback_line(agent, scope)}"; {refuse}'
    )


# What a harness runs when a session starts, to tell the agent how to work
# here (git_lacunari.agents.prime): git's own spelling, found on PATH.
PRIME_COMMAND = "git lac prime"


def is_ours(command: object) -> bool:
    """A command of ours, in any form we ever wrote (the old one named git-lac
    by an absolute path: ``'/venv/bin/git-lac' guard edit --harness NAME``)."""
    if not isinstance(command, str):
        return False
    if command.strip() == PRIME_COMMAND:
        return True
    return "git-lac" in command and (
        " guard edit --harness " in command or " guard probe --harness " in command
    )


def is_edit(command: object) -> bool:
    return is_ours(command) and " guard edit --harness " in str(command)
