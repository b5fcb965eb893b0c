"""Windsurf's Cascade (https://docs.windsurf.com/windsurf/cascade/hooks;
Windsurf is not on a package registry, so its documentation is what is
followed).

- file: ``.windsurf/hooks.json`` in the workspace root (or
  ``~/.codeium/windsurf/hooks.json``): ``{"hooks": {EVENT: [{"command": C,
  "show_output": B}]}}``, run from the workspace root (``working_directory``
  unset).
- stdin: ``agent_action_name``, ``trajectory_id``, ``execution_id``,
  ``timestamp``, ``tool_info``. ``pre_write_code``: ``tool_info.file_path``
  (and ``edits``); ``pre_run_command``: ``tool_info.command_line`` and
  ``cwd``.
- refusal: exit 2, the message on stderr (the agent sees it); any other
  exit lets the action through, so the installed command turns every failure
  into exit 2. Allow: exit 0. There is no fail-closed setting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .hook_json import HookFile
from .protocol import (
    EditRequest,
    Harness,
    MalformedPayload,
    SettingsChange,
    exit_2,
    exit_2_render,
    no_channel,
    obj,
    text,
)

if TYPE_CHECKING:
    from pathlib import Path

HARNESS = Harness.WINDSURF
PROJECT_DIR: str | None = None
EVENT = "pre_write_code"
SHELL_EVENT = "pre_run_command"
SCOPES = {"project": ".windsurf/hooks.json", "user": "~/.codeium/windsurf/hooks.json"}
EVENTS = {EVENT, SHELL_EVENT}


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    event = data.get("agent_action_name")
    info = obj(data.get("tool_info"), "tool_info")
    if event == EVENT:
        request = EditRequest(HARNESS, default_cwd)
        request.tool = EVENT
        request.paths = [text(info.get("file_path"), "tool_info.file_path")]
        return request
    if event == SHELL_EVENT:
        request = EditRequest(HARNESS, text(info.get("cwd", default_cwd), "tool_info.cwd"))
        request.tool = SHELL_EVENT
        request.shell = text(info.get("command_line"), "tool_info.command_line")
        return request
    if isinstance(event, str) and event.startswith("pre_"):
        return EditRequest(HARNESS, default_cwd)  # reads, MCP: nothing we guard
    raise MalformedPayload(f"agent_action_name is not {EVENT} or {SHELL_EVENT}")


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

    entry = {"command": hook_command(HARNESS.value, scope), "show_output": True}
    return merge(_spec(), scope, top, backup_dir, {EVENT: entry, SHELL_EVENT: entry})


uninstall = _file.uninstall


entries = _file.entries


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    base = {
        "trajectory_id": "lac-probe",
        "execution_id": "lac-probe",
        "timestamp": "1970-01-01T00:00:00Z",
    }
    return [
        {**base, "agent_action_name": EVENT, "tool_info": {"file_path": str(top / rel)}},
        {
            **base,
            "agent_action_name": SHELL_EVENT,
            "tool_info": {"command_line": f"sed -i s/a/b/ {rel}", "cwd": str(top)},
        },
    ]


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """Exit 2 blocks, stderr the message; every other exit lets it through."""
    from .session_probe import first_line

    return (True, first_line(stderr)) if code == 2 else (False, "")


# No field of its answer to an allowed call reaches the model: a refusal says a notice.
tell = no_channel
