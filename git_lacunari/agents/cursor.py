"""Cursor (https://cursor.com/docs/agent/hooks; Cursor is not on a package
registry, so its documentation is what is followed).

- file: ``.cursor/hooks.json`` (or ``~/.cursor/hooks.json``): ``{"version":
  1, "hooks": {EVENT: [{"command": C, "matcher": M, "failClosed": B}]}}``.
  ``failClosed`` true: a hook that fails, times out or prints nothing usable
  blocks the action. We set it on both of our entries, and leave Cursor's own
  timeout.
- ``preToolUse``: ``hook_event_name``, ``conversation_id``,
  ``generation_id``, ``workspace_roots``, ``tool_name``, ``tool_input``; the
  file tools ``Write``, ``StrReplace`` and ``Delete``, their path in
  ``tool_input.file_path`` (or ``path``), relative to the first workspace
  root.
- ``beforeShellExecution``: the same common fields and ``command``, ``cwd``.
- answer (both events): ``{"permission": "deny", "agent_message": R,
  "user_message": R}`` on stdout refuses (R shown to the agent and the
  user); letting a call through prints ``{}`` (under ``failClosed``, no
  output at all would block).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .hook_json import HookFile
from .protocol import (
    Answer,
    EditRequest,
    Harness,
    MalformedPayload,
    SettingsChange,
    no_channel,
    obj,
    text,
)

if TYPE_CHECKING:
    from pathlib import Path

HARNESS = Harness.CURSOR
PROJECT_DIR: str | None = None
EVENT = "preToolUse"
SHELL_EVENT = "beforeShellExecution"
FILE_TOOLS = ("Write", "StrReplace", "Delete")
MATCHER = "Write|StrReplace|Delete"
SCOPES = {"project": ".cursor/hooks.json", "user": "~/.cursor/hooks.json"}
EVENTS = {EVENT, SHELL_EVENT}


def _cwd(data: dict[str, Any], default_cwd: str) -> str:
    given = data.get("cwd")
    if given is None:
        roots = data.get("workspace_roots")
        given = roots[0] if isinstance(roots, list) and roots else default_cwd
    return text(given, "cwd")


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    event = data.get("hook_event_name")
    request = EditRequest(HARNESS, _cwd(data, default_cwd))
    if event == SHELL_EVENT:
        request.tool = "shell"
        request.shell = text(data.get("command"), "command")
        return request
    if event != EVENT:
        raise MalformedPayload(f"hook_event_name is not {EVENT} or {SHELL_EVENT}")
    request.tool = text(data.get("tool_name"), "tool_name")
    tool_input = obj(data.get("tool_input"), "tool_input")
    if request.tool in FILE_TOOLS:
        key = "file_path" if tool_input.get("file_path") is not None else "path"
        request.paths = [text(tool_input.get(key), f"tool_input.{key}")]
    return request


def _deny(reason: str) -> str:
    return json.dumps({"permission": "deny", "agent_message": reason, "user_message": reason})


def render(
    request: EditRequest | None,
    allowed: bool,
    reason: str,
    body: dict[str, Any] | None,
    notes: list[str],
) -> Answer:
    said = [n for n in notes if not n.startswith("refused: ")]
    if allowed:
        return Answer(0, "{}", said)
    return Answer(0, _deny(reason), [f"refused: {reason}", *said])


def blocked(request: EditRequest | None, reason: str, line: str) -> Answer:
    return Answer(0, _deny(reason), [line])


def _spec() -> Any:
    from .hook_json import Spec

    return Spec(HARNESS, SCOPES, EVENT, 1.0, "timeout", {"version": 1})


_file = HookFile(_spec, EVENTS)
check = _file.check


def install(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    from .command import hook_command, json_refusal
    from .hook_json import install as merge

    refuse = json_refusal(_deny("%s"))
    command = hook_command(HARNESS.value, scope, passes="0", refuse=refuse)
    ours = {
        EVENT: {"command": command, "matcher": MATCHER, "failClosed": True},
        SHELL_EVENT: {"command": command, "failClosed": True},
    }
    return merge(_spec(), scope, top, backup_dir, ours)


uninstall = _file.uninstall


entries = _file.entries


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    base = {
        "conversation_id": "lac-probe",
        "generation_id": "lac-probe",
        "workspace_roots": [str(top)],
    }
    return [
        {
            **base,
            "hook_event_name": EVENT,
            "tool_name": "Write",
            "tool_input": {"file_path": str(top / rel), "contents": ""},
        },
        {
            **base,
            "hook_event_name": SHELL_EVENT,
            "command": f"sed -i s/a/b/ {rel}",
            "cwd": str(top),
        },
    ]


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """``permission`` deny blocks; under failClosed, so does a failure (any
    other exit, or output that is not JSON), without a reason for the agent."""
    if code != 0:
        return True, f"exit {code}: the hook failed (failClosed)"
    try:
        said = json.loads(stdout)
    except ValueError:
        return True, "no JSON answer (failClosed)"
    if isinstance(said, dict) and said.get("permission") == "deny":
        return True, str(said.get("agent_message", ""))
    return False, ""


# No field of its answer to an allowed call reaches the model: a refusal says a notice.
tell = no_channel
