"""Claude Code (https://code.claude.com/docs/en/hooks, "PreToolUse"; the same
shapes as the Agent SDK's ``PreToolUseHookInput`` and
``PreToolUseHookSpecificOutput`` in ``claude_agent_sdk/types.py``).

- stdin: ``session_id``, ``transcript_path``, ``cwd``, ``permission_mode``,
  ``hook_event_name`` (``"PreToolUse"``), ``tool_name``, ``tool_input``,
  ``tool_use_id``. The file tools' ``tool_input``: ``Write`` and ``Edit``
  ``{"file_path"}``, ``NotebookEdit`` ``{"notebook_path"}``; the shells
  ``Bash`` and ``PowerShell`` ``{"command"}`` (run in ``cwd``). Checked
  against Claude Code 2.1.197 as shipped (``npm pack
  @anthropic-ai/claude-code-linux-x64@2.1.197``: the tool names in its
  binary, ``sdk-tools.d.ts`` for the inputs; PowerShell's schema is
  ``strictObject({command, timeout, description, run_in_background})``).
  ``MultiEdit`` ``{"file_path", "edits"}`` is gone from 2.1.197 and kept for
  older releases. The hook runs with ``CLAUDE_PROJECT_DIR``, the project's
  directory: whose agent is asking.
- refusal: exit 0 with ``{"hookSpecificOutput": {"hookEventName":
  "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason":
  R}}`` on stdout (R is shown to Claude). We never answer ``"allow"``: that
  would skip the user's own permission prompt; letting an edit through is
  exit 0 with nothing on stdout. Exit 2 also blocks, with stderr as the
  reason: that is how a payload not of this shape, a bad setting or a
  failure refuses; any other non-zero exit is a warning that lets the call
  through, so the installed command turns every failure into exit 2.
- settings: ``.claude/settings.json``, ``{"hooks": {"PreToolUse": [{"matcher":
  "Write|Edit", "hooks": [{"type": "command", "command": C, "timeout": S}]}]}}``
  (``matcher`` a regex over the tool name; ``timeout`` in seconds); also
  ``.claude/settings.local.json`` and ``~/.claude/settings.json``.
- SessionStart (``claude_agent_sdk/types.py``'s
  SessionStartHookSpecificOutput): exit 0 with ``{"hookSpecificOutput":
  {"hookEventName": "SessionStart", "additionalContext": TEXT}}`` puts TEXT
  before the agent, ``"systemMessage"`` shows a line to the user. Our probe
  (`git lac guard probe`) says there whether the edit guard is on.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .hook_json import HookFile
from .protocol import (
    Answer,
    EditRequest,
    Harness,
    Installed,
    SettingsChange,
    exit_2,
    parse_tool_call,
)

if TYPE_CHECKING:
    from pathlib import Path

HARNESS = Harness.CLAUDE
PROJECT_DIR: str | None = "CLAUDE_PROJECT_DIR"
EVENT = "PreToolUse"
FILE_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
SHELL_TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "Bash": ("command", ()),
    "PowerShell": ("command", ()),
}
MATCHER = "Write|Edit|MultiEdit|NotebookEdit|Bash|PowerShell"
TIMEOUT = 30  # seconds
PROBE_TIMEOUT = 60
PRIME_TIMEOUT = 30  # seconds: prime reads no board, it answers at once
# Claude Code reads all three, and keeps settings.local.json out of git itself.
SCOPES = {
    "project": ".claude/settings.json",
    "local": ".claude/settings.local.json",
    "user": "~/.claude/settings.json",
}


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    return parse_tool_call(data, HARNESS, default_cwd, FILE_TOOLS, SHELL_TOOLS)


def render(
    request: EditRequest | None,
    allowed: bool,
    reason: str,
    body: dict[str, Any] | None,
    notes: list[str],
) -> Answer:
    if allowed:
        return Answer(0, "", notes)
    out = {
        "hookSpecificOutput": {
            "hookEventName": EVENT,
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
    return Answer(0, json.dumps(out), notes)


def tell(
    request: EditRequest | None, context: str, body: dict[str, Any], notes: list[str]
) -> Answer:
    """An allowed edit with a notice for the model: ``additionalContext`` and
    no ``permissionDecision``, so the user's own prompt still asks (the
    CHANGELOG of 2.1.9: "Added support for PreToolUse hooks to return
    additionalContext to the model"; 2.1.197's hook output schema has
    ``permissionDecision``, ``permissionDecisionReason``, ``updatedInput``
    and ``additionalContext``, each optional)."""
    told = {"hookEventName": EVENT, "additionalContext": context}
    return Answer(0, json.dumps({"hookSpecificOutput": told}), notes)


blocked = exit_2


def _spec() -> Any:
    from .hook_json import Spec

    return Spec(HARNESS, SCOPES, EVENT, 1.0)


def _ours(scope: str) -> dict[str, dict[str, Any]]:
    from .command import PRIME_COMMAND, hook_command
    from .session_probe import probe_command

    edit: dict[str, Any] = {
        "type": "command",
        "command": hook_command(HARNESS.value, scope),
        "timeout": TIMEOUT,
    }
    probe: dict[str, Any] = {"type": "command", "command": probe_command(HARNESS.value, scope)}
    probe["timeout"] = PROBE_TIMEOUT
    # How to work here (`git lac prime`): its stdout is put before the agent.
    prime: dict[str, Any] = {"type": "command", "command": PRIME_COMMAND, "timeout": PRIME_TIMEOUT}
    # SessionStart without a matcher: every start (new, resumed, cleared, compacted).
    return {
        EVENT: {"matcher": MATCHER, "hooks": [edit]},
        "SessionStart": {"hooks": [probe, prime]},
    }


EVENTS = {EVENT, "SessionStart"}


_file = HookFile(_spec, EVENTS)
check = _file.check


def install(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    from .hook_json import install as merge

    return merge(_spec(), scope, top, backup_dir, _ours(scope))


uninstall = _file.uninstall


def entries(top: Path | None) -> tuple[list[Installed], list[str]]:
    from .hook_json import entries as found

    where = str(top) if top is not None else ""
    return found(_spec(), top, EVENTS, (("CLAUDE_PROJECT_DIR", where),))


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    import os

    return [
        {
            "session_id": "lac-probe",
            "transcript_path": os.devnull,
            "cwd": str(top),
            "permission_mode": "default",
            "hook_event_name": EVENT,
            "tool_name": "Write",
            "tool_input": {"file_path": str(top / rel), "content": ""},
            "tool_use_id": "lac-probe",
        }
    ]


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """Exit 2 blocks (stderr the reason); exit 0 with permissionDecision deny
    blocks; any other exit is a warning and the call goes through."""
    from .session_probe import first_line

    if code == 2:
        return True, f"exit 2: {first_line(stderr)}"
    if code != 0:
        return False, ""
    try:
        said = json.loads(stdout) if stdout.strip() else {}
    except ValueError:
        return False, ""
    specific = said.get("hookSpecificOutput") if isinstance(said, dict) else None
    if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
        return True, str(specific.get("permissionDecisionReason", ""))
    return False, ""
