"""The SessionStart probe Claude Code and Gemini CLI run (`git lac guard
probe`): whether the edit guard is on, told to the agent.

SessionStart (Claude Code: https://code.claude.com/docs/en/hooks,
"SessionStart", and claude_agent_sdk/types.py's SessionStartHookSpecificOutput;
Gemini CLI 0.61.0: docs/hooks/reference.md, "SessionStart", and its bundle's
getAdditionalContext): exit 0 with {"hookSpecificOutput": {"hookEventName":
"SessionStart", "additionalContext": TEXT}} puts TEXT before the agent, and
"systemMessage" shows a line to the user. It never blocks.
"""

from __future__ import annotations

import json
from typing import Any

from .command import uninstall_hint

START_EVENT = "SessionStart"
PROBES = ("claude-code", "gemini")  # the harnesses with a SessionStart probe


def probe_said(text: str, *, tell_user: bool) -> str:
    """SessionStart's answer: ``text`` for the agent (and the user)."""
    out: dict[str, Any] = {
        "hookSpecificOutput": {"hookEventName": START_EVENT, "additionalContext": text}
    }
    if tell_user:
        out["systemMessage"] = text
    return json.dumps(out)


def probe_command(agent: str, scope: str = "project") -> str:
    """The SessionStart probe's command: ``git lac guard probe``, from PATH;
    when it is missing or fails, the same news in the harness's own form."""
    import shlex

    off = probe_said(
        "git-lacunari edit guard: OFF: git-lac is not on PATH or could not run, so "
        f"the {agent} edit hook refuses every tool call it checks. Install "
        "git-lacunari (pip install git-lacunari), set LAC_GUARD=off to skip the guard, "
        f"or take the hooks out: {uninstall_hint(agent, scope)}",
        tell_user=True,
    )
    return (
        "s=127; command -v git-lac >/dev/null 2>&1 && "
        f"{{ git-lac guard probe --harness {agent}; s=$?; }}; "
        f"[ $s = 0 ] || printf '%s\\n' {shlex.quote(off)}; exit 0"
    )


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    line = lines[0] if lines else ""
    return line if len(line) <= 240 else line[:237] + "..."
