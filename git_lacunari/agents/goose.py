"""Goose (block/goose: ``crates/goose/src/hooks/mod.rs``, ``types.rs`` and
``config.rs``, ``crates/goose/src/plugins/discovery.rs``; Goose ships as a
native binary, not on npm).

- file: a project plugin, ``.agents/plugins/git-lacunari/hooks/hooks.json``
  (every directory under ``.agents/plugins/`` is a plugin unless a
  settings file disables it), in Claude Code's shape: ``{"hooks":
  {"PreToolUse": [{"matcher": TOOL, "hooks": [{"type": "command", "command":
  C, "timeout": S}]}]}}``. The matcher is a tool's exact name
  (``matches_tool``), so each tool gets its group. A plugin's hooks run with
  ``PLUGIN_ROOT`` the plugin's directory. ``"on_failure": "block"`` asks a
  release that knows it to block when the hook itself fails; the installed
  command turns every failure into exit 2 for the others.
- stdin (``HookInvocation``): ``hook_event_name`` (``"PreToolUse"``),
  ``session_id``, ``cwd``, ``tool_name``, ``tool_input``. The file tool
  ``developer__text_editor`` ``{"command": "write" | "str_replace" |
  "insert" | ..., "path"}``; the shell ``developer__shell`` ``{"command"}``
  (``working_dir`` when it runs elsewhere).
- refusal (``parse_command_output``): exit 2, stderr the reason; exit 0
  with ``{"decision": "block", "reason": R}`` too. Any other exit, a signal
  or a timeout fails open. Allow: exit 0, nothing on stdout (text on stdout
  would become context for the agent).
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

HARNESS = Harness.GOOSE
PROJECT_DIR: str | None = None
EVENT = "PreToolUse"
FILE_TOOLS = {"developer__text_editor": "path"}
SHELL_TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "developer__shell": ("command", ("working_dir",))
}
PLUGIN = ".agents/plugins/git-lacunari"
SCOPES = {"project": f"{PLUGIN}/hooks/hooks.json"}
EVENTS = {EVENT}
TIMEOUT = 30  # seconds
READ_ONLY = ("view",)  # the text editor's commands that write nothing


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    request = parse_tool_call(data, HARNESS, default_cwd, FILE_TOOLS, SHELL_TOOLS)
    tool_input = data.get("tool_input")
    if request.paths and isinstance(tool_input, dict) and tool_input.get("command") in READ_ONLY:
        request.paths = []
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

    command = hook_command(HARNESS.value, scope)
    groups = [
        {
            "matcher": tool,
            "hooks": [
                {"type": "command", "command": command, "timeout": TIMEOUT, "on_failure": "block"}
            ],
        }
        for tool in (*FILE_TOOLS, *SHELL_TOOLS)
    ]
    return merge(_spec(), scope, top, backup_dir, {EVENT: groups})


uninstall = _file.uninstall


def entries(top: Path | None) -> tuple[list[Installed], list[str]]:
    from .hook_json import entries as found

    if top is None:
        return [], []
    root = str(top / PLUGIN)
    every, troubles = found(_spec(), top, EVENTS, (("PLUGIN_ROOT", root),))
    return [e._replace(where=root) for e in dict.fromkeys(every)], troubles


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    base = {"hook_event_name": EVENT, "session_id": "lac-probe", "cwd": str(top)}
    return [
        {**base, "tool_name": "developer__text_editor",
         "tool_input": {"command": "write", "path": str(top / rel), "file_text": ""}},
        {**base, "tool_name": "developer__shell",
         "tool_input": {"command": f"sed -i s/a/b/ {rel}"}},
    ]  # fmt: skip


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """Exit 2 blocks (stderr the reason), as does exit 0 with decision block;
    any other exit fails open."""
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
    if isinstance(said, dict) and said.get("decision") == "block":
        return True, str(said.get("reason", ""))
    return False, ""


# No field of its answer to an allowed call reaches the model: a refusal says a notice.
tell = no_channel
