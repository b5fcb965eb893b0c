"""Codex CLI, as ``@openai/codex`` 0.171.0 ships it (its Rust binary's
embedded schemas ``pre-tool-use.command.input`` / ``.output`` and messages;
openai/codex ``codex-rs/hooks/src/events/pre_tool_use.rs`` and
``engine/discovery.rs``, which match), and as it runs a hook.

- file: ``.codex/hooks.json`` of the project (or ``~/.codex/hooks.json``),
  Claude Code's shape: ``{"hooks": {"PreToolUse": [{"matcher": REGEX,
  "hooks": [{"type": "command", "command": C, "timeout": S}]}]}}``
  (``timeout`` in seconds, default 600). It runs ``$SHELL -c C``, cwd the
  call's directory; no variable names the project.
- stdin: ``session_id``, ``turn_id``, ``transcript_path``, ``cwd``,
  ``hook_event_name`` (``"PreToolUse"``), ``model``, ``permission_mode``,
  ``tool_name``, ``tool_input``, ``tool_use_id``. The shell tool is
  ``Bash`` ``{"command"}``, ``cwd`` the call's ``workdir`` resolved; the
  patch tool ``apply_patch`` ``{"command": PATCH}``, its paths relative to
  ``cwd``: every ``*** Add File:``, ``*** Delete File:``, ``*** Update
  File:`` and ``*** Move to:`` header (read with its whitespace trimmed, as
  Codex reads them) is a path it writes.
- refusal: exit 2 with the reason on stderr (the model is told "Command
  blocked by PreToolUse hook: REASON"); exit 2 with an empty stderr is no
  block. ``permissionDecision`` ``allow`` and ``ask`` are refused as
  unsupported (the call proceeds), so we never answer either: letting a call
  through is exit 0, nothing on stdout. Every other exit, a timeout or
  output that is not JSON lets the call through: there is no fail-closed
  setting, so the installed command turns every failure into exit 2.
- trust: Codex reads a project's ``.codex/`` only when the project is
  trusted, and runs a project hook only once that hook is trusted (``/hooks``
  in codex); an untrusted one is skipped without a word.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .hook_json import HookFile
from .protocol import (
    EditRequest,
    Harness,
    SettingsChange,
    exit_2,
    exit_2_render,
    no_channel,
    parse_tool_call,
)

if TYPE_CHECKING:
    from pathlib import Path

HARNESS = Harness.CODEX
PROJECT_DIR: str | None = None
EVENT = "PreToolUse"
PATCH_TOOL = "apply_patch"
SHELL_TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {"Bash": ("command", ())}
MATCHER = "^(apply_patch|Bash)$"
TIMEOUT = 30  # seconds
SCOPES = {"project": ".codex/hooks.json", "user": "~/.codex/hooks.json"}
EVENTS = {EVENT}
HEADERS = ("*** Add File:", "*** Delete File:", "*** Update File:", "*** Move to:")


def patch_paths(patch: str) -> list[str]:
    """Every path an apply_patch envelope writes: each file header, and both
    sides of a move."""
    found: list[str] = []
    for line in patch.splitlines():
        line = line.strip()
        for header in HEADERS:
            if line.startswith(header):
                path = line[len(header) :].strip()
                if path and path not in found:
                    found.append(path)
    return found


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    from .protocol import MalformedPayload, obj, text

    if data.get("tool_name") == PATCH_TOOL:
        request = parse_tool_call(data, HARNESS, default_cwd, {}, {})
        patch = text(obj(data.get("tool_input"), "tool_input").get("command"), "tool_input.command")
        request.paths = patch_paths(patch)
        if not request.paths:
            raise MalformedPayload("tool_input.command is a patch naming no file")
        return request
    request = parse_tool_call(data, HARNESS, default_cwd, {}, SHELL_TOOLS)
    if request.shell is not None and "*** Begin Patch" in request.shell:
        request.paths = patch_paths(request.shell)  # apply_patch run from the shell
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


entries = _file.entries


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    base = {
        "session_id": "lac-probe",
        "turn_id": "lac-probe",
        "transcript_path": None,
        "cwd": str(top),
        "hook_event_name": EVENT,
        "model": "lac-probe",
        "permission_mode": "default",
        "tool_use_id": "lac-probe",
    }
    patch = f"*** Begin Patch\n*** Update File: {rel}\n@@\n-a\n+b\n*** End Patch\n"
    return [
        {**base, "tool_name": PATCH_TOOL, "tool_input": {"command": patch}},
        {**base, "tool_name": "Bash", "tool_input": {"command": f"sed -i s/a/b/ {rel}"}},
    ]


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """Exit 2 with something on stderr blocks; so does exit 0 with
    permissionDecision deny, or the older decision block."""
    from .session_probe import first_line

    if code == 2:
        return (True, first_line(stderr)) if stderr.strip() else (False, "")
    if code != 0:
        return False, ""
    try:
        said = json.loads(stdout) if stdout.strip() else {}
    except ValueError:
        return False, ""
    if not isinstance(said, dict):
        return False, ""
    specific = said.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
        return True, str(specific.get("permissionDecisionReason", ""))
    if said.get("decision") == "block":
        return True, str(said.get("reason", ""))
    return False, ""


# No field of its answer to an allowed call reaches the model: a refusal says a notice.
tell = no_channel
