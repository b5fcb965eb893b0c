"""GitHub Copilot CLI and the VS Code agent: one hook file, three payload
forms, each answered in its own form.

**Copilot CLI** (https://docs.github.com/en/copilot/reference/hooks-configuration
and .../copilot-cli-reference/cli-hooks-reference; ``@github/copilot``
1.0.102 keeps its hook runner in a native module, so what it does was seen
running it against a stand-in model):

- file: any ``.github/hooks/*.json``; ours is ``.github/hooks/git-lacunari.json``:
  ``{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": C,
  "timeoutSec": S}]}}`` (no matcher: every tool call; ``timeoutSec`` in
  seconds, default 30).
- stdin: ``{"sessionId", "timestamp", "cwd", "toolName", "toolArgs"}``,
  ``toolArgs`` the tool's arguments: an object in 1.0.102, a JSON string as
  the documentation gives it (both are read). The file tools ``edit`` and
  ``create`` ``{"path"}`` (relative to ``cwd``, or absolute); the shell
  ``bash`` ``{"command"}``, run in ``cwd``. The hook runs with
  ``COPILOT_PROJECT_DIR`` and ``CLAUDE_PROJECT_DIR`` the project's
  directory, cwd that directory.
- refusal: exit 0 with ``{"permissionDecision": "deny",
  "permissionDecisionReason": R}`` on stdout; letting a call through is
  exit 0 and nothing (never ``"allow"``, which would skip the user's own
  approval). Any non-zero exit is a refusal too ("hook errored", no reason
  shown), a timeout lets the call through; the installed command turns every
  failure of git-lac into the deny with its reason.
- trust: the hooks of a folder Copilot CLI does not trust are not loaded
  (``~/.copilot/config.json`` ``trustedFolders``, or ``--trust-folder``).
- Its Claude-compatible form (``hook_event_name`` ``"PreToolUse"``,
  ``tool_name`` ``Bash`` / ``Edit`` / ``Create``, ``tool_input`` with the
  same fields) is answered as Claude Code is answered:
  ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "deny", "permissionDecisionReason": R}}``.

**VS Code agent** (https://code.visualstudio.com/docs/agents/reference/hooks-reference):
it reads the same ``.github/hooks/*.json`` (Copilot CLI's format, its
``bash`` command on Linux and macOS) and sends ``hookEventName``
``"PreToolUse"``, ``cwd``, ``tool_name``, ``tool_input``, ``tool_use_id``;
the edit tool ``editFiles`` ``{"files": [P, ...]}``. It refuses on exit 0
with ``hookSpecificOutput.permissionDecision`` ``"deny"``.

A payload not of any of these forms, or a failure, is refused with every
form's keys at once, so whichever reads it denies.
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
    MalformedPayload,
    SettingsChange,
    no_channel,
    obj,
    parse_tool_call,
    text,
)

if TYPE_CHECKING:
    from pathlib import Path

HARNESS = Harness.COPILOT
PROJECT_DIR: str | None = "COPILOT_PROJECT_DIR"
EVENT = "preToolUse"
FILE_TOOLS = {"edit": "path", "create": "path"}
SHELL_TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {"bash": ("command", ())}
# The Claude-compatible form names the same tools as Claude Code does.
PASCAL_FILE_TOOLS = {"Edit": "path", "Create": "path", "Write": "path", **FILE_TOOLS}
PASCAL_SHELL_TOOLS = {"Bash": ("command", ()), **SHELL_TOOLS}
VSCODE_LIST_TOOLS = {"editFiles": "files"}
TIMEOUT = 30  # seconds
SCOPES = {"project": ".github/hooks/git-lacunari.json"}
EVENTS = {EVENT}
CAMEL, CLAUDE_FORM, VSCODE = "copilot", "PreToolUse", "vscode"


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    if "toolName" in data:
        return _camel(data, default_cwd)
    if data.get("hookEventName") == "PreToolUse":
        request = EditRequest(HARNESS, text(data.get("cwd", default_cwd), "cwd"))
        request.form = VSCODE
        request.tool = text(data.get("tool_name"), "tool_name")
        tool_input = obj(data.get("tool_input"), "tool_input")
        field_name = VSCODE_LIST_TOOLS.get(request.tool)
        if field_name is not None:
            files = tool_input.get(field_name)
            if not isinstance(files, list) or not files:
                raise MalformedPayload(f"tool_input.{field_name} is not a list of paths")
            request.paths = [text(f, f"a path in tool_input.{field_name}") for f in files]
            return request
        return _tool_call(data, default_cwd, VSCODE)
    if data.get("hook_event_name") == "PreToolUse":
        request = parse_tool_call(data, HARNESS, default_cwd, PASCAL_FILE_TOOLS, PASCAL_SHELL_TOOLS)
        request.form = CLAUDE_FORM
        return request
    raise MalformedPayload("not a Copilot CLI (toolName) nor a VS Code (hookEventName) payload")


def _tool_call(data: dict[str, Any], default_cwd: str, form: str) -> EditRequest:
    request = parse_tool_call(data, HARNESS, default_cwd, FILE_TOOLS, SHELL_TOOLS)
    request.form = form
    return request


def _camel(data: dict[str, Any], default_cwd: str) -> EditRequest:
    args = data.get("toolArgs")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            raise MalformedPayload("toolArgs is not JSON") from None
    converted = {"cwd": data.get("cwd", default_cwd), "tool_name": data["toolName"]}
    converted["tool_input"] = args if args is not None else {}
    request = _converted(converted, default_cwd)
    request.form = CAMEL
    return request


def _converted(data: dict[str, Any], default_cwd: str) -> EditRequest:
    try:
        return parse_tool_call(data, HARNESS, default_cwd, FILE_TOOLS, SHELL_TOOLS)
    except MalformedPayload as exc:  # named as Copilot CLI names its fields
        said = str(exc).replace("tool_input", "toolArgs").replace("tool_name", "toolName")
        raise MalformedPayload(said) from None


def _deny(form: str, reason: str) -> dict[str, Any]:
    specific = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
    camel = {"permissionDecision": "deny", "permissionDecisionReason": reason}
    if form == CAMEL:
        return camel
    if form in (VSCODE, CLAUDE_FORM):
        return specific
    return {**camel, **specific}


def render(
    request: EditRequest | None,
    allowed: bool,
    reason: str,
    body: dict[str, Any] | None,
    notes: list[str],
) -> Answer:
    said = [n for n in notes if not n.startswith("refused: ")]
    if allowed:
        return Answer(0, "", said)
    form = request.form if request is not None else ""
    return Answer(0, json.dumps(_deny(form, reason)), [f"refused: {reason}", *said])


def blocked(request: EditRequest | None, reason: str, line: str) -> Answer:
    form = request.form if request is not None else ""
    return Answer(0, json.dumps(_deny(form, reason)), [line])


def _spec() -> Any:
    from .hook_json import Spec

    return Spec(HARNESS, SCOPES, EVENT, 1.0, "timeoutSec", {"version": 1})


_file = HookFile(_spec, EVENTS)
check = _file.check


def fallback() -> str:
    from .command import json_refusal

    template = json.dumps(_deny("", "%s"))
    return json_refusal(template)


def install(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    from .command import hook_command
    from .hook_json import install as merge

    command = hook_command(HARNESS.value, scope, passes="0", refuse=fallback())
    entry = {"type": "command", "bash": command, "timeoutSec": TIMEOUT}
    return merge(_spec(), scope, top, backup_dir, {EVENT: entry})


uninstall = _file.uninstall


def entries(top: Path | None) -> tuple[list[Installed], list[str]]:
    from .hook_json import entries as found

    where = str(top) if top is not None else ""
    env = (("COPILOT_PROJECT_DIR", where), ("CLAUDE_PROJECT_DIR", where), ("COPILOT_CLI", "1"))
    return found(_spec(), top, EVENTS, env)


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    """Copilot CLI's payload, and VS Code's."""
    args = json.dumps({"path": str(top / rel), "file_text": ""})
    return [
        {"timestamp": 0, "cwd": str(top), "toolName": "create", "toolArgs": args},
        {
            "timestamp": "1970-01-01T00:00:00.000Z",
            "hookEventName": "PreToolUse",
            "sessionId": "lac-probe",
            "transcript_path": "",
            "cwd": str(top),
            "tool_name": "editFiles",
            "tool_input": {"files": [str(top / rel)]},
            "tool_use_id": "lac-probe",
        },
    ]


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """Exit 0 with permissionDecision deny (Copilot CLI: at the top; VS Code:
    in hookSpecificOutput) blocks; Copilot CLI 1.0.102 also refuses on any
    other exit, without the reason ("hook errored")."""
    if code != 0:
        return True, f"exit {code}: hook errored"
    if not stdout.strip():
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
    if said.get("permissionDecision") == "deny":
        return True, str(said.get("permissionDecisionReason", ""))
    return False, ""


# No field of its answer to an allowed call reaches the model: a refusal says a notice.
tell = no_channel
