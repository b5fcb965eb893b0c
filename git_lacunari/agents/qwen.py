"""Qwen Code, as ``@qwen-code/qwen-code`` 0.24.4 ships it (its bundle:
``packages/core/src/hooks`` in ``chunks/chunk-DPEB6S2R.js``; the tool names
in ``packages/core/src/tools/tool-names.ts``).

- file: ``.qwen/settings.json`` (or ``~/.qwen/settings.json``), ``"hooks"``
  in Claude Code's shape: ``{"PreToolUse": [{"matcher": M, "hooks":
  [{"type": "command", "command": C, "timeout": S}]}]}`` (``timeout`` in
  seconds; a large value is read as the older milliseconds). It runs the
  command through ``bash -c``, with ``QWEN_PROJECT_DIR``,
  ``GEMINI_PROJECT_DIR`` and ``CLAUDE_PROJECT_DIR`` the directory it runs in.
- stdin (``createBaseInput`` and ``firePreToolUseEvent``): ``session_id``,
  ``transcript_path``, ``cwd``, ``hook_event_name`` (``"PreToolUse"``),
  ``timestamp``, ``permission_mode``, ``tool_name``, ``tool_input``,
  ``tool_use_id``; ``cwd`` the project's root. The file tools
  ``write_file`` and ``edit`` ``{"file_path"}``, ``notebook_edit``
  ``{"notebook_path"}`` (absolute: the tools refuse a relative path before
  the hook runs); the shell ``run_shell_command`` ``{"command",
  "directory"}``, ``directory`` absolute, or resolved from the project's
  directory (``buildPermissionCheckContext``), the project root when absent.
  Seen running 0.24.4 against a stand-in model, too.
- refusal: exit 2, the reason on stderr (``isBlockingError = exitCode ===
  2``: stderr is the text it reads, plain text becomes ``{"decision":
  "deny", "reason": TEXT}``; the model gets exactly that text). Every other
  non-zero exit, a timeout or a spawn error is a non-blocking error that
  lets the call through, so the installed command turns every failure into
  exit 2. Allow: exit 0, nothing on stdout.
- trust: project hooks load only in a trusted folder; with folder trust off
  (the default) every folder is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .hook_json import HookFile
from .protocol import (
    EditRequest,
    Harness,
    Installed,
    SettingsChange,
    exit_2,
    exit_2_render,
    no_channel,
    parse_tool_call,
)

if TYPE_CHECKING:
    from pathlib import Path

HARNESS = Harness.QWEN
PROJECT_DIR: str | None = "QWEN_PROJECT_DIR"
EVENT = "PreToolUse"
FILE_TOOLS = {"write_file": "file_path", "edit": "file_path", "notebook_edit": "notebook_path"}
SHELL_TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "run_shell_command": ("command", ("directory",))
}
MATCHER = "^(write_file|edit|notebook_edit|run_shell_command)$"
TIMEOUT = 30  # seconds
SCOPES = {"project": ".qwen/settings.json", "user": "~/.qwen/settings.json"}
EVENTS = {EVENT}


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    request = parse_tool_call(data, HARNESS, default_cwd, FILE_TOOLS, SHELL_TOOLS)
    request.dir_from_project = True  # `directory` is resolved from the project's directory
    return request


render = exit_2_render


blocked = exit_2


def _spec() -> Any:
    from .hook_json import Spec

    return Spec(HARNESS, SCOPES, EVENT, 1.0)


_file = HookFile(_spec, EVENTS)
check = _file.check


def install(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    from .command import hook_command
    from .hook_json import install as merge

    edit = {"type": "command", "command": hook_command(HARNESS.value, scope), "timeout": TIMEOUT}
    return merge(_spec(), scope, top, backup_dir, {EVENT: {"matcher": MATCHER, "hooks": [edit]}})


uninstall = _file.uninstall


def entries(top: Path | None) -> tuple[list[Installed], list[str]]:
    from .hook_json import entries as found

    where = str(top) if top is not None else ""
    names = ("QWEN_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR")
    return found(_spec(), top, EVENTS, tuple((name, where) for name in names))


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    import os

    return [
        {
            "session_id": "lac-probe",
            "transcript_path": os.devnull,
            "cwd": str(top),
            "hook_event_name": EVENT,
            "timestamp": "1970-01-01T00:00:00.000Z",
            "permission_mode": "default",
            "tool_name": "write_file",
            "tool_input": {"file_path": str(top / rel), "content": ""},
            "tool_use_id": "lac-probe",
        }
    ]


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """Exit 2 denies, stderr the reason; exit 0 with a deny or block in the
    JSON on stdout denies; any other exit lets the call through."""
    import json

    from .session_probe import first_line

    if code == 2:
        return True, first_line(stderr)
    if code != 0 or not stdout.strip():
        return False, ""
    try:
        said = json.loads(stdout)
    except ValueError:
        return False, ""
    if not isinstance(said, dict):
        return False, ""
    specific = said.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
        return True, str(specific.get("permissionDecisionReason", ""))
    if said.get("decision") in ("deny", "block"):
        return True, str(said.get("reason", ""))
    return False, ""


# No field of its answer to an allowed call reaches the model: a refusal says a notice.
tell = no_channel
