"""Gemini CLI (https://geminicli.com/docs/hooks/reference, "BeforeTool";
tools in https://geminicli.com/docs/tools/file-system and .../tools/shell).

- stdin: ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``
  (``"BeforeTool"``), ``timestamp``, ``tool_name``, ``tool_input``. The file
  tools: ``write_file`` and ``replace`` ``{"file_path"}``; the shell tool
  ``run_shell_command`` ``{"command", "dir_path"}``, ``dir_path`` resolved
  from the project root (``directory`` in older releases). Checked against
  ``@google/gemini-cli-core`` 0.61.0, what gemini-cli 0.61.0 bundles:
  ``dist/src/tools/definitions/base-declarations.js`` (``PARAM_FILE_PATH``,
  ``PARAM_DIR_PATH``, ``SHELL_TOOL_NAME``, ``WRITE_FILE_TOOL_NAME``,
  ``EDIT_TOOL_NAME``) and ``tools/shell.js`` (``path.resolve(
  config.getTargetDir(), params.dir_path)``). The hook runs with
  ``GEMINI_PROJECT_DIR`` (``hooks/hookRunner.js``).
- refusal: exit 0 with ``{"decision": "deny", "reason": R}`` on stdout (R is
  sent to the agent as the tool's error; 0.61.0's ``hooks/types.js``:
  ``isBlockingDecision()`` is ``decision === 'block' || decision === 'deny'``).
  stdout must hold nothing but the final JSON (``hooks/hookRunner.js`` parses
  ``stdout.trim() || stderr.trim()``), so letting a call through prints ``{}``.
  Exit 1 is "non-blocking" and lets the call through; every other non-zero
  exit denies (0.61.0's convertPlainTextToHookOutput).
- settings: ``.gemini/settings.json``, ``{"hooks": {"BeforeTool": [{"matcher":
  "write_file|replace", "hooks": [{"type": "command", "command": C, "name": N,
  "timeout": MS}]}]}}`` (``timeout`` in milliseconds); also
  ``~/.gemini/settings.json`` (no local scope). It runs the command through
  ``bash -c``, cwd and GEMINI_PROJECT_DIR the project root, CLAUDE_PROJECT_DIR
  as an alias.
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
    no_channel,
    parse_tool_call,
)

if TYPE_CHECKING:
    from pathlib import Path

HARNESS = Harness.GEMINI
PROJECT_DIR: str | None = "GEMINI_PROJECT_DIR"
EVENT = "BeforeTool"
FILE_TOOLS = {"write_file": "file_path", "replace": "file_path"}
SHELL_TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "run_shell_command": ("command", ("dir_path", "directory"))
}
MATCHER = "write_file|replace|run_shell_command"
TIMEOUT = 30000  # milliseconds
PROBE_TIMEOUT = 60000
HOOK_NAME = "git-lacunari"  # the `name` of the edit guard
PROBE_NAME = "git-lacunari-probe"  # ... and of the probe
SCOPES = {"project": ".gemini/settings.json", "user": "~/.gemini/settings.json"}
EVENTS = {EVENT, "SessionStart"}


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    request = parse_tool_call(data, HARNESS, default_cwd, FILE_TOOLS, SHELL_TOOLS)
    request.dir_from_project = True  # dir_path is resolved from the project root
    return request


def render(
    request: EditRequest | None,
    allowed: bool,
    reason: str,
    body: dict[str, Any] | None,
    notes: list[str],
) -> Answer:
    said: dict[str, str] = {} if allowed else {"decision": "deny", "reason": reason}
    return Answer(0, json.dumps(said), notes)


def blocked(request: EditRequest | None, reason: str, line: str) -> Answer:
    return Answer(0, json.dumps({"decision": "deny", "reason": reason}), [line])


def _spec() -> Any:
    from .hook_json import Spec

    return Spec(HARNESS, SCOPES, EVENT, 0.001)


def _ours(scope: str) -> dict[str, dict[str, Any]]:
    from .command import hook_command
    from .session_probe import probe_command

    edit: dict[str, Any] = {"type": "command", "command": hook_command(HARNESS.value, scope)}
    probe: dict[str, Any] = {"type": "command", "command": probe_command(HARNESS.value, scope)}
    edit["name"], probe["name"] = HOOK_NAME, PROBE_NAME
    edit["timeout"], probe["timeout"] = TIMEOUT, PROBE_TIMEOUT
    return {EVENT: {"matcher": MATCHER, "hooks": [edit]}, "SessionStart": {"hooks": [probe]}}


_file = HookFile(_spec, EVENTS)
check = _file.check


def install(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    from .hook_json import install as merge

    return merge(_spec(), scope, top, backup_dir, _ours(scope))


uninstall = _file.uninstall


def entries(top: Path | None) -> tuple[list[Installed], list[str]]:
    from .hook_json import entries as found

    where = str(top) if top is not None else ""
    env = (
        ("CLAUDE_PROJECT_DIR", where),
        ("GEMINI_PROJECT_DIR", where),
        ("GEMINI_CWD", where),
        ("GEMINI_SESSION_ID", "lac-probe"),
    )
    return found(_spec(), top, EVENTS, env)


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    import os

    return [
        {
            "session_id": "lac-probe",
            "transcript_path": os.devnull,
            "cwd": str(top),
            "hook_event_name": EVENT,
            "timestamp": "1970-01-01T00:00:00.000Z",
            "tool_name": "write_file",
            "tool_input": {"file_path": str(top / rel), "content": ""},
        }
    ]


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """Deny or block in the JSON (stdout, or stderr when stdout is empty)
    blocks, and so does any exit but 0 and 1."""
    from .session_probe import first_line

    said_text = stdout.strip() or stderr.strip()
    if code not in (0, 1):
        return True, f"exit {code}: {first_line(stderr)}"
    try:
        said = json.loads(said_text) if said_text else {}
    except ValueError:
        return False, ""
    if isinstance(said, dict) and said.get("decision") in ("deny", "block"):
        return True, str(said.get("reason", ""))
    return False, ""


# BeforeTool has no field that adds context to an allowed call (the
# reference and 0.61.0's BeforeToolHookOutput: tool_input only): a refusal says it.
tell = no_channel
